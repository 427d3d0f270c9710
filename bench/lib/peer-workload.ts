/**
 * The workload of `npm run bench -- --peer ebs-csi`, run against one side (peer-sides.ts) on
 * the real control plane, through the API server as any client: N claims of the default class
 * (gp3, WaitForFirstConsumer) with a pod each (pinned by nodeSelector to spread them, ≤ 24
 * volumes a node; the scheduler still places them, so the claims get `selected-node`), timed
 * until every claim is Bound and attached (the node agents make the pods Running); then E
 * claims grown 4 → 8 GiB until their status says 8Gi (the node agents finish the filesystem
 * part as kubelet would); S VolumeSnapshots until ready, and S claims restored from them, with
 * pods, until Bound and attached; then everything deleted until the simulator holds no volume
 * or snapshot of the run. Progress is seen by listing every second (so times are to ±1 s).
 */
import type { KubeRest } from '../../lib/forwarder/kube/rest.js';
import { MediaTypes } from '../../lib/forwarder/kube/rest.js';
import type { Ec2SimStats } from '../../lib/local/ec2/index.js';
import { procCpuMs, procMemory } from './proc.js';
import type { MeasuredProcess, Side } from './peer-sides.js';
import { say } from './format.js';
import { VOLUMES_PER_NODE } from './bench-stack.js';

const NS = 'bench';
const SNAPSHOT_CLASS = 'bench-ebs';
const POLL_MS = 1_000;
const CONCURRENCY = 16;

export interface WorkloadOptions {
  n: number;
  expansions: number;
  snapshots: number;
  /** Bound on each phase. */
  phaseTimeoutMs: number;
}

export interface PhaseResult {
  name: 'create' | 'expand' | 'snapshot' | 'restore' | 'delete';
  count: number;
  ms?: number;
  timedOut: boolean;
}

export interface ControllerUsage {
  name: string;
  /** CPU time (user + system) used during the workload: from its first create to the end. */
  cpuMs?: number;
  /** VmHWM: the process's peak over its whole life (start-up included). */
  peakBytes?: number;
}

export interface WorkloadResult {
  stack: Side['name'];
  n: number;
  phases: PhaseResult[];
  /** Per claim of the create phase, from the phase's first create (as the burst's time ÷ floor is). */
  claims: Array<{ boundMs?: number; attachedMs?: number }>;
  ec2: Ec2SimStats;
  /** Volumes created in the run (claims and restores), the denominator of calls per volume. */
  volumes: number;
  controllers: ControllerUsage[];
  /** Left in the simulator at the end (volumes not deleted beyond the nodes' roots, snapshots). */
  leaked: { volumes: number; snapshots: number };
  nodes: number;
}

type Obj = { metadata: { name: string; namespace?: string; resourceVersion?: string }; spec?: Record<string, unknown>; status?: Record<string, unknown> };
type List = { items: Obj[] };

async function pool<T>(items: readonly T[], work: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(CONCURRENCY, items.length) }, async () => {
      while (next < items.length) await work(items[next++]!);
    }),
  );
}

const claimBody = (name: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  metadata: { name, namespace: NS, labels: { app: 'peer-bench' } },
  spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'gp3', resources: { requests: { storage: '4Gi' } }, ...extra },
});

const podBody = (name: string, claimName: string, nodeName: string) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: NS, labels: { app: 'peer-bench' } },
  spec: {
    nodeSelector: { 'kubernetes.io/hostname': nodeName },
    terminationGracePeriodSeconds: 0,
    containers: [{ name: 'app', image: 'busybox:1.36', command: ['sleep', 'infinity'], volumeMounts: [{ name: 'data', mountPath: '/data' }] }],
    volumes: [{ name: 'data', persistentVolumeClaim: { claimName } }],
  },
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function usageOf(processes: readonly MeasuredProcess[]): ControllerUsage[] {
  return processes.map((p) => ({ name: p.name, cpuMs: procCpuMs(p.pid), peakBytes: procMemory(p.pid)?.peak }));
}

