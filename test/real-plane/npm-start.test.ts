/**
 * `VOLHOOK_KUBE=real npm start` as a user runs it (`node --import tsx bin/start.ts`, as
 * test/e2e/npm-start.test.ts explains): the real control plane in place of the simulated API,
 * its kubeconfig written and printed, kubectl and `npm run cluster` working through it, and
 * every process of the plane gone after Ctrl-C.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect, createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kubeTools } from '../../infra/tools/kube-tools.js';
import { waitFor } from '../e2e/support/wait.js';
import { withoutGo } from './support.js';

const run = promisify(execFile);
const ROOT = new URL('../../', import.meta.url).pathname;

let child: ChildProcess;
let exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
let output = '';
let dir: string;

/** Processes whose command line names `text` (the plane's all name its data directory). */
function processesNaming(text: string): string[] {
  return readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .flatMap((pid) => {
      try {
        const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
        return cmdline.includes(text) ? [`${pid} ${cmdline.slice(0, 120)}`] : [];
      } catch {
        return [];
      }
    });
}

beforeAll(async () => {
  if (withoutGo) return;
  dir = await mkdtemp(join(tmpdir(), 'volhook-real-start-'));
  child = spawn(process.execPath, ['--import', 'tsx', 'bin/start.ts'], {
    cwd: ROOT,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      VOLHOOK_KUBE: 'real',
      VOLHOOK_LOCAL_DIR: dir,
      VOLHOOK_BACKEND_PORT: '0',
      VOLHOOK_EC2_PORT: '0',
      VOLHOOK_KUBE_PORT: '0',
      VOLHOOK_LOCAL_FORWARDER_PORT: '0',
      VOLHOOK_EC2_TIME_SCALE: '20',
      VOLHOOK_QUIET: '1',
    },
  });
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-20_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  await waitFor(async () => output, (text) => text.includes('Ctrl-C stops everything') || child.exitCode !== null, {
    what: 'the banner of VOLHOOK_KUBE=real npm start',
    timeoutMs: 600_000,
    intervalMs: 250,
    report: () => output.slice(-3000),
  });
}, 660_000);

