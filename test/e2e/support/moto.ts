/**
 * moto's EC2 server as a second, independent EC2 for the end-to-end tests: started on
 * 127.0.0.1 on a free port, awaited, and killed afterwards.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { freePort, waitForHttp } from './process.js';

export interface Moto {
  url: string;
  stop(): Promise<void>;
  /** What moto printed, for failure messages. */
  output(): string;
}

export async function startMoto(): Promise<Moto> {
  const port = await freePort();
  const child: ChildProcess = spawn('moto_server', ['-H', '127.0.0.1', '-p', String(port)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-20_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    }
  };
  try {
    await waitForHttp(`${url}/moto-api/`, { what: `moto_server on ${url}`, timeoutMs: 60_000, child });
  } catch (err) {
    await stop();
    throw new Error(`${(err as Error).message}\nmoto output:\n${output}`);
  }
  return { url, stop, output: () => output };
}
