/**
 * Listening and stopping, once for every HTTP server volhook runs: the EC2 simulator, the
 * local Kubernetes API, the local backend and the forwarder's health server.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Listening {
  /** `http://host:port`, an IPv6 host in brackets; `localhost` when listening on every interface. */
  url: string;
  /** The port bound: the free one picked for port 0. */
  port: number;
  /**
   * Stops listening and ends every connection at once — keep-alive and in-flight ones (open
   * watches) alike — so that close() never waits on a client, and a stopped server refuses
   * at once. Closing again returns the first close's promise.
   */
  close(): Promise<void>;
}

/**
 * Starts `server` listening on `host:port` (0 picks a free port; no host: every interface).
 * Rejects when the port cannot be bound, e.g. with EADDRINUSE.
 */
export async function listen(server: Server, port: number, host?: string): Promise<Listening> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const bound = (server.address() as AddressInfo).port;
  const urlHost = host === undefined ? 'localhost' : host.includes(':') ? `[${host}]` : host;
  let closed: Promise<void> | undefined;
  return {
    url: `http://${urlHost}:${bound}`,
    port: bound,
    close: () =>
      (closed ??= new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      })),
  };
}
