/**
 * `npm run offline` (serverless-offline: API Gateway's routing as it models it, the function's
 * bundle run in-process) on free ports of 127.0.0.1, as a test starts and stops it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = fileURLToPath(new URL('../../..', import.meta.url));

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

export interface Offline {
  child: ChildProcess;
  baseUrl: string;
  output: () => string;
  workFolder: string;
}

export interface OfflineOptions {
  /** A directory of the test's own: the (absent) AWS credentials and config files are named in it. */
  dir: string;
  registryFile: string;
  /** More environment for the process (AWS_* and VOLHOOK_* of the test's own are never passed). */
  env?: Record<string, string>;
  /** Stage params, as `--param=key=value`. */
  params?: Record<string, string>;
}

/** `npm run offline` with `registryFile`, resolved once it says "Server ready". */
export async function startOffline(options: OfflineOptions): Promise<Offline> {
  const [httpPort, lambdaPort] = [await freePort(), await freePort()];
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('AWS_') && !k.startsWith('VOLHOOK_')));
  const workFolder = `.esbuild/test-offline-${process.pid}-${Date.now()}-${httpPort}`;
  const params = Object.entries(options.params ?? {}).map(([key, value]) => `--param=${key}=${value}`);
  const child = spawn('npm', ['run', 'offline', ...(params.length > 0 ? ['--', ...params] : [])], {
    cwd: repoRoot,
    detached: true, // its own process group, so the whole tree can be stopped
    env: {
      ...env,
      AWS_SHARED_CREDENTIALS_FILE: join(options.dir, 'no-credentials'),
      AWS_CONFIG_FILE: join(options.dir, 'no-config'),
      VOLHOOK_REGISTRY_FILE: options.registryFile,
      VOLHOOK_OFFLINE_PORT: String(httpPort),
      VOLHOOK_OFFLINE_LAMBDA_PORT: String(lambdaPort),
      VOLHOOK_ESBUILD_WORK_FOLDER: workFolder,
      ...options.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const offline: Offline = { child, baseUrl: `http://127.0.0.1:${httpPort}`, output: () => output, workFolder };
  try {
    await new Promise<void>((resolve, reject) => {
      const onData = (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes('Server ready')) resolve();
      };
      child.stdout!.on('data', onData);
      child.stderr!.on('data', onData);
      child.once('exit', (code) => reject(new Error(`npm run offline exited with ${code}:\n${output}`)));
    });
  } catch (err) {
    await stopOffline(offline);
    throw err;
  }
  return offline;
}

export async function stopOffline(offline: Offline | undefined): Promise<void> {
  if (!offline) return;
  const { child } = offline;
  if (child.pid && child.exitCode === null) {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    process.kill(-child.pid, 'SIGINT');
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 10_000))]);
    if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid, 'SIGKILL');
  }
  // serverless-esbuild leaves its work folder behind when offline is interrupted.
  rmSync(join(repoRoot, offline.workFolder), { recursive: true, force: true });
}
