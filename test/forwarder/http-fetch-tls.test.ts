/**
 * httpFetch over TLS (lib/forwarder/http-fetch.ts, tls.ts): an https backend with a private CA
 * reached through a CONNECT proxy, and a backend that requires a client certificate, the
 * certificate's files rotated on disk.
 */
import { createServer as createHttpServer, type IncomingMessage, type Server } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import { connect, type Socket } from 'node:net';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listen } from '../../lib/http/index.js';
import { silentLogger } from '../../lib/forwarder/index.js';
import { httpFetch } from '../../lib/forwarder/http-fetch.js';
import { openTls, tlsMaterial } from '../../lib/forwarder/tls.js';
import { createPki, type Pki } from './pki.js';

let pki: Pki;
const closers: (() => Promise<void>)[] = [];

beforeAll(() => {
  pki = createPki();
});
afterAll(async () => {
  for (const close of closers.reverse()) await close();
  pki.remove();
});

const portOf = (server: Server | HttpsServer) => {
  const address = server.address();
  return typeof address === 'object' && address ? address.port : 0;
};

/** Until `check` holds, polling; the test's own timeout bounds it. */
async function eventually(check: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise((resolve) => setTimeout(resolve, 20));
}

/** An https backend: answers the path and the client certificate's CN, remembers each request's remote port. */
async function httpsBackend(options: { requireClientCert: boolean }) {
  const seen: { path: string; remotePort: number; clientCn?: string }[] = [];
  const server = createHttpsServer(
    { ...pki.server, ca: pki.ca, requestCert: options.requireClientCert, rejectUnauthorized: options.requireClientCert },
    (req: IncomingMessage, res) => {
      const socket = req.socket as TLSSocket;
      const clientCn = options.requireClientCert ? String(socket.getPeerCertificate().subject?.CN) : undefined;
      seen.push({ path: req.url ?? '', remotePort: socket.remotePort ?? 0, ...(clientCn ? { clientCn } : {}) });
      req.resume();
      req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ path: req.url, clientCn })));
    },
  );
  const { close } = await listen(server, 0, '127.0.0.1');
  closers.push(close);
  return { url: `https://127.0.0.1:${portOf(server)}`, seen };
}

describe('httpFetch to an https backend through a CONNECT proxy (HTTPS_PROXY, NO_PROXY, VOLHOOK_CA_FILE)', () => {
  let backend: Awaited<ReturnType<typeof httpsBackend>>;
  let proxyUrl: string;
  /** Each tunnel: its target, and the local port of the proxy's own connection to it. */
  const tunnels: { target: string; upstreamPort: number }[] = [];

  beforeAll(async () => {
    backend = await httpsBackend({ requireClientCert: false });
    // A CONNECT proxy: opens a tunnel to the asked host:port, counts it, pipes both ways.
    const proxy = createHttpServer((_req, res) => res.writeHead(405).end());
    proxy.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => {
      const [host, port] = (req.url ?? '').split(':');
      const upstream = connect(Number(port), host, () => {
        tunnels.push({ target: req.url ?? '', upstreamPort: upstream.localPort ?? 0 });
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        upstream.write(head);
        upstream.pipe(client);
        client.pipe(upstream);
      });
      const end = () => (upstream.destroy(), client.destroy());
      upstream.on('error', end);
      client.on('error', end);
    });
    const { close } = await listen(proxy, 0, '127.0.0.1');
    closers.push(close);
    proxyUrl = `http://127.0.0.1:${portOf(proxy)}`;
  });

  it('HTTPS_PROXY set -> every request to the backend comes out of a tunnel of the proxy; NO_PROXY naming the backend -> none does', async () => {
    const tls = tlsMaterial({ ca: pki.ca });
    const viaProxy = httpFetch({ proxyEnv: { HTTPS_PROXY: proxyUrl }, tls: () => tls });
    for (const path of ['/a', '/b', '/c']) {
      const res = await viaProxy(`${backend.url}${path}`, { method: 'POST', body: '{}' });
      expect(await res.json()).toEqual({ path });
    }
    expect(tunnels.length).toBeGreaterThan(0);
    expect(tunnels.every((t) => t.target === backend.url.replace('https://', ''))).toBe(true);
    // The backend's view: every request arrived on a connection the proxy opened.
    const proxied = new Set(tunnels.map((t) => t.upstreamPort));
    expect(backend.seen.map((s) => s.path)).toEqual(['/a', '/b', '/c']);
    expect(backend.seen.every((s) => proxied.has(s.remotePort))).toBe(true);

    // The control: the same proxy, the backend's host in NO_PROXY -> straight to the backend.
    const tunnelsBefore = tunnels.length;
    const bypassing = httpFetch({ proxyEnv: { HTTPS_PROXY: proxyUrl, NO_PROXY: '127.0.0.1' }, tls: () => tls });
    expect((await bypassing(`${backend.url}/d`, { method: 'GET' })).status).toBe(200);
    expect(tunnels).toHaveLength(tunnelsBefore);
    expect(backend.seen.at(-1)).toMatchObject({ path: '/d' });
    expect(proxied.has(backend.seen.at(-1)!.remotePort)).toBe(false);
  });

  it('a backend requiring a client certificate, through the tunnel -> the certificate shown inside it; none shown -> refused, nothing reaches the backend', async () => {
    const mutual = await httpsBackend({ requireClientCert: true });
    const tunnelsBefore = tunnels.length;
    const refused = await httpFetch({ proxyEnv: { HTTPS_PROXY: proxyUrl }, tls: () => tlsMaterial({ ca: pki.ca }) })(`${mutual.url}/none`, { method: 'GET' }).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(TypeError);
    expect(mutual.seen).toHaveLength(0);
    const material = tlsMaterial({ ca: pki.ca, ...pki.client('through-the-tunnel') });
    const res = await httpFetch({ proxyEnv: { HTTPS_PROXY: proxyUrl }, tls: () => material })(`${mutual.url}/with`, { method: 'GET' });
    expect(await res.json()).toEqual({ path: '/with', clientCn: 'through-the-tunnel' });
    // Both attempts went through the proxy, the answered one on a tunnel it opened.
    expect(tunnels.length - tunnelsBefore).toBe(2);
    expect(new Set(tunnels.map((t) => t.upstreamPort)).has(mutual.seen[0]!.remotePort)).toBe(true);
  });

  it("the private CA not given -> refused as untrusted, naming VOLHOOK_CA_FILE, nothing reaches the backend; given -> answered", async () => {
    const before = backend.seen.length;
    const refused = await httpFetch({ proxyEnv: { HTTPS_PROXY: proxyUrl } })(`${backend.url}/untrusted`, { method: 'GET' }).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(TypeError);
    expect(String((refused as Error).cause)).toMatch(/backend's certificate is not trusted \(\w+\): give its CA in VOLHOOK_CA_FILE/);
    expect(backend.seen).toHaveLength(before);
    const tls = tlsMaterial({ ca: pki.ca });
    expect((await httpFetch({ proxyEnv: { HTTPS_PROXY: proxyUrl }, tls: () => tls })(`${backend.url}/trusted`, { method: 'GET' })).status).toBe(200);
    expect(backend.seen).toHaveLength(before + 1);
  });
});