afterAll(async () => {
  if (child?.pid && child.exitCode === null && child.signalCode === null) process.kill(-child.pid, 'SIGKILL');
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe.skipIf(withoutGo !== undefined)('VOLHOOK_KUBE=real npm start', () => {
  it('-> the real control plane named, its kubeconfig printed; KUBECONFIG=that kubectl sees the 3 nodes Ready, the classes and CRDs, and provisions a claim; npm run cluster -- adopt local reads its PV through it', async () => {
    expect(output).toMatch(/Kubernetes\s+https:\/\/127\.0\.0\.1:\d+\s+\(the real control plane, v1\.36\.\d+/);
    const kubeconfig = /^\s*kubeconfig\s+(\S+)$/m.exec(output)?.[1];
    expect(kubeconfig).toBe(join(dir, 'kubeconfig'));
    const env = { PATH: process.env.PATH ?? '', HOME: dir, KUBECONFIG: kubeconfig! };
    const { stdout: nodes } = await run(kubeTools().kubectl, ['get', 'nodes', '--no-headers'], { env, timeout: 30_000 });
    expect(nodes.trim().split('\n').map((line) => line.split(/\s+/)[1])).toEqual(['Ready', 'Ready', 'Ready']);
    const { stdout: classes } = await run(kubeTools().kubectl, ['get', 'storageclasses', '--no-headers'], { env, timeout: 30_000 });
    expect(classes).toMatch(/^gp3 \(default\)\s+ebs\.csi\.aws\.com/m);
    const { stdout: crds } = await run(kubeTools().kubectl, ['get', 'crd', '-o', 'name'], { env, timeout: 30_000 });
    expect(crds.trim().split('\n').sort()).toEqual([
      'customresourcedefinition.apiextensions.k8s.io/volumegroupsnapshotclasses.groupsnapshot.storage.k8s.io',
      'customresourcedefinition.apiextensions.k8s.io/volumegroupsnapshotcontents.groupsnapshot.storage.k8s.io',
      'customresourcedefinition.apiextensions.k8s.io/volumegroupsnapshots.groupsnapshot.storage.k8s.io',
      'customresourcedefinition.apiextensions.k8s.io/volumesnapshotclasses.snapshot.storage.k8s.io',
      'customresourcedefinition.apiextensions.k8s.io/volumesnapshotcontents.snapshot.storage.k8s.io',
      'customresourcedefinition.apiextensions.k8s.io/volumesnapshots.snapshot.storage.k8s.io',
    ]);
    // A claim through kubectl, provisioned on the Immediate class; the cluster CLI then finds the
    // running stack and reads that PV from its API through the same kubeconfig.
    const manifest = join(dir, 'claim.yaml');
    writeFileSync(manifest, JSON.stringify({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'cli', namespace: 'default' }, spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'io2', resources: { requests: { storage: '4Gi' } } } }));
    await run(kubeTools().kubectl, ['apply', '-f', manifest], { env, timeout: 30_000 });
    const bound = await waitFor(
      async () => (await run(kubeTools().kubectl, ['get', 'pvc', 'cli', '-n', 'default', '-o', 'jsonpath={.status.phase} {.spec.volumeName}'], { env, timeout: 30_000 })).stdout,
      (text) => text.startsWith('Bound pvc-'),
      { what: 'kubectl get pvc cli: Bound', timeoutMs: 120_000 },
    );
    const pv = bound.split(' ')[1]!;
    const { stdout: adopt } = await run(process.execPath, ['--import', 'tsx', 'bin/cluster.ts', 'adopt', 'local', '--json'], { cwd: ROOT, env: { ...process.env, VOLHOOK_LOCAL_DIR: dir }, timeout: 60_000 });
    expect(adopt).toContain(pv);
  });

  it('Ctrl-C -> exit 0, and etcd, kube-apiserver, kube-controller-manager and kube-scheduler are gone', async () => {
    const server = /Kubernetes\s+https:\/\/127\.0\.0\.1:(\d+)/.exec(output)![1]!;
    expect(processesNaming(dir).length).toBeGreaterThanOrEqual(4);
    process.kill(-child.pid!, 'SIGINT');
    expect(await exited).toEqual({ code: 0, signal: null });
    expect(processesNaming(dir)).toEqual([]);
    const refused = await new Promise<string>((resolve) => {
      const socket = connect(Number(server), '127.0.0.1');
      socket.once('connect', () => (socket.destroy(), resolve('connected')));
      socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'));
    });
    expect(refused).toBe('ECONNREFUSED');
  });

  it("VOLHOOK_KUBE_PORT taken by another process -> exit 1 naming the variable, before any of the plane's processes start", async () => {
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const port = (holder.address() as AddressInfo).port;
    const other = await mkdtemp(join(tmpdir(), 'volhook-real-start-'));
    try {
      const result = await run(process.execPath, ['--import', 'tsx', 'bin/start.ts'], {
        cwd: ROOT,
        timeout: 120_000,
        env: { ...process.env, VOLHOOK_KUBE: 'real', VOLHOOK_LOCAL_DIR: other, VOLHOOK_BACKEND_PORT: '0', VOLHOOK_EC2_PORT: '0', VOLHOOK_KUBE_PORT: String(port), VOLHOOK_LOCAL_FORWARDER_PORT: '0' },
      }).then(
        () => ({ code: 0, stderr: '' }),
        (err: { code?: number; stderr?: string }) => ({ code: err.code, stderr: err.stderr ?? '' }),
      );
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`the kube cannot listen on 127.0.0.1:${port}`);
      expect(result.stderr).toContain('VOLHOOK_KUBE_PORT');
      expect(processesNaming(other)).toEqual([]);
    } finally {
      holder.close();
      await rm(other, { recursive: true, force: true });
    }
  });
});
