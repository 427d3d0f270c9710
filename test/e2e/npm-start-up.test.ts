/**
 * `npm start` coming up and failing to: "up" means its node instances run (the first attach
 * never meets one `pending`), the forwarder's port is set by VOLHOOK_LOCAL_FORWARDER_PORT and
 * its warnings and errors are printed, and a port in use is one message naming the variable
 * that moves it. The simulator runs at AWS's own latencies here (time scale 1): instances take
 * 5–15 s to start, so a stack that reported up before they ran would be seen doing so.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from './support/process.js';
import { waitFor } from './support/wait.js';

const run = promisify(execFile);
const ROOT = new URL('../../', import.meta.url).pathname;

interface Started {
  child: ChildProcess;
  output: () => string;
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

type Ports = Record<'VOLHOOK_BACKEND_PORT' | 'VOLHOOK_EC2_PORT' | 'VOLHOOK_KUBE_PORT' | 'VOLHOOK_LOCAL_FORWARDER_PORT', number>;

async function freePorts(): Promise<Ports> {
  return {
    VOLHOOK_BACKEND_PORT: await freePort(),
    VOLHOOK_EC2_PORT: await freePort(),
    VOLHOOK_KUBE_PORT: await freePort(),
    VOLHOOK_LOCAL_FORWARDER_PORT: await freePort(),
  };
}

function npmStart(ports: Ports, localDir: string, extra: Record<string, string> = {}): Started {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('VOLHOOK_')));
  const child = spawn(process.execPath, ['--import', 'tsx', 'bin/start.ts'], {
    cwd: ROOT,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...env, ...Object.fromEntries(Object.entries(ports).map(([k, v]) => [k, String(v)])), VOLHOOK_LOCAL_DIR: localDir, VOLHOOK_QUIET: '1', ...extra },
  });
  let output = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
    stderr += chunk.toString();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  return { child, output: () => output, stderr: () => stderr, exited };
}

function kill(started: Started | undefined): void {
  const pid = started?.child.pid;
  if (pid && started.child.exitCode === null && started.child.signalCode === null) process.kill(-pid, 'SIGKILL');
}

function occupy(port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

async function exitWithin(started: Started, ms: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return Promise.race([
    started.exited,
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`npm start did not exit within ${ms} ms:\n${started.output()}`)), ms)),
  ]);
}

let home: string;
beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), 'volhook-e2e-up-'));
});
afterAll(async () => {
  if (home) await rm(home, { recursive: true, force: true });
});

describe('npm start with a port in use', () => {
  for (const variable of ['VOLHOOK_KUBE_PORT', 'VOLHOOK_LOCAL_FORWARDER_PORT'] as const) {
    it(`${variable}'s port taken -> exits 1 with one message naming ${variable}, no stack trace`, async () => {
      const ports = await freePorts();
      const blocker = await occupy(ports[variable]);
      const started = npmStart(ports, join(home, `busy-${variable}`), { VOLHOOK_EC2_TIME_SCALE: '100' });
      try {
        const { code } = await exitWithin(started, 90_000);
        expect(code, started.output()).toBe(1);
        expect(started.stderr()).toContain(`127.0.0.1:${ports[variable]}`);
        expect(started.stderr()).toContain(`set ${variable} to another port`);
        expect(started.stderr(), 'a raw stack trace').not.toMatch(/^\s+at /m);
        // The servers started before the failing one were stopped: their ports are free again.
        await occupy(ports.VOLHOOK_EC2_PORT).then((s) => s.close());
      } finally {
        kill(started);
        blocker.close();
      }
    }, 120_000);
  }
});

describe('npm start at AWS latencies (time scale 1)', () => {
  let started: Started;
  let ports: Ports;
  let localDir: string;
  const kubectl = async (...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> => {
    try {
      const { stdout, stderr } = await run('kubectl', ['--server', `http://127.0.0.1:${ports.VOLHOOK_KUBE_PORT}`, ...args], { env: { PATH: process.env.PATH ?? '', HOME: home }, timeout: 30_000 });
      return { code: 0, stdout, stderr };
    } catch (err) {
      const e = err as { code?: number; stdout?: string; stderr?: string };
      return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? String(err) };
    }
  };

  beforeAll(async () => {
    ports = await freePorts();
    localDir = join(home, 'local');
    // The control case of the tests above: the same settings, every port free -> up.
    started = npmStart(ports, localDir, { VOLHOOK_EC2_TIME_SCALE: '1' });
    await waitFor(
      () => {
        if (started.child.exitCode !== null) throw new Error(`npm start exited (${started.child.exitCode})`);
        return started.output();
      },
      (out) => out.includes('volhook local stack is up'),
      { what: 'npm start: "volhook local stack is up"', timeoutMs: 90_000, intervalMs: 20, report: (out) => out },
    );
  }, 120_000);
  afterAll(() => kill(started));

  it('up -> every node instance is running; a pod created at once is attached with no AttachVolume IncorrectState', async () => {
    const ec2 = `http://127.0.0.1:${ports.VOLHOOK_EC2_PORT}`;
    const applied = await kubectl('apply', '-f', join(ROOT, 'infra/examples/pvc-and-pod.yaml'));
    expect(applied.code, applied.stderr).toBe(0);
    await waitFor(
      () => kubectl('get', 'volumeattachments', '-o', 'jsonpath={.items[*].status.attached}'),
      (r) => r.code === 0 && r.stdout.trim() === 'true',
      { what: 'the pod\'s VolumeAttachment attached', timeoutMs: 90_000, intervalMs: 250, report: (r) => r.stdout || r.stderr },
    );
    const stats = (await (await fetch(`${ec2}/_sim/stats`)).json()) as { actions: Record<string, { ok: number; errors: Record<string, number> }> };
    expect(stats.actions.AttachVolume?.ok).toBeGreaterThanOrEqual(1);
    expect(stats.actions.AttachVolume?.errors.IncorrectState ?? 0, JSON.stringify(stats.actions.AttachVolume)).toBe(0);
  }, 120_000);

  it('VOLHOOK_LOCAL_FORWARDER_PORT -> the banner names it and the forwarder\'s /metrics answers there', async () => {
    expect(started.output()).toContain(`forwarder    http://127.0.0.1:${ports.VOLHOOK_LOCAL_FORWARDER_PORT}`);
    const res = await fetch(`http://127.0.0.1:${ports.VOLHOOK_LOCAL_FORWARDER_PORT}/metrics`);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('volhook_forwarder');
  }, 30_000);

  it('the backend refuses the forwarder (registration\'s secret replaced) -> its error is printed on stderr; its info lines are not', async () => {
    const registryFile = join(localDir, 'clusters.json');
    const registry = JSON.parse(await readFile(registryFile, 'utf8')) as { clusters: Record<string, { secrets: string[] }> };
    registry.clusters.local!.secrets = [`whsec_${Buffer.alloc(24, 7).toString('base64')}`];
    await writeFile(registryFile, JSON.stringify(registry));
    const manifest = join(home, 'refused.yaml');
    await writeFile(manifest, 'apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: { name: refused, namespace: default }\nspec: { accessModes: [ReadWriteOnce], storageClassName: io2, resources: { requests: { storage: 4Gi } } }\n');
    expect((await kubectl('create', '-f', manifest)).code).toBe(0);
    await waitFor(() => started.stderr(), (err) => err.includes('backend REFUSED the request'), {
      what: 'the forwarder\'s "backend REFUSED" line on npm start\'s stderr',
      timeoutMs: 60_000,
      intervalMs: 200,
      report: (err) => err.slice(-2_000),
    });
    const lines = started.stderr().split('\n').filter((l) => l.includes('"component":"forwarder"'));
    expect(lines.some((l) => l.includes('"level":"error"') && l.includes('401'))).toBe(true);
    expect(lines.filter((l) => l.includes('"level":"info"'))).toEqual([]);
  }, 90_000);
});
