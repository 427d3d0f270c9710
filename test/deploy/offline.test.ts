/**
 * `npm run offline` serves the same API through serverless-offline, with no AWS credentials:
 * registrations come from a local file, and a request needing no EC2 call is answered.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sign } from '../../lib/contract/index.js';
import { SECRET_C1 } from '../app/harness.js';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
let child: ChildProcess;
let baseUrl: string;
let output = '';
const workFolder = `.esbuild/test-offline-${process.pid}-${Date.now()}`;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'volhook-offline-'));
  const registryFile = join(dir, 'clusters.json');
  writeFileSync(registryFile, JSON.stringify({ clusters: { c1: { clusterId: 'c1', secrets: [SECRET_C1], region: 'us-east-1' } } }));
  const [httpPort, lambdaPort] = [await freePort(), await freePort()];
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('AWS_') && !k.startsWith('VOLHOOK_')));
  child = spawn('npm', ['run', 'offline'], {
    cwd: repoRoot,
    detached: true, // its own process group, so the whole tree can be stopped
    env: {
      ...env,
      AWS_SHARED_CREDENTIALS_FILE: join(dir, 'no-credentials'),
      AWS_CONFIG_FILE: join(dir, 'no-config'),
      VOLHOOK_REGISTRY_FILE: registryFile,
      VOLHOOK_OFFLINE_PORT: String(httpPort),
      VOLHOOK_OFFLINE_LAMBDA_PORT: String(lambdaPort),
      VOLHOOK_ESBUILD_WORK_FOLDER: workFolder,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  await new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Server ready')) resolve();
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`npm run offline exited with ${code}:\n${output}`)));
  });
  baseUrl = `http://127.0.0.1:${httpPort}`;
}, 150_000);

afterAll(async () => {
  if (child?.pid && child.exitCode === null) {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    process.kill(-child.pid, 'SIGINT');
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 10_000))]);
    if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid, 'SIGKILL');
  }
  // serverless-esbuild leaves its work folder behind when offline is interrupted.
  rmSync(join(repoRoot, workFolder), { recursive: true, force: true });
}, 20_000);

describe('npm run offline (no AWS credentials, registry file)', () => {
  it('GET /healthz -> 200', async () => {
    const res = await fetch(`${baseUrl}/healthz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok' });
  }, 60_000);

  it('signed reconcile of a registered cluster -> 200 with a result per item', async () => {
    const body = JSON.stringify({ clusterId: 'c1', items: [{ kind: 'PersistentVolumeClaimDeleted', uid: '0b7c9d52-7a3e-4f0e-9c61-3e2f8a4d5b16', namespace: 'default', name: 'data', pvExists: true }] });
    const res = await fetch(`${baseUrl}/v1/clusters/c1/reconcile`, { method: 'POST', body, headers: { 'content-type': 'application/json', ...sign(body, SECRET_C1) } });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ results: [{ key: 'PersistentVolumeClaimDeleted/0b7c9d52-7a3e-4f0e-9c61-3e2f8a4d5b16', outcome: 'done', writes: [] }] });
  }, 60_000);

  it('unknown cluster -> 404', async () => {
    const body = JSON.stringify({ clusterId: 'c9', items: [] });
    const res = await fetch(`${baseUrl}/v1/clusters/c9/reconcile`, { method: 'POST', body, headers: { 'content-type': 'application/json', ...sign(body, SECRET_C1) } });
    expect(res.status).toBe(404);
  }, 60_000);
});