describe('httpFetch to a backend that requires a client certificate (VOLHOOK_CLIENT_CERT_FILE, VOLHOOK_CLIENT_KEY_FILE)', () => {
  let backend: Awaited<ReturnType<typeof httpsBackend>>;

  beforeAll(async () => {
    backend = await httpsBackend({ requireClientCert: true });
  });

  it('no client certificate -> the handshake refused, in words naming the variables; a certificate of the CA -> answered', async () => {
    const refused = await httpFetch({ tls: () => tlsMaterial({ ca: pki.ca }) })(`${backend.url}/none`, { method: 'POST', body: '{}' }).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(TypeError);
    expect(String((refused as Error).cause)).toMatch(/backend refused the TLS handshake .*client certificate.*VOLHOOK_CLIENT_CERT_FILE and VOLHOOK_CLIENT_KEY_FILE/);
    expect(backend.seen).toHaveLength(0);

    const material = tlsMaterial({ ca: pki.ca, ...pki.client('cluster-a') });
    const res = await httpFetch({ tls: () => material })(`${backend.url}/with`, { method: 'POST', body: '{}' });
    expect(await res.json()).toEqual({ path: '/with', clientCn: 'cluster-a' });
  });

  it('a certificate of another CA -> refused, nothing reaches the backend', async () => {
    const other = createPki('another-ca');
    try {
      const refused = await httpFetch({ tls: () => tlsMaterial({ ca: pki.ca, ...other.client('intruder') }) })(`${backend.url}/other`, { method: 'GET' }).catch((err: unknown) => err);
      // The server's alert may come after the client saw the connection end: "socket hang up" then.
      expect(refused).toBeInstanceOf(TypeError);
      expect(backend.seen.some((s) => s.path === '/other')).toBe(false);
    } finally {
      other.remove();
    }
  });

  it('the files rotated on disk -> re-read, and the next requests show the new certificate on a new connection', async () => {
    const first = pki.client('before-rotation');
    const files = { caFile: pki.caFile, clientCertFile: join(pki.dir, 'tls.crt'), clientKeyFile: join(pki.dir, 'tls.key') };
    writeFileSync(files.clientCertFile, first.cert);
    writeFileSync(files.clientKeyFile, first.key);
    const source = await openTls(files, { pollMs: 20, logger: silentLogger });
    closers.push(async () => source.close());
    const fetchLike = httpFetch({ tls: source.current });
    const cn = async () => ((await (await fetchLike(`${backend.url}/rotate`, { method: 'GET' })).json()) as { clientCn: string }).clientCn;
    expect(await cn()).toBe('before-rotation');
    expect(await cn()).toBe('before-rotation');

    const next = pki.client('after-rotation');
    const material = source.current();
    writeFileSync(files.clientCertFile, next.cert);
    writeFileSync(files.clientKeyFile, next.key);
    await eventually(() => source.current() !== material);
    expect(await cn()).toBe('after-rotation');
  });

  it('a key that is not the certificate\'s -> refused at open, naming the files; on a reload -> the previous pair kept', async () => {
    const a = pki.client('pair-a');
    const b = pki.client('pair-b');
    const files = { clientCertFile: join(pki.dir, 'mixed.crt'), clientKeyFile: join(pki.dir, 'mixed.key') };
    writeFileSync(files.clientCertFile, a.cert);
    writeFileSync(files.clientKeyFile, b.key);
    await expect(openTls(files, { pollMs: 1000, logger: silentLogger })).rejects.toThrow(/unusable TLS files \(.*mixed\.crt, .*mixed\.key\)/);

    // The control: a matching pair opens; a half-written rotation is not taken.
    writeFileSync(files.clientKeyFile, a.key);
    const source = await openTls(files, { pollMs: 1000, logger: silentLogger });
    closers.push(async () => source.close());
    expect(source.current().cert).toBe(a.cert);
    writeFileSync(files.clientCertFile, b.cert);
    await source.reload();
    expect(source.current()).toMatchObject({ cert: a.cert, key: a.key });
    writeFileSync(files.clientKeyFile, b.key);
    await source.reload();
    expect(source.current()).toMatchObject({ cert: b.cert, key: b.key });
  });
});
