/**
 * Scenario (c): the forwarder's memory with many objects cached. A local Kubernetes API (no
 * controllers) holds `objects` PVCs of ours, already Bound (cached, never sent: a bound claim
 * is not ours to provision), and as many PVs provisioned by us, Bound (each sent once at
 * start-up and answered `done` by a dummy backend on loopback). The forwarder runs as its own
 * process; its RSS is read from /proc/<pid>/status once /readyz says ready, again once the
 * start-up items have been answered and its queue is empty, and once more after it has been idle
 * long enough for V8's memory reducer (which starts 8 s after the last full GC) to have run.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { buildForwarderBundle as buildImageBundle } from '../../infra/forwarder/bundle.js';
import { deploymentLimits, imageNodeFlags, type DeploymentLimits } from '../../infra/forwarder/image.js';
import { Annotations, EBS_DRIVER, Finalizers } from '../../lib/contract/index.js';
import { createObjectStore, startKubeApiServer, type KubeObject, type LocalObjectStore } from '../../lib/local/kube/index.js';
import { csiDriverObject, csiNodeObject, nodeObject, storageClassObjects } from '../../lib/local/stack/cluster-objects.js';
import { startDummyBackend } from './dummy-backend.js';
import { httpGet, procCpuMs, procMemory, promValue } from './proc.js';

export const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

/**
 * `tsx`: `node --import tsx bin/forwarder.ts`, as run locally. `bundle`: the image's
 * esbuild bundle run by plain node with the image's node flags and the Deployment's
 * NODE_OPTIONS, as in a cluster.
 */
export type ForwarderRuntime = 'tsx' | 'bundle';

export interface MemoryResult {
  runtime: ForwarderRuntime;
  objects: number;
  /** Options before the script, as the image's command gives them. */
  nodeFlags: string[];
  nodeOptions: string;
  /** Spawn to /readyz 200. */
  readyMs?: number;
  rssAtReady?: number;
  /** After the start-up items were answered and the queue drained. */
  rssSettled?: number;
  /** `IDLE_MS` after settled, nothing happening meanwhile: after V8's memory reducer. */
  rssIdle?: number;
  /** VmHWM, or the highest VmRSS sampled (every 100 ms) if the process died. */
  peakRss?: number;
  heapUsed?: number;
  heapTotal?: number;
  /** V8 external memory (buffers, array buffers), bytes. */
  external?: number;
  /** Items the dummy backend answered. */
  itemsSent: number;
  requests: number;
  /** Spawn to queue empty with every item answered. */
  drainedMs?: number;
  /** CPU time (user + system) the process used from spawn to ready, ms. */
  cpuAtReadyMs?: number;
  /** CPU time from spawn to the queue drained (the start-up list and items), ms. */
  cpuDrainedMs?: number;
  /**
   * Keys the forwarder logged as too large for one request (never sent, retried with backoff):
   * they stay queued, so the queue is drained when it holds only these.
   */
  tooLarge: string[];
  /** Why there are no settled figures: the process exited (out of memory…) or hung. */
  failure?: string;
}

/** Builds bin/forwarder.ts as infra/forwarder/Dockerfile does (infra/forwarder/bundle.ts); returns the file. */
export async function buildForwarderBundle(dir: string): Promise<string> {
  const outfile = join(dir, 'forwarder.mjs');
  await buildImageBundle(outfile);
  return outfile;
}

type NewObject = Parameters<LocalObjectStore['create']>[1];

/** `count` Bound PVCs of ours, each with its Bound PV provisioned by us, as volhook leaves them. */
export function seedBoundVolumes(store: LocalObjectStore, count: number): void {
  const zones = ['us-east-1a', 'us-east-1b', 'us-east-1c'];
  for (let i = 0; i < count; i++) {
    const name = `data-app-${i}`;
    const pvc = store.create('persistentvolumeclaims', {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: {
        name,
        namespace: 'default',
        labels: { app: 'cached' },
        annotations: {
          [Annotations.storageProvisioner]: EBS_DRIVER,
          [Annotations.betaStorageProvisioner]: EBS_DRIVER,
          'volume.kubernetes.io/selected-node': `ip-10-0-${(i % 3) + 1}-10.ec2.internal`,
        },
      },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '4Gi' } }, storageClassName: 'gp3' },
    });
    const pvName = `pvc-${pvc.metadata.uid}`;
    const zone = zones[i % zones.length]!;
    const pv = store.create('persistentvolumes', {
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: {
        name: pvName,
        annotations: { [Annotations.provisionedBy]: EBS_DRIVER, 'pv.kubernetes.io/bound-by-controller': 'yes' },
        finalizers: [Finalizers.provisioner, 'kubernetes.io/pv-protection'],
      },
      spec: {
        capacity: { storage: '4Gi' },
        accessModes: ['ReadWriteOnce'],
        volumeMode: 'Filesystem',
        persistentVolumeReclaimPolicy: 'Delete',
        storageClassName: 'gp3',
        claimRef: { kind: 'PersistentVolumeClaim', apiVersion: 'v1', namespace: 'default', name, uid: pvc.metadata.uid, resourceVersion: pvc.metadata.resourceVersion },
        csi: { driver: EBS_DRIVER, volumeHandle: `vol-${i.toString(16).padStart(17, '0')}`, fsType: 'ext4' },
        nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: [zone] }] }] } },
      },
    } as NewObject);
    store.updateStatus('persistentvolumes', { ...pv, status: { phase: 'Bound' } });
    const bound = store.update('persistentvolumeclaims', {
      ...pvc,
      metadata: {
        ...pvc.metadata,
        annotations: { ...pvc.metadata.annotations, 'pv.kubernetes.io/bind-completed': 'yes', 'pv.kubernetes.io/bound-by-controller': 'yes' },
        finalizers: ['kubernetes.io/pvc-protection'],
      },
      spec: { ...(pvc.spec as object), volumeName: pvName },
    } as KubeObject);
    store.updateStatus('persistentvolumeclaims', { ...bound, status: { phase: 'Bound', accessModes: ['ReadWriteOnce'], capacity: { storage: '4Gi' } } });
  }
}

