/**
 * End to end: two forwarder processes (bin/forwarder.ts) with leader election on one Lease,
 * against the local stack. Each talks to the backend and to the Kubernetes API through a
 * counting proxy of its own on 127.0.0.1, so every request is attributed to its forwarder.
 * Short lease timings through the environment: lease 2 s, renew deadline 1 s, retry 0.25 s.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, request as httpRequest, type Server } from 'node:http';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { CoordinationV1Api, type V1Lease } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WATCHES } from '../../lib/forwarder/watches.js';
import { kubeConfigFor } from '../../lib/kube/index.js';
import { listen } from '../../lib/http/index.js';
import { provisionedVolumes, tagsOf, TagKeys, volumesState } from './support/ec2.js';
import { createClaim, createNamespace, listClaims, listVolumes } from './support/kube.js';
import { IMMEDIATE_CLASS, startScenarioStack, type E2eStack } from './support/stack.js';
import { show, waitFor } from './support/wait.js';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const LEASE = { namespace: 'volhook-system', name: 'volhook-forwarder' };
const TIMING = { leaseDurationSeconds: 2, renewDeadlineSeconds: 1, retryPeriodSeconds: 0.25 };

let stack: E2eStack;
let leases: CoordinationV1Api;
const running: ForwarderProcess[] = [];
/** Where the forwarder's informers list and watch. */
const WATCHED_PATHS = new Set(Object.values(WATCHES).map((w) => w.path));

beforeAll(async () => {
  ({ stack } = await startScenarioStack({ immediateClass: true, forwarder: false }));
  await createNamespace(stack.kube, LEASE.namespace);
  leases = kubeConfigFor({ server: stack.urls.kube }).makeApiClient(CoordinationV1Api);
}, 60_000);
afterAll(async () => {
  await Promise.all(running.map((f) => f.kill('SIGKILL')));
  await stack?.stop();
});

/** One request through a proxy: when it arrived and when its answer ended (or the client left). */
interface Seen {
  method: string;
  url: string;
  at: number;
  end?: number;
}

/** A pass-through HTTP proxy to `target` that logs every request (watch streams included). */
async function countingProxy(target: string): Promise<{ url: string; seen: Seen[]; close(): Promise<void> }> {
  const seen: Seen[] = [];
  const upstream = new URL(target);
  const server: Server = createServer((req, res) => {
    const entry: Seen = { method: req.method ?? '', url: req.url ?? '', at: Date.now() };
    seen.push(entry);
    const up = httpRequest({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers }, (upRes) => {
      res.writeHead(upRes.statusCode ?? 502, upRes.headers);
      upRes.pipe(res);
    });
    up.on('error', () => res.destroy());
    res.on('close', () => {
      entry.end = Date.now();
      up.destroy();
    });
    req.pipe(up);
  });
  const { port, close } = await listen(server, 0, '127.0.0.1');
  return { url: `http://127.0.0.1:${port}`, seen, close };
}

interface ForwarderProcess {
  identity: string;
  child: ChildProcess;
  backend: Awaited<ReturnType<typeof countingProxy>>;
  kube: Awaited<ReturnType<typeof countingProxy>>;
  /** Reconcile requests it made (not the check every replica makes before it is ready). */
  posts(): Seen[];
  /** Lists it made of the watched resources (not watches, not reads by name). */
  lists(): Seen[];
  kill(signal: NodeJS.Signals): Promise<void>;
  exited: Promise<void>;
}