export async function runWorkload(side: Side, options: WorkloadOptions): Promise<WorkloadResult> {
  const rest: KubeRest = side.stack.real.plane.rest();
  const sim = side.sim;
  const nodes = side.stack.nodes;
  const rootVolumes = new Set(sim.volumes().map((v) => v.id));
  const label = side.name;
  await rest.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } } });
  await waitUntil(label, 'the namespace default ServiceAccount', 60_000, async () => {
    await rest.request('GET', `/api/v1/namespaces/${NS}/serviceaccounts/default`);
    return true;
  });
  await rest.request('POST', '/apis/snapshot.storage.k8s.io/v1/volumesnapshotclasses', {
    body: { apiVersion: 'snapshot.storage.k8s.io/v1', kind: 'VolumeSnapshotClass', metadata: { name: SNAPSHOT_CLASS }, driver: 'ebs.csi.aws.com', deletionPolicy: 'Delete' },
  });
  if (options.n > nodes.length * VOLUMES_PER_NODE) throw new Error(`${options.n} pods need more than the ${nodes.length} nodes started`);

  const list = (path: string) => rest.request<List>('GET', path);
  const claims = () => list(`/api/v1/namespaces/${NS}/persistentvolumeclaims`);
  const attachments = () => list('/apis/storage.k8s.io/v1/volumeattachments');
  const phases: PhaseResult[] = [];
  const cpuBefore = usageOf(side.controllers);
  sim.resetStats();

  // create
  const names = Array.from({ length: options.n }, (_, i) => `c-${String(i).padStart(5, '0')}`);
  const created = new Map<string, number>();
  const bound = new Map<string, number>();
  const attached = new Map<string, number>();
  const t0 = performance.now();
  await pool(names, async (name) => {
    created.set(name, performance.now());
    await rest.request('POST', `/api/v1/namespaces/${NS}/persistentvolumeclaims`, { body: claimBody(name) });
    await rest.request('POST', `/api/v1/namespaces/${NS}/pods`, { body: podBody(name, name, nodes[names.indexOf(name) % nodes.length]!.name) });
  });
  const track = async (wanted: readonly string[]) => {
    const now = performance.now();
    const byVolume = new Map<string, string>();
    for (const c of (await claims()).items) {
      const volumeName = (c.spec as { volumeName?: string }).volumeName;
      if (volumeName) byVolume.set(volumeName, c.metadata.name);
      if ((c.status as { phase?: string } | undefined)?.phase === 'Bound' && !bound.has(c.metadata.name)) bound.set(c.metadata.name, now);
    }
    for (const va of (await attachments()).items) {
      const pv = (va.spec as { source?: { persistentVolumeName?: string } }).source?.persistentVolumeName;
      const claim = pv ? byVolume.get(pv) : undefined;
      if (claim && (va.status as { attached?: boolean } | undefined)?.attached === true && !attached.has(claim)) attached.set(claim, now);
    }
    return wanted.filter((n) => bound.has(n) && attached.has(n)).length;
  };
  phases.push(await phase(label, 'create', options.n, options.phaseTimeoutMs, t0, async () => (await track(names)) === options.n, () => `bound ${bound.size}, attached ${attached.size}`, sim));

  // expand
  const grown = names.slice(0, options.expansions);
  const t1 = performance.now();
  await pool(grown, (name) =>
    rest.request('PATCH', `/api/v1/namespaces/${NS}/persistentvolumeclaims/${name}`, { body: { spec: { resources: { requests: { storage: '8Gi' } } } }, contentType: MediaTypes.mergePatch }),
  );
  const isGrown = (c: Obj) => (c.status as { capacity?: { storage?: string } } | undefined)?.capacity?.storage === '8Gi';
  let grownCount = 0;
  phases.push(
    await phase(label, 'expand', grown.length, options.phaseTimeoutMs, t1, async () => {
      const set = new Set(grown);
      grownCount = (await claims()).items.filter((c) => set.has(c.metadata.name) && isGrown(c)).length;
      return grownCount === grown.length;
    }, () => `grown ${grownCount}`, sim),
  );

  // snapshot
  const sources = names.slice(0, options.snapshots);
  const t2 = performance.now();
  await pool(sources, (name) =>
    rest.request('POST', `/apis/snapshot.storage.k8s.io/v1/namespaces/${NS}/volumesnapshots`, {
      body: { apiVersion: 'snapshot.storage.k8s.io/v1', kind: 'VolumeSnapshot', metadata: { name: `s-${name}`, namespace: NS }, spec: { volumeSnapshotClassName: SNAPSHOT_CLASS, source: { persistentVolumeClaimName: name } } },
    }),
  );
  let readySnapshots = 0;
  phases.push(
    await phase(label, 'snapshot', sources.length, options.phaseTimeoutMs, t2, async () => {
      readySnapshots = (await list(`/apis/snapshot.storage.k8s.io/v1/namespaces/${NS}/volumesnapshots`)).items.filter((s) => (s.status as { readyToUse?: boolean } | undefined)?.readyToUse === true).length;
      return readySnapshots === sources.length;
    }, () => `ready ${readySnapshots}`, sim),
  );

  // restore: claims from the snapshots (at the source's grown size, or more), each with a pod
  const restores = sources.map((name) => `r-${name}`);
  const t3 = performance.now();
  await pool(restores, async (name) => {
    const source = name.slice(2);
    await rest.request('POST', `/api/v1/namespaces/${NS}/persistentvolumeclaims`, {
      body: { ...claimBody(name, { dataSource: { apiGroup: 'snapshot.storage.k8s.io', kind: 'VolumeSnapshot', name: `s-${source}` }, resources: { requests: { storage: '8Gi' } } }) },
    });
    await rest.request('POST', `/api/v1/namespaces/${NS}/pods`, { body: podBody(name, name, nodes[(names.indexOf(source) + 1) % nodes.length]!.name) });
  });
  phases.push(await phase(label, 'restore', restores.length, options.phaseTimeoutMs, t3, async () => (await track(restores)) === restores.length, () => `bound+attached ${restores.filter((n) => bound.has(n) && attached.has(n)).length}`, sim));

  // delete: pods (no grace), claims, snapshots
  const t4 = performance.now();
  const all = [...names, ...restores];
  await pool(all, (name) => rest.request('DELETE', `/api/v1/namespaces/${NS}/pods/${name}`, { body: { apiVersion: 'v1', kind: 'DeleteOptions', gracePeriodSeconds: 0 } }).catch(() => undefined));
  await pool(all, (name) => rest.request('DELETE', `/api/v1/namespaces/${NS}/persistentvolumeclaims/${name}`).catch(() => undefined));
  await pool(sources, (name) => rest.request('DELETE', `/apis/snapshot.storage.k8s.io/v1/namespaces/${NS}/volumesnapshots/s-${name}`).catch(() => undefined));
  const leftover = () => ({
    volumes: sim.volumes().filter((v) => !rootVolumes.has(v.id) && v.state !== 'deleted').length,
    snapshots: sim.snapshots().length,
  });
  phases.push(
    await phase(label, 'delete', all.length, options.phaseTimeoutMs, t4, async () => {
      const left = leftover();
      return left.volumes === 0 && left.snapshots === 0;
    }, () => JSON.stringify(leftover()), sim),
  );

  return {
    stack: side.name,
    n: options.n,
    phases,
    claims: names.map((name) => ({ boundMs: bound.has(name) ? bound.get(name)! - t0 : undefined, attachedMs: attached.has(name) ? attached.get(name)! - t0 : undefined })),
    ec2: sim.getStats(),
    volumes: options.n + restores.length,
    controllers: usageOf(side.controllers).map((u, i) => ({ ...u, cpuMs: u.cpuMs === undefined || cpuBefore[i]?.cpuMs === undefined ? undefined : u.cpuMs - cpuBefore[i]!.cpuMs! })),
    leaked: leftover(),
    nodes: nodes.length,
  };
}

