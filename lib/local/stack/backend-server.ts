/** The backend app on `@hono/node-server`, stoppable and restartable on the same port. */
import { createServer } from 'node:http';
import { getRequestListener } from '@hono/node-server';
import type { Hono } from 'hono';
import { listen, type Listening } from '../../http/index.js';

export interface BackendServer {
  url: string;
  port: number;
  start(): Promise<void>;
  stop(): Promise<void>;
  running(): boolean;
}

export async function startBackendServer(app: Hono, host: string, port: number): Promise<BackendServer> {
  const onRequest = getRequestListener(app.fetch, { hostname: host });
  let listening: Listening | undefined;
  let boundPort = port;

  async function start(): Promise<void> {
    if (listening) return;
    listening = await listen(createServer(onRequest), boundPort, host);
    boundPort = listening.port;
  }

  async function stop(): Promise<void> {
    const l = listening;
    if (!l) return;
    listening = undefined;
    // Keep-alive sockets are ended too: a stopped backend must refuse at once.
    await l.close();
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
    running: () => listening !== undefined,
  };
}
