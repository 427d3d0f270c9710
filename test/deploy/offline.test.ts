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

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

interface Offline {
  child: ChildProcess;
  baseUrl: string;
  output: () => string;
  workFolder: string;
}

/** `npm run offline` on free ports with `registryFile`, resolved once it says "Server ready". */
async function startOffline(dir: string, registryFile: string): Promise<Offline> {
  const [httpPort, lambdaPort] = [await freePort(), await freePort()];
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('AWS_') && !k.startsWith('VOLHOOK_')));
  const workFolder = `.esbuild/test-offline-${process.pid}-${Date.now()}-${httpPort}`;
  const child = spawn('npm', ['run', 'offline'], {
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
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Server ready')) resolve();
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`npm run offline exited with ${code}:\n${output}`)));
  });
  return { child, baseUrl: `http://127.0.0.1:${httpPort}`, output: () => output, workFolder };
}

async function stopOffline(offline: Offline | undefined): Promise<void> {
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

let offline: Offline;
let baseUrl: string;

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'volhook-offline-'));
  const registryFile = join(dir, 'clusters.json');
  writeFileSync(registryFile, JSON.stringify({ clusters: { c1: { clusterId: 'c1', secrets: [SECRET_C1], region: 'us-east-1' } } }));
  offline = await startOffline(dir, registryFile);
  baseUrl = offline.baseUrl;
}, 150_000);

afterAll(() => stopOffline(offline), 20_000);

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

describe('npm run offline with no registrations file', () => {
  let bare: Offline;
  let missing: string;
  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'volhook-offline-bare-'));
    missing = join(dir, 'clusters.json');
    bare = await startOffline(dir, missing);
  }, 150_000);
  afterAll(() => stopOffline(bare), 20_000);

  it('starts -> a warning naming the file and `npm run cluster -- add`', () => {
    const before = bare.output().slice(0, bare.output().indexOf('Server ready'));
    expect(before).toContain(`WARNING: no cluster is registered: the registrations file ${missing} does not exist`);
    expect(before).toContain(`npm run cluster -- add <id> --file ${missing}`);
    // The control: with the file there, no such warning.
    expect(offline.output()).not.toContain('no cluster is registered');
  });

  it('signed reconcile -> 503 registry_missing naming the file and the command, not 500', async () => {
    const body = JSON.stringify({ clusterId: 'c1', items: [] });
    const res = await fetch(`${bare.baseUrl}/v1/clusters/c1/reconcile`, { method: 'POST', body, headers: { 'content-type': 'application/json', ...sign(body, SECRET_C1) } });
    const answer = (await res.json()) as { error: { code: string; message: string } };
    expect(res.status, JSON.stringify(answer)).toBe(503);
    expect(answer.error.code).toBe('registry_missing');
    expect(answer.error.message).toContain(missing);
    expect(answer.error.message).toContain('npm run cluster -- add <id>');
  }, 60_000);
});