function seedCluster(store: LocalObjectStore): void {
  const create = (resource: Parameters<LocalObjectStore['create']>[0], object: unknown) => store.create(resource, object as NewObject);
  const zones = ['us-east-1a', 'us-east-1b', 'us-east-1c'];
  zones.forEach((zone, i) => {
    const node = { name: `ip-10-0-${i + 1}-10.ec2.internal`, zone, instanceId: `i-0000000000000000${i}` };
    create('nodes', nodeObject(node, 'us-east-1'));
    create('csinodes', csiNodeObject(node));
  });
  create('csidrivers', csiDriverObject);
  for (const sc of storageClassObjects) create('storageclasses', sc);
}

export interface MeasureOptions {
  runtime: ForwarderRuntime;
  objects: number;
  /** The bundle, for runtime `bundle`. */
  bundle?: string;
  nodeFlags?: string[];
  nodeOptions?: string;
  timeoutMs?: number;
  /** Called with the forwarder's pid once settled, before it is stopped (for a closer look at its memory). */
  onSettled?: (pid: number) => void | Promise<void>;
}

export async function measureForwarderMemory(options: MeasureOptions): Promise<MemoryResult> {
  const timeoutMs = options.timeoutMs ?? 180_000;
  const store = createObjectStore({ historyLimit: 1000 });
  seedCluster(store);
  seedBoundVolumes(store, options.objects);
  const kube = await startKubeApiServer({ store, port: 0, host: '127.0.0.1' });
  const backend = await startDummyBackend();
  const result: MemoryResult = {
    runtime: options.runtime,
    objects: options.objects,
    nodeFlags: options.nodeFlags ?? [],
    nodeOptions: options.nodeOptions ?? '',
    itemsSent: 0,
    requests: 0,
    tooLarge: [],
  };
  let child: ChildProcess | undefined;
  let sampler: NodeJS.Timeout | undefined;
  const stderr: string[] = [];
  try {
    const env: NodeJS.ProcessEnv = { ...process.env };
    delete env.NODE_OPTIONS;
    Object.assign(env, {
      VOLHOOK_API_URL: backend.url,
      VOLHOOK_CLUSTER_ID: 'bench',
      VOLHOOK_SECRET: 'whsec_YmVuY2htYXJrLW9ubHktbm90LWEtcmVhbC1zZWNyZXQ=',
      VOLHOOK_KUBE_SERVER: kube.url,
      VOLHOOK_PORT: '0',
      VOLHOOK_LISTEN_HOST: '127.0.0.1',
      VOLHOOK_LOG_LEVEL: 'info',
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      ...(options.nodeOptions ? { NODE_OPTIONS: options.nodeOptions } : {}),
    });
    const args = [...result.nodeFlags, ...(options.runtime === 'tsx' ? ['--import', 'tsx', join(repoRoot, 'bin/forwarder.ts')] : [options.bundle!])];
    const spawned = performance.now();
    child = spawn(process.execPath, args, { cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const pid = child.pid!;
    let exited: string | undefined;
    child.once('exit', (code, signal) => (exited = `exited with ${signal ?? code}`));
    child.stderr!.on('data', (chunk: Buffer) => stderr.push(chunk.toString('utf8')));
    // VmHWM dies with the process: keep our own peak, in case it does (out of memory).
    sampler = setInterval(() => {
      const m = procMemory(pid);
      if (m) result.peakRss = Math.max(result.peakRss ?? 0, m.peak, m.rss);
    }, 100);
    let healthPort: number | undefined;
    createInterface({ input: child.stdout! }).on('line', (line) => {
      try {
        const entry = JSON.parse(line) as { msg?: string; port?: number; key?: string };
        if (entry.msg === 'forwarder started' && typeof entry.port === 'number') healthPort = entry.port;
        if (entry.msg?.startsWith('object is too large for one request') && entry.key && !result.tooLarge.includes(entry.key)) result.tooLarge.push(entry.key);
      } catch {
        // not a log line
      }
    });
    const deadline = spawned + timeoutMs;
    const check = (what: string) => {
      if (exited) throw new ForwarderDied(`${exited} while ${what}: ${lastLines(stderr.join(''), 3)}`);
      if (performance.now() > deadline) throw new ForwarderDied(`not ${what} within ${timeoutMs} ms`);
    };
    while (healthPort === undefined) {
      check('starting');
      await sleep(50);
    }
    const base = `http://127.0.0.1:${healthPort}`;
    for (;;) {
      check('ready');
      if ((await httpGet(`${base}/readyz`))?.status === 200) break;
      await sleep(100);
    }
    result.readyMs = performance.now() - spawned;
    result.rssAtReady = procMemory(pid)?.rss;
    result.cpuAtReadyMs = procCpuMs(pid);

    // The start-up items (one per PV of ours) answered, nothing left queued but what cannot be sent.
    let metrics = '';
    for (;;) {
      check('draining its queue');
      result.itemsSent = backend.items;
      result.requests = backend.requests;
      metrics = (await httpGet(`${base}/metrics`, 5000))?.body ?? '';
      if (backend.items >= options.objects && promValue(metrics, 'volhook_forwarder_queue_depth') === result.tooLarge.length) {
        result.drainedMs = performance.now() - spawned;
        result.cpuDrainedMs = procCpuMs(pid);
        break;
      }
      await sleep(250);
    }
    await sleep(2000);
    check('settling');
    metrics = (await httpGet(`${base}/metrics`, 5000))?.body ?? metrics;
    const settled = procMemory(pid);
    result.rssSettled = settled?.rss;
    result.peakRss = Math.max(result.peakRss ?? 0, settled?.peak ?? 0);
    result.heapUsed = promValue(metrics, 'volhook_forwarder_nodejs_heap_size_used_bytes');
    result.heapTotal = promValue(metrics, 'volhook_forwarder_nodejs_heap_size_total_bytes');
    result.external = promValue(metrics, 'volhook_forwarder_nodejs_external_memory_bytes');
    result.itemsSent = backend.items;
    result.requests = backend.requests;
    await sleep(IDLE_MS);
    check('idle');
    result.rssIdle = procMemory(pid)?.rss;
    await options.onSettled?.(pid);
    return result;
  } catch (err) {
    if (!(err instanceof ForwarderDied)) throw err;
    result.failure = err.message;
    result.itemsSent = backend.items;
    result.requests = backend.requests;
    return result;
  } finally {
    clearInterval(sampler);
    if (child && child.exitCode === null && child.signalCode === null) {
      const gone = new Promise((resolve) => child!.once('exit', resolve));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child!.kill('SIGKILL'), 15_000);
      await gone;
      clearTimeout(timer);
    }
    await backend.close();
    await kube.close();
  }
}

/**
 * How long the settled forwarder is left alone before its RSS is read again: V8's memory reducer
 * runs 8 s after the last full GC (`--gc-memory-reducer-start-delay-ms`), when the process
 * allocates little or `--optimize-for-size` is on.
 */
export const IDLE_MS = 12_000;

/** The forwarder exited or hung: a figure of its own (e.g. out of memory), not a bench failure. */
class ForwarderDied extends Error {
  override readonly name = 'ForwarderDied';
}

/** The telling lines of a dead process's stderr: V8's fatal error if there is one, else the last few. */
function lastLines(text: string, count: number): string {
  const lines = text.trim().split('\n');
  const fatal = lines.filter((l) => /FATAL ERROR|out of memory|^\w*Error\b/.test(l));
  return (fatal.length > 0 ? fatal : lines.slice(-count)).join(' | ').slice(0, 500);
}

/** Every runtime × (idle, loaded), building the bundle once. */
export async function measureAll(objects: number, onEach: (r: MemoryResult) => void): Promise<{ results: MemoryResult[]; limits: DeploymentLimits }> {
  const limits = deploymentLimits();
  const dir = mkdtempSync(join(tmpdir(), 'volhook-bench-'));
  const results: MemoryResult[] = [];
  try {
    const bundle = await buildForwarderBundle(dir);
    const nodeFlags = imageNodeFlags();
    const runs: MeasureOptions[] = [
      { runtime: 'tsx', objects: 0 },
      { runtime: 'tsx', objects },
      { runtime: 'bundle', objects: 0, bundle, nodeFlags, nodeOptions: limits.nodeOptions },
      { runtime: 'bundle', objects, bundle, nodeFlags, nodeOptions: limits.nodeOptions },
    ];
    for (const run of runs) {
      const result = await measureForwarderMemory(run);
      results.push(result);
      onEach(result);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return { results, limits };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
