/**
 * The control plane's processes: each started in a process group of its own (so that what it
 * starts goes with it), its output in a log file, stopped with SIGTERM to the group and
 * SIGKILL after a grace. A group still alive when this Node process exits is killed then too,
 * so a test that dies leaves no API server behind.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { openSync, closeSync } from 'node:fs';
import { createServer } from 'node:net';

export interface PlaneProcess {
  readonly name: string;
  readonly pid: number;
  readonly log: string;
  /** Resolves with the exit code (or signal) once the process has exited. */
  readonly exited: Promise<string>;
  /** Whether it has exited. */
  done(): boolean;
  stop(graceMs?: number): Promise<void>;
}

const running = new Set<number>();
let exitHookInstalled = false;

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // Gone already.
  }
}

export function startProcess(name: string, binary: string, args: string[], log: string, env: NodeJS.ProcessEnv = {}): PlaneProcess {
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.on('exit', () => {
      for (const pid of running) killGroup(pid, 'SIGKILL');
    });
  }
  const fd = openSync(log, 'a');
  let child: ChildProcess;
  try {
    child = spawn(binary, args, { detached: true, stdio: ['ignore', fd, fd], env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env } });
  } finally {
    closeSync(fd);
  }
  const pid = child.pid;
  if (pid === undefined) throw new Error(`${name} did not start (${binary})`);
  running.add(pid);
  let finished = false;
  const exited = new Promise<string>((resolve) => {
    child.on('exit', (code, signal) => {
      finished = true;
      running.delete(pid);
      resolve(signal ? `signal ${signal}` : `exit code ${code}`);
    });
    child.on('error', (err) => {
      finished = true;
      running.delete(pid);
      resolve(`failed to start: ${err.message}`);
    });
  });
  return {
    name,
    pid,
    log,
    exited,
    done: () => finished,
    async stop(graceMs = 5_000) {
      if (finished) return;
      killGroup(pid, 'SIGTERM');
      const timer = setTimeout(() => killGroup(pid, 'SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
      // What it started, should it have: the group goes whole.
      killGroup(pid, 'SIGKILL');
    },
  };
}

/**
 * A port free on `host` now: the kernel's pick for 0, else `port` itself, which fails with
 * Node's EADDRINUSE when another process holds it. The process given it binds it a moment later.
 */
export async function freePort(host: string, port = 0): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, host, () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}
