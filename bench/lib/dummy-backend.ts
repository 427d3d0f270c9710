/**
 * A stand-in backend on loopback that answers `done` with no writes for every item, so the
 * forwarder can be loaded with objects of ours without EC2. It does not check signatures.
 */
import { createServer } from 'node:http';
import { itemKey, type ItemInput } from '../../lib/contract/index.js';
import { listen } from '../../lib/http/index.js';

export interface DummyBackend {
  url: string;
  /** Items answered so far. */
  readonly items: number;
  readonly requests: number;
  close(): Promise<void>;
}

export async function startDummyBackend(): Promise<DummyBackend> {
  let items = 0;
  let requests = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      // The check each forwarder replica makes before it is ready (lib/contract/check.ts).
      if (req.url?.endsWith('/check')) {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ clusterId: req.url.split('/')[3], accepted: true }));
        return;
      }
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { items: ItemInput[] };
        requests++;
        items += body.items.length;
        const results = body.items.map((item) => ({ key: itemKey(item), outcome: 'done', writes: [] }));
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ results }));
      } catch (err) {
        res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { code: 'BadRequest', message: String(err) } }));
      }
    });
  });
  const { url, close } = await listen(server, 0, '127.0.0.1');
  return {
    url,
    get items() {
      return items;
    },
    get requests() {
      return requests;
    },
    close,
  };
}
