/**
 * A pass-through proxy in front of a Kubernetes API that can expire a forwarder's watch, as a
 * real API server does once its watch cache has moved past the watch's resourceVersion: the open
 * watch streams of a resource get an `ERROR` event with a 410 `Expired` Status and end, and the
 * next watch of it (resuming from the old resourceVersion) gets the same, so the informer has
 * to list afresh.
 */
import { createServer, request, type Server, type ServerResponse } from 'node:http';
import { listen } from '../../lib/http/index.js';

const EXPIRED = `${JSON.stringify({
  type: 'ERROR',
  object: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'too old resource version (expired by the bench)', reason: 'Expired', code: 410 },
})}\n`;

export interface WatchExpiry {
  url: string;
  /** Expires the watches of the resource whose path ends with `resource` (e.g. `persistentvolumeclaims`); how many streams were open. */
  expire(resource: string): number;
  /** Watch requests answered 410 so far. */
  expired: number;
  stop(): Promise<void>;
}

export async function startWatchExpiry(kubeUrl: string): Promise<WatchExpiry> {
  const upstreamUrl = new URL(kubeUrl);
  /** Open watch streams: their resource, and how to cut them from upstream. */
  const open = new Map<ServerResponse, { resource: string; cut(): void }>();
  const pending = new Set<string>();
  let expired = 0;
  const end = (res: ServerResponse) => {
    expired++;
    if (!res.headersSent) res.writeHead(200, { 'content-type': 'application/json' });
    res.end(EXPIRED);
  };
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const watching = url.searchParams.get('watch') === 'true' || url.searchParams.get('watch') === '1';
    const resource = url.pathname.split('/').pop() ?? '';
    if (watching && pending.delete(resource)) return end(res);
    let cut = () => {};
    const up = request({ host: upstreamUrl.hostname, port: upstreamUrl.port, method: req.method, path: req.url, headers: req.headers }, (upRes) => {
      res.writeHead(upRes.statusCode ?? 502, upRes.headers);
      upRes.pipe(res);
      cut = () => upRes.unpipe(res);
    });
    up.on('error', () => res.destroy());
    if (watching) open.set(res, { resource, cut: () => cut() });
    res.on('close', () => {
      open.delete(res);
      up.destroy();
    });
    req.pipe(up);
  });
  const listening = await listen(server, 0, '127.0.0.1');
  return {
    url: listening.url,
    expire(resource) {
      pending.add(resource);
      let streams = 0;
      for (const [res, stream] of [...open]) {
        if (stream.resource !== resource) continue;
        streams++;
        open.delete(res);
        stream.cut();
        end(res);
      }
      return streams;
    },
    get expired() {
      return expired;
    },
    stop: () => listening.close(),
  };
}
