/** Child processes for the end-to-end tests: free ports, waiting for an HTTP endpoint. */
import type { ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { waitFor } from './wait.js';

/** A port free on 127.0.0.1 right now (the OS picks it; it is released at once). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Polls `url` until it answers with any HTTP status < 500; fails early if `child` exits. */
export async function waitForHttp(url: string, options: { what: string; timeoutMs?: number; child?: ChildProcess }): Promise<void> {
  await waitFor(
    async () => {
      const { child } = options;
      if (child && (child.exitCode !== null || child.signalCode !== null)) {
        throw new ExitedError(`exited early (code ${child.exitCode}, signal ${child.signalCode})`);
      }
      const res = await fetch(url, { signal: AbortSignal.timeout(2_000) });
      await res.arrayBuffer();
      return res.status;
    },
    (status) => status < 500,
    { what: options.what, timeoutMs: options.timeoutMs ?? 60_000, intervalMs: 200 },
  );
}

class ExitedError extends Error {
  override readonly name = 'ExitedError';
}
