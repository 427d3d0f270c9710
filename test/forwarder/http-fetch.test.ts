/** httpFetch (lib/forwarder/http-fetch.ts): fetch's shape over node:http, as postReconcile uses it. */
import { createServer, request as httpRequest, type Server } from 'node:http';
import { gunzipSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listen } from '../../lib/http/index.js';
import { postReconcile, BackendRequestError } from '../../lib/forwarder/backend-client.js';
import { httpFetch } from '../../lib/forwarder/http-fetch.js';

let server: Server;
let base: string;
let close: () => Promise<void>;
const seen: { method?: string; headers: Record<string, unknown>; body: string; bytes: Buffer }[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const bytes = Buffer.concat(chunks);
      const body = bytes.toString('utf8');
      seen.push({ method: req.method, headers: req.headers, body, bytes });
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

  it('a byte body (a gzip\'d one) -> sent byte for byte; a body of another kind -> refused, nothing sent', async () => {
    const gzipped = gzipSync('{"items":[]}');
    await fetchLike(`${base}/x`, { method: 'POST', headers: { 'content-encoding': 'gzip' }, body: new Uint8Array(gzipped) });
    expect(seen.at(-1)?.bytes.equals(gzipped)).toBe(true);
    expect(gunzipSync(seen.at(-1)!.bytes).toString()).toBe('{"items":[]}');
    const before = seen.length;
    await expect(fetchLike(`${base}/x`, { method: 'POST', body: new Blob(['{}']) })).rejects.toThrow(/only string and byte/);
    expect(seen.length).toBe(before);
  });

  it('through postReconcile -> a slow backend is a timeout BackendRequestError', async () => {
    const err = await postReconcile({ apiUrl: `${base}/slow`, clusterId: 'c', secret: () => 'whsec_dGVzdC1zZWNyZXQtb2YtYXQtbGVhc3QtMjQtYnl0ZXM=', fetch: fetchLike, timeoutMs: 100 }, []).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BackendRequestError);
    expect((err as BackendRequestError).kind).toBe('timeout');
  });
});

describe('httpFetch through a proxy (HTTP_PROXY, NO_PROXY)', () => {
  let proxy: Server;
  let proxyUrl: string;
  let closeProxy: () => Promise<void>;
  const proxied: string[] = [];

  beforeAll(async () => {
    // A forwarding proxy: takes a request in absolute form, counts it, passes it on.
    proxy = createServer((req, res) => {
      proxied.push(`${req.method} ${req.url}`);
      const target = new URL(req.url ?? '/');
      const upstream = httpRequest(target, { method: req.method, headers: req.headers }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      req.pipe(upstream);
    });
    ({ close: closeProxy } = await listen(proxy, 0, '127.0.0.1'));
    const address = proxy.address();
    proxyUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  });
  afterAll(() => closeProxy());

  it('HTTP_PROXY set -> every request to the backend passes the proxy; NO_PROXY naming the backend -> none does', async () => {
    const viaProxy = httpFetch({ proxyEnv: { HTTP_PROXY: proxyUrl } });
    const before = seen.length;
    const res = await viaProxy(`${base}/x`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"p":1}' });
    expect(await res.json()).toEqual({ echo: '{"p":1}' });
    await viaProxy(`${base}/teapot`, { method: 'GET' });
    expect(proxied).toEqual([`POST ${base}/x`, `GET ${base}/teapot`]);
    expect(seen.length - before).toBe(2);

    // The control: the same proxy, with the backend's host in NO_PROXY, is bypassed.
    const bypassing = httpFetch({ proxyEnv: { HTTP_PROXY: proxyUrl, NO_PROXY: '127.0.0.1' } });
    expect((await bypassing(`${base}/x`, { method: 'POST', body: '{"p":2}' })).status).toBe(200);
    expect(proxied).toHaveLength(2);
    expect(seen.length - before).toBe(3);
  });
});
