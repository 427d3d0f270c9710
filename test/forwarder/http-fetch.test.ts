/** httpFetch (lib/forwarder/http-fetch.ts): fetch's shape over node:http, as postReconcile uses it. */
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listen } from '../../lib/http/index.js';
import { postReconcile, BackendRequestError } from '../../lib/forwarder/backend-client.js';
import { httpFetch } from '../../lib/forwarder/http-fetch.js';

let server: Server;
let base: string;
let close: () => Promise<void>;
const seen: { method?: string; headers: Record<string, unknown>; body: string }[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      seen.push({ method: req.method, headers: req.headers, body });
      if (req.url?.startsWith('/slow')) return void setTimeout(() => res.end('late'), 2000);
      if (req.url === '/empty') return void res.writeHead(204).end();
      res.writeHead(req.url === '/teapot' ? 418 : 200, { 'content-type': 'application/json', 'x-extra': 'yes' }).end(JSON.stringify({ echo: body }));
    });
  });
  ({ close } = await listen(server, 0, '127.0.0.1'));
  const address = server.address();
  base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
});
afterAll(() => close());

describe('httpFetch', () => {
  const fetchLike = httpFetch();

  it('a POST -> method, headers and body sent; status, headers and body answered', async () => {
    const res = await fetchLike(`${base}/x`, { method: 'POST', headers: { 'content-type': 'application/json', 'webhook-id': 'msg_1' }, body: '{"a":1}' });
    expect(res.status).toBe(200);
    expect(res.ok).toBe(true);
    expect(res.headers.get('x-extra')).toBe('yes');
    expect(await res.json()).toEqual({ echo: '{"a":1}' });
    expect(seen.at(-1)).toMatchObject({ method: 'POST', body: '{"a":1}', headers: { 'webhook-id': 'msg_1', 'content-type': 'application/json' } });
  });

  it('an error status -> a response that is not ok; 204 -> an empty body', async () => {
    const res = await fetchLike(`${base}/teapot`, { method: 'GET' });
    expect(res.status).toBe(418);
    expect(res.ok).toBe(false);
    expect(await (await fetchLike(`${base}/empty`, { method: 'GET' })).text()).toBe('');
  });

  it('no answer in time -> the timeout reason (postReconcile reports a timeout); a refused connection -> "fetch failed" with its cause', async () => {
    const started = Date.now();
    await expect(fetchLike(`${base}/slow`, { method: 'GET', signal: AbortSignal.timeout(100) })).rejects.toMatchObject({ name: 'TimeoutError' });
    expect(Date.now() - started).toBeLessThan(1500);
    const refused = await fetchLike('http://127.0.0.1:1/', { method: 'GET' }).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(TypeError);
    expect(String((refused as Error).cause)).toMatch(/ECONNREFUSED/);
  });

  it('a body that is not a string -> refused, nothing sent', async () => {
    const before = seen.length;
    await expect(fetchLike(`${base}/x`, { method: 'POST', body: new Uint8Array([1]) })).rejects.toThrow(/only string bodies/);
    expect(seen.length).toBe(before);
  });

  it('through postReconcile -> a slow backend is a timeout BackendRequestError', async () => {
    const err = await postReconcile({ apiUrl: `${base}/slow`, clusterId: 'c', secret: () => 'whsec_dGVzdC1zZWNyZXQtb2YtYXQtbGVhc3QtMjQtYnl0ZXM=', fetch: fetchLike, timeoutMs: 100 }, []).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BackendRequestError);
    expect((err as BackendRequestError).kind).toBe('timeout');
  });
});
