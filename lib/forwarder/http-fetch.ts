/**
 * The forwarder's requests to the backend over `node:http` / `node:https`, shaped as `fetch`
 * (the `FetchLike` the backend client takes). Why not the global `fetch`: on Node 24 its
 * first use costs the process ~38 MiB of resident memory for good (measured: 100 POSTs of
 * 100 KB, 96 MiB RSS with `fetch`, 64 MiB with `node:http`), a third of the forwarder's
 * budget; `node:http` does the same round trip for ~5 MiB. Connections are kept alive.
 *
 * `HTTPS_PROXY`, `HTTP_PROXY` and `NO_PROXY` (either case) are honoured as Node's agents read
 * them (`proxyEnv`, Node 24): a request to an https backend goes through a CONNECT tunnel, one
 * to an http backend to the proxy in absolute form. Only these requests: the Kubernetes API
 * client (kube/rest.ts) has agents of its own and never uses the proxy.
 *
 * `tls` (tls.ts) gives the CA bundle and client certificate of https requests, also through a
 * tunnel; when it hands out new material (a rotated Secret) the next request gets a new agent
 * and the old one's idle connections are closed, those in flight finishing on the old
 * certificate. A TLS failure's cause says what to fix (`tlsProblem`).
 */
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { FetchLike } from './backend-client.js';
import { tlsProblem, type TlsMaterial } from './tls.js';

export interface HttpFetchOptions {
  /** Where `HTTPS_PROXY`, `HTTP_PROXY` and `NO_PROXY` are read; default `process.env`. */
  proxyEnv?: NodeJS.ProcessEnv;
  /** The TLS material now (tls.ts's `current`); default Node's roots, no client certificate. */
  tls?: () => TlsMaterial;
}

export function httpFetch(options: HttpFetchOptions = {}): FetchLike {
  const proxyEnv = options.proxyEnv ?? process.env;
  const tls = options.tls ?? (() => NO_TLS);
  const httpsFor = (material: TlsMaterial) => ({ material, agent: new HttpsAgent({ keepAlive: true, proxyEnv, ...material }) });
  const httpAgent = new HttpAgent({ keepAlive: true, proxyEnv });
  let https = httpsFor(tls());
  const httpsAgent = (): HttpsAgent => {
    const material = tls();
    if (material !== https.material) {
      retire(https.agent);
      https = httpsFor(material);
    }
    return https.agent;
  };
  const agents = { 'http:': () => httpAgent, 'https:': httpsAgent };
  return (url, init) =>
    new Promise<Response>((resolve, reject) => {
      const target = new URL(url);
      const protocol = target.protocol as keyof typeof agents;
      if (!(protocol in agents)) return reject(new TypeError(`unsupported protocol ${target.protocol}`));
      const body = init.body ?? undefined;
      if (body !== undefined && typeof body !== 'string' && !(body instanceof Uint8Array)) return reject(new TypeError('only string and byte (gzip\'d) bodies are sent'));
      const signal = init.signal ?? undefined;
      if (signal?.aborted) return reject(signal.reason);
      const send = protocol === 'https:' ? httpsRequest : httpRequest;
      const headers = Object.fromEntries(new Headers(init.headers).entries());
      const req = send(target, { method: init.method ?? 'GET', headers, agent: agents[protocol]() }, (res: IncomingMessage) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', fail);
        res.on('end', () => {
          signal?.removeEventListener('abort', onAbort);
          const responseHeaders = new Headers();
          for (const [name, value] of Object.entries(res.headers)) {
            if (value !== undefined) responseHeaders.set(name, Array.isArray(value) ? value.join(', ') : value);
          }
          const status = res.statusCode ?? 0;
          const body = status === 204 || status === 304 ? null : Buffer.concat(chunks);
          resolve(new Response(body, { status, statusText: res.statusMessage ?? '', headers: responseHeaders }));
        });
      });
      function fail(err: unknown): void {
        signal?.removeEventListener('abort', onAbort);
        const problem = tlsProblem(err);
        const cause = problem === undefined ? err : new Error(problem, { cause: err });
        reject(signal?.aborted ? signal.reason : new TypeError('fetch failed', { cause }));
      }
      function onAbort(): void {
        req.destroy(signal?.reason instanceof Error ? signal.reason : new Error('aborted'));
      }
      signal?.addEventListener('abort', onAbort, { once: true });
      req.on('error', fail);
      req.end(body);
    });
}

const NO_TLS: TlsMaterial = {};

/** An agent replaced: idle connections closed now, those in use closed when their request ends. */
function retire(agent: HttpsAgent): void {
  agent.keepSocketAlive = () => false;
  for (const sockets of Object.values(agent.freeSockets)) for (const socket of sockets ?? []) socket.destroy();
}