async function phase(
  label: string,
  name: PhaseResult['name'],
  count: number,
  timeoutMs: number,
  t0: number,
  done: () => Promise<boolean>,
  progress: () => string,
  sim: Side['sim'],
): Promise<PhaseResult> {
  let nextSay = t0 + 10_000;
  for (;;) {
    const ok = await done().catch(() => false);
    const now = performance.now();
    if (ok) {
      say(`[${label}] ${name}: ${count} in ${((now - t0) / 1000).toFixed(1)} s`);
      return { name, count, ms: now - t0, timedOut: false };
    }
    if (now - t0 > timeoutMs) {
      say(`[${label}] ${name}: TIMEOUT after ${((now - t0) / 1000).toFixed(0)} s (${progress()})`);
      return { name, count, timedOut: true };
    }
    if (now >= nextSay) {
      nextSay += 10_000;
      const stats = sim.getStats();
      say(`[${label}] ${name} ${((now - t0) / 1000).toFixed(0).padStart(4)} s  ${progress()}  EC2 calls ${stats.total.calls} (throttled ${stats.total.throttled})`);
    }
    await sleep(POLL_MS);
  }
}

async function waitUntil(label: string, what: string, timeoutMs: number, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`[${label}] ${what}: not within ${timeoutMs / 1000} s`);
    await sleep(250);
  }
}
