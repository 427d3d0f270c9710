/**
 * Health and metrics: `/healthz` (alive), `/readyz` (caches synced, the backend serves this
 * forwarder's contract and has not refused every request for VOLHOOK_REFUSED_READY_SECONDS),
 * `/metrics` (Prometheus).
 */
import { createServer, type Server } from 'node:http';
import { listen } from '../http/index.js';
import type { Registry } from 'prom-client';

export interface HealthServer {
  port: number;
  close(): Promise<void>;
}

/** On `/readyz`, ready or not: the fingerprint of the secret the replica signs with. */
export const SIGNING_SECRET_HEADER = 'x-volhook-signing-secret';

/** Whether `/readyz` passes, and if not, the body that says why. */
export type Readiness = { ready: true } | { ready: false; reason: string };

export async function startHealthServer(options: {
  port: number;
  host?: string;
  readiness: () => Readiness;
  registry: Registry;
  /** Headers of the `/readyz` answer (the signing secret's fingerprint). */
  headers?: () => Record<string, string>;
}): Promise<HealthServer> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD' }).end();
      return;
    }
    if (path === '/healthz') {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n');
    } else if (path === '/readyz') {
      const readiness = options.readiness();
      res.writeHead(readiness.ready ? 200 : 503, { 'content-type': 'text/plain; charset=utf-8', ...options.headers?.() }).end(readiness.ready ? 'ok\n' : `${readiness.reason}\n`);
    } else if (path === '/metrics') {
      options.registry.metrics().then(
        (text) => res.writeHead(200, { 'content-type': options.registry.contentType }).end(text),
        (err: unknown) => res.writeHead(500, { 'content-type': 'text/plain' }).end(String(err)),
      );
    } else {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
    }
  });
  const { port, close } = await listen(server, options.port, options.host);
  return { port, close };
}
