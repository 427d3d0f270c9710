/**
 * `npm start` as a user runs it: the local stack in a child process on free ports, driven by
 * kubectl and the AWS CLI, then stopped with Ctrl-C (SIGINT to its process group).
 *
 * The child is `node --import tsx bin/start.ts` — what `npm start` runs — rather than `npm`
 * itself: npm 11 neither forwards a SIGINT sent to it alone nor waits for its child on a
 * group SIGINT (it dies of the signal at once), so its exit status would say nothing about
 * volhook. (The `tsx` wrapper binary had the same flaw, now and then: it died of the group
 * SIGINT, exit 130, before the stack's own handler exited 0; so `npm start` no longer uses it.)
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, waitForHttp } from './support/process.js';
import { waitFor } from './support/wait.js';

const run = promisify(execFile);
const ROOT = new URL('../../', import.meta.url).pathname;

let child: ChildProcess;
let exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
let output = '';
let home: string;
const ports = { backend: 0, ec2: 0, kube: 0, forwarder: 0 };

beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), 'volhook-e2e-'));
  ports.backend = await freePort();
  ports.ec2 = await freePort();
  ports.kube = await freePort();
  ports.forwarder = await freePort();
  const started = Date.now();
  child = spawn(process.execPath, ['--import', 'tsx', 'bin/start.ts'], {
    cwd: ROOT,
    detached: true, // its own process group, so "Ctrl-C" reaches every process of it
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      VOLHOOK_BACKEND_PORT: String(ports.backend),
      VOLHOOK_EC2_PORT: String(ports.ec2),
      VOLHOOK_KUBE_PORT: String(ports.kube),
      VOLHOOK_LOCAL_FORWARDER_PORT: String(ports.forwarder),
      VOLHOOK_EC2_TIME_SCALE: '50',
      VOLHOOK_QUIET: '1',
      // Its own state folder: never the checkout's .volhook/local, which a running npm start owns.
      VOLHOOK_LOCAL_DIR: join(home, 'local'),
    },
  });
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-20_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  await waitForHttp(`http://127.0.0.1:${ports.backend}/healthz`, { what: 'the backend /healthz of npm start', timeoutMs: 90_000, child }).catch((err: Error) => {
    throw new Error(`${err.message}\noutput:\n${output}`);
  });
  console.log(`npm start: up in ${Date.now() - started} ms (backend /healthz answering)`);
}, 120_000);

afterAll(async () => {
  if (child?.pid && child.exitCode === null && child.signalCode === null) process.kill(-child.pid, 'SIGKILL');
  if (home) await rm(home, { recursive: true, force: true });
});

interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

async function cli(file: string, args: string[], env: Record<string, string>): Promise<CliResult> {
  try {
    const { stdout, stderr } = await run(file, args, { env: { PATH: process.env.PATH ?? '', HOME: home, ...env }, timeout: 30_000 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? String(err) };
  }
}

const kubectl = (...args: string[]) => cli('kubectl', ['--server', `http://127.0.0.1:${ports.kube}`, ...args], {});

const aws = (...args: string[]) =>
  cli('aws', ['ec2', ...args, '--endpoint-url', `http://127.0.0.1:${ports.ec2}`, '--region', 'us-east-1', '--output', 'json'], {
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    AWS_CONFIG_FILE: join(home, 'no-aws-config'),
    AWS_SHARED_CREDENTIALS_FILE: join(home, 'no-aws-credentials'),
    AWS_EC2_METADATA_DISABLED: 'true',
  });

function ok(result: CliResult, what: string): string {
  expect(result.code, `${what} failed: ${result.stderr}`).toBe(0);
  return result.stdout;
}

interface CliVolume {
  VolumeId: string;
  State: string;
  AvailabilityZone: string;
  Attachments?: { InstanceId: string; Device: string; State: string }[];
}

async function describeVolume(volumeId: string): Promise<CliVolume | 'NotFound'> {
  const result = await aws('describe-volumes', '--volume-ids', volumeId);
  if (result.code !== 0 && result.stderr.includes('InvalidVolume.NotFound')) return 'NotFound';
  const { Volumes } = JSON.parse(ok(result, 'describe-volumes')) as { Volumes: CliVolume[] };
  return Volumes[0] ?? 'NotFound';
}

describe('npm start', () => {
  it('the kubeconfig it prints -> KUBECONFIG=that kubectl reaches the same API (as on the real plane)', async () => {
    // The banner follows the backend's /healthz by a moment.
    await waitFor(async () => output, (text) => /^\s*kubeconfig\s+\S+$/m.test(text), { what: 'the kubeconfig line of npm start', timeoutMs: 30_000 });
    const file = /^\s*kubeconfig\s+(\S+)$/m.exec(output)?.[1];
    expect(file).toBe(join(home, 'local', 'kubeconfig')); // in VOLHOOK_LOCAL_DIR, as the stack's other files
    const classes = ok(await cli('kubectl', ['get', 'storageclasses', '-o', 'name'], { KUBECONFIG: file! }), 'KUBECONFIG=… kubectl get storageclasses');
    expect(classes).toContain('storageclass.storage.k8s.io/gp3');
    // The control: with no kubeconfig, kubectl does not find this API.
    expect((await cli('kubectl', ['get', 'storageclasses', '-o', 'name', '--request-timeout=5s'], { KUBECONFIG: join(home, 'none') })).code).not.toBe(0);
  });

  it('kubectl against the local API -> create a PVC, see it Bound, delete it, it and its PV are gone', async () => {
    const manifest = join(home, 'pvc.yaml');
    await writeFile(
      manifest,
      [
        'apiVersion: v1',
        'kind: PersistentVolumeClaim',
        'metadata: { name: cli-claim, namespace: default }',
        'spec:',
        '  accessModes: [ReadWriteOnce]',
        '  storageClassName: io2',
        '  resources: { requests: { storage: 8Gi } }',
        '',
      ].join('\n'),
    );
    expect(ok(await kubectl('get', 'storageclasses', '-o', 'name'), 'get storageclasses').split('\n')).toEqual(
      expect.arrayContaining(['storageclass.storage.k8s.io/gp3', 'storageclass.storage.k8s.io/io2']),
    );
    expect(ok(await kubectl('create', '-f', manifest), 'create -f')).toContain('persistentvolumeclaim/cli-claim created');

    const phase = () => kubectl('get', 'pvc', 'cli-claim', '-n', 'default', '-o', 'jsonpath={.status.phase} {.spec.volumeName}');
    const bound = await waitFor(phase, (r) => r.code === 0 && r.stdout.startsWith('Bound pvc-'), {
      what: 'kubectl get pvc cli-claim: Bound',
      report: (r) => r.stdout || r.stderr,
    });
    const pvName = bound.stdout.split(' ')[1] ?? '';
    expect(ok(await kubectl('get', 'pv', pvName, '-o', 'jsonpath={.spec.csi.driver}'), 'get pv')).toBe('ebs.csi.aws.com');
    expect(ok(await kubectl('get', 'pvc', '-n', 'default'), 'get pvc (table)')).toMatch(/cli-claim\s+Bound\s+pvc-/);

    expect(ok(await kubectl('delete', 'pvc', 'cli-claim', '-n', 'default'), 'delete pvc')).toContain('"cli-claim" deleted');
    const gone = await kubectl('get', 'pvc', 'cli-claim', '-n', 'default');
    expect(gone.code).not.toBe(0);
    expect(gone.stderr).toContain('NotFound');
    await waitFor(() => kubectl('get', 'pv', pvName), (r) => r.code !== 0 && r.stderr.includes('NotFound'), {
      what: `kubectl get pv ${pvName}: NotFound (Delete policy)`,
      report: (r) => r.stdout || r.stderr,
    });
  }, 120_000);

  it('the AWS CLI against the simulator -> create, describe, attach to a node instance, detach, delete a volume', async () => {
    const instances = JSON.parse(
      ok(
        await aws('describe-instances', '--filters', 'Name=tag:kubernetes.io/cluster/local,Values=owned', 'Name=availability-zone,Values=us-east-1a'),
        'describe-instances',
      ),
    ) as { Reservations: { Instances: { InstanceId: string; State: { Name: string } }[] }[] };
    const node = instances.Reservations.flatMap((r) => r.Instances)[0];
    expect(node?.InstanceId).toMatch(/^i-/);
    const instanceId = node!.InstanceId;

    const created = JSON.parse(
      ok(await aws('create-volume', '--availability-zone', 'us-east-1a', '--size', '4', '--volume-type', 'gp3'), 'create-volume'),
    ) as CliVolume;
    expect(created).toMatchObject({ State: 'creating', AvailabilityZone: 'us-east-1a' });
    const volumeId = created.VolumeId;
    await waitFor(() => describeVolume(volumeId), (v) => v !== 'NotFound' && v.State === 'available', { what: `${volumeId} available` });

    const attaching = JSON.parse(
      ok(await aws('attach-volume', '--volume-id', volumeId, '--instance-id', instanceId, '--device', '/dev/xvdbz'), 'attach-volume'),
    ) as { State: string; Device: string };
    expect(attaching).toMatchObject({ State: 'attaching', Device: '/dev/xvdbz' });
    const attached = await waitFor(
      () => describeVolume(volumeId),
      (v) => v !== 'NotFound' && v.State === 'in-use' && v.Attachments?.[0]?.State === 'attached',
      { what: `${volumeId} attached` },
    );
    expect(attached !== 'NotFound' && attached.Attachments?.[0]).toMatchObject({ InstanceId: instanceId, Device: '/dev/xvdbz' });

    ok(await aws('detach-volume', '--volume-id', volumeId), 'detach-volume');
    await waitFor(
      () => describeVolume(volumeId),
      (v) => v !== 'NotFound' && v.State === 'available' && (v.Attachments ?? []).length === 0,
      { what: `${volumeId} detached` },
    );

    ok(await aws('delete-volume', '--volume-id', volumeId), 'delete-volume');
    await waitFor(() => describeVolume(volumeId), (v) => v === 'NotFound', { what: `${volumeId} gone` });
  }, 120_000);

  it('npm run cluster -- audit local, no flags, VOLHOOK_LOCAL_DIR only -> finds the running stack and audits its disks by its report', async () => {
    // The forwarder reports once its caches have synced; the first test made it resync since.
    const result = await waitFor(
      () => cli('npm', ['run', '-s', 'cluster', '--', 'audit', 'local', '--json'], { VOLHOOK_LOCAL_DIR: join(home, 'local') }),
      (r) => r.code === 0 && (JSON.parse(r.stdout) as { reportObservedAt?: string }).reportObservedAt !== undefined,
      { what: 'an audit judged by the running stack\'s report', timeoutMs: 60_000, intervalMs: 1_000, report: (r) => r.stderr || r.stdout },
    );
    const audit = JSON.parse(result.stdout) as { clusterId: string; region: string; orphans: unknown[]; lost: unknown[]; drift: unknown[] };
    expect(audit).toMatchObject({ clusterId: 'local', region: 'us-east-1', orphans: [], lost: [], drift: [] });
    expect(result.stderr).toContain('cluster "local" (us-east-1)');
  }, 90_000);

  it('Ctrl-C (SIGINT to its process group) -> stops everything cleanly and exits 0', async () => {
    process.kill(-child.pid!, 'SIGINT');
    const { code, signal } = await Promise.race([
      exited,
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`npm start did not exit within 30 s\n${output}`)), 30_000)),
    ]);
    expect({ code, signal }, output).toEqual({ code: 0, signal: null });
    expect(output).toContain('stopping');
    // The description of the running stack goes with it.
    expect(existsSync(join(home, 'local', 'stack.json'))).toBe(false);
    // Nothing listens any more.
    for (const port of Object.values(ports)) {
      await expect(fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(2_000) })).rejects.toThrow();
    }
  }, 60_000);
});
