/** The backend app on `@hono/node-server`, stoppable and restartable on the same port. */
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import type { Hono } from 'hono';

export interface BackendServer {
  url: string;
  port: number;
  start(): Promise<void>;
  stop(): Promise<void>;
  running(): boolean;
}

export async function startBackendServer(app: Hono, host: string, port: number): Promise<BackendServer> {
  let server: ServerType | undefined;
  let boundPort = port;

  async function start(): Promise<void> {
    if (server) return;
    const s = serve({ fetch: app.fetch, port: boundPort, hostname: host });
    await new Promise<void>((resolve, reject) => {
      s.once('listening', resolve);
      s.once('error', reject);
    });
    boundPort = (s.address() as AddressInfo).port;
    server = s;
  }

  async function stop(): Promise<void> {
    const s = server;
    if (!s) return;
    server = undefined;
    await new Promise<void>((resolve) => {
      s.close(() => resolve());
      // Keep-alive sockets would hold close() open: a stopped backend must refuse at once.
      if ('closeAllConnections' in s) s.closeAllConnections();
    });
  }

  await start();
  return {
    get url() {
      return `http://${host}:${boundPort}`;
    },
    get port() {
      return boundPort;
    },
    start,
    stop,
    running: () => server !== undefined,
  };
}