async function startForwarderProcess(identity: string): Promise<ForwarderProcess> {
  const backend = await countingProxy(stack.urls.backend);
  const kube = await countingProxy(stack.urls.kube);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    VOLHOOK_API_URL: backend.url,
    VOLHOOK_CLUSTER_ID: stack.clusterId,
    VOLHOOK_SECRET: stack.secret,
    VOLHOOK_KUBE_SERVER: kube.url,
    VOLHOOK_PORT: '0',
    VOLHOOK_LISTEN_HOST: '127.0.0.1',
    VOLHOOK_RESYNC_SECONDS: '2',
    VOLHOOK_LEADER_ELECT: 'true',
    VOLHOOK_LEASE_NAMESPACE: LEASE.namespace,
    VOLHOOK_LEADER_IDENTITY: identity,
    VOLHOOK_LEASE_DURATION_SECONDS: String(TIMING.leaseDurationSeconds),
    VOLHOOK_RENEW_DEADLINE_SECONDS: String(TIMING.renewDeadlineSeconds),
    VOLHOOK_RETRY_PERIOD_SECONDS: String(TIMING.retryPeriodSeconds),
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  };
  delete env.NODE_OPTIONS;
  const child = spawn(process.execPath, ['--import', 'tsx', 'bin/forwarder.ts'], { cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let port: number | undefined;
  createInterface({ input: child.stdout! }).on('line', (line) => {
    try {
      const entry = JSON.parse(line) as { msg?: string; port?: number };
      if (entry.msg === 'forwarder started') port = entry.port;
    } catch {
      // not a log line
    }
  });
  child.stderr!.on('data', () => {});
  const f: ForwarderProcess = {
    identity,
    child,
    backend,
    kube,
    exited,
    posts: () => backend.seen.filter((s) => s.method === 'POST' && s.url.endsWith('/reconcile')),
    lists: () => kube.seen.filter((s) => s.method === 'GET' && WATCHED_PATHS.has(new URL(s.url, 'http://x').pathname) && !s.url.includes('watch=true')),
    async kill(signal) {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
      await Promise.all([backend.close(), kube.close()]);
    },
  };
  running.push(f);
  await waitFor(() => port, (p) => p !== undefined, { what: `${identity} started`, timeoutMs: 60_000, intervalMs: 100 });
  await waitFor(
    async () => (await fetch(`http://127.0.0.1:${port}/readyz`)).status,
    (status) => status === 200,
    { what: `${identity} caches synced`, timeoutMs: 30_000, intervalMs: 100 },
  );
  return f;
}

const holder = async (): Promise<string> => ((await leases.readNamespacedLease(LEASE)) as V1Lease).spec?.holderIdentity ?? '';

async function burst(namespace: string, count: number): Promise<void> {
  await createNamespace(stack.kube, namespace);
  for (let i = 0; i < count; i++) await createClaim(stack.kube, namespace, `data-${i}`, { storageClassName: IMMEDIATE_CLASS });
}

/** Every claim Bound, and exactly one disk per claim, each the disk of its PV. */
async function expectConvergedOneDiskEach(namespace: string, count: number): Promise<void> {
  await waitFor(
    async () => (await listClaims(stack.kube, namespace)).filter((c) => c.status?.phase === 'Bound').length,
    (bound) => bound === count,
    { what: `${count} claims Bound in ${namespace}`, timeoutMs: 90_000 },
  );
  const disks = (await provisionedVolumes(stack.ec2, stack.clusterId)).filter((v) => tagsOf(v)[TagKeys.pvcNamespace] === namespace);
  expect(disks.length, show(volumesState(disks))).toBe(count);
  expect(new Set(disks.map((d) => tagsOf(d)[TagKeys.pvcName])).size).toBe(count);
  const pvs = new Map((await listVolumes(stack.kube)).map((pv) => [pv.metadata?.name, pv]));
  for (const disk of disks) expect(pvs.get(tagsOf(disk)[TagKeys.pvName])?.spec?.csi?.volumeHandle, `PV of ${disk.VolumeId}`).toBe(disk.VolumeId);
}

/** No request of `a` overlaps one of `b` in time. */
function overlaps(a: Seen[], b: Seen[]): string[] {
  const found: string[] = [];
  for (const x of a) for (const y of b) if (x.at < (y.end ?? Infinity) && y.at < (x.end ?? Infinity)) found.push(`${x.url}@${x.at} ~ ${y.url}@${y.at}`);
  return found;
}

describe('two forwarders, one Lease', () => {
  let a: ForwarderProcess;
  let b: ForwarderProcess;

  it('both running -> one holds the Lease and only it sends; the leader SIGKILLed mid-burst -> the standby takes over once the lease expires, without a relist, and every claim gets one disk', async () => {
    a = await startForwarderProcess('fwd-a');
    await waitFor(holder, (h) => h === 'fwd-a', { what: 'fwd-a holds the Lease', timeoutMs: 10_000 });
    b = await startForwarderProcess('fwd-b');
    const listsBefore = b.lists().length;
    expect(listsBefore).toBeGreaterThanOrEqual(6); // its informers listed once each

    await burst('ha-kill', 20);
    await waitFor(() => a.posts().length, (n) => n >= 1, { what: 'the leader sending the burst', timeoutMs: 30_000, intervalMs: 5 });
    // While both run, the standby sends nothing.
    expect(b.posts()).toHaveLength(0);
    expect(await holder()).toBe('fwd-a');

    const killedAt = Date.now();
    await a.kill('SIGKILL');
    // Mid-burst: work was left for the standby.
    expect((await listClaims(stack.kube, 'ha-kill')).filter((c) => c.status?.phase === 'Bound').length).toBeLessThan(20);
    await waitFor(() => b.posts().length, (n) => n >= 1, { what: 'the standby sending', timeoutMs: 20_000, intervalMs: 20 });
    const firstPost = b.posts()[0]!.at;
    // No release from a killed leader: the standby waited for the lease to expire on its clock
    // (2 s after it last saw a renewal, at most one retry before the kill).
    expect(firstPost - killedAt).toBeGreaterThanOrEqual(TIMING.leaseDurationSeconds * 1000 - 2 * TIMING.retryPeriodSeconds * 1000);
    expect(await holder()).toBe('fwd-b');
    expect(overlaps(a.posts(), b.posts())).toEqual([]);

    await expectConvergedOneDiskEach('ha-kill', 20);
    // Its caches were warm: it took over without listing again.
    expect(b.lists().length).toBe(listsBefore);
  }, 180_000);

  it('the leader stopped with SIGTERM mid-burst -> it releases the Lease and the standby leads within 2 s; their requests never overlap', async () => {
    const c = await startForwarderProcess('fwd-c');
    expect(await holder()).toBe('fwd-b');
    const listsBefore = c.lists().length;
    const postsBefore = b.posts().length;

    await burst('ha-term', 12);
    await waitFor(() => b.posts().length, (n) => n > postsBefore, { what: 'the leader sending the burst', timeoutMs: 30_000, intervalMs: 5 });
    expect(c.posts()).toHaveLength(0);

    const termAt = Date.now();
    b.child.kill('SIGTERM');
    expect((await listClaims(stack.kube, 'ha-term')).filter((c) => c.status?.phase === 'Bound').length).toBeLessThan(12);
    const ledAt = await waitFor(
      async () => ((await holder()) === 'fwd-c' ? Date.now() : undefined),
      (t) => t !== undefined,
      { what: 'fwd-c holds the Lease', timeoutMs: 10_000, intervalMs: 20 },
    );
    expect(ledAt! - termAt).toBeLessThan(2000);
    await b.kill('SIGTERM');
    expect(b.child.exitCode).toBe(0);

    await expectConvergedOneDiskEach('ha-term', 12);
    expect(c.posts().length).toBeGreaterThan(0);
    // The old leader finished (drained) before releasing: no request of the two ever overlapped.
    expect(overlaps(b.posts(), c.posts())).toEqual([]);
    expect(c.lists().length).toBe(listsBefore);
  }, 180_000);
});
