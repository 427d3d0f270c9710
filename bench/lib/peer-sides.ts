/**
 * The two stacks of `npm run bench -- --peer ebs-csi`, each on a fresh real control plane
 * (tools/kube) and a fresh EC2 simulator with the same options (time scale, seed, AWS's
 * buckets): volhook — its backend and forwarder each a process of its own (so their CPU and
 * memory can be read from /proc), the forwarder under its chart's ServiceAccount — and the
 * reference EBS CSI controller stack (lib/local/peer). The common snapshot-controller runs with
 * either (it is the cluster's, not the driver's). Never both on one cluster.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ebsCsiDriverPrincipal, type Ec2Simulator } from '../../lib/local/ec2/index.js';
import { startEbsCsiPeer, startSnapshotController } from '../../lib/local/peer/ebs-csi.js';
import { EBS_CSI_DRIVER_KEY } from '../../lib/local/peer/peer-stack.js';
import { kubeconfigText } from '../../lib/local/plane/kubeconfig.js';
import { freePort, type PlaneProcess } from '../../lib/local/plane/processes.js';
import { localPaths, startLocalStack, type RealLocalStack } from '../../lib/local/stack/index.js';
import type { RealPlaneInputs } from '../../tools/kube/inputs.js';
import { VOLUMES_PER_NODE } from './bench-stack.js';
import { readyUrl } from './fleet-processes.js';
import { repoRoot } from './forwarder-memory.js';
import { httpGet } from './proc.js';

export const PEER_STACKS = ['volhook', 'ebs-csi'] as const;
export type PeerStackName = (typeof PEER_STACKS)[number];

const ZONES = ['us-east-1a', 'us-east-1b', 'us-east-1c'];
/** The simulator's default snapshot latency's median, for every snapshot (lib/local/ec2/config.ts). */
export const SNAPSHOT_MEDIAN = { kind: 'fixed', ms: 90_000 } as const;

/** A controller process measured by the bench: its name and pid. */
export interface MeasuredProcess {
  name: string;
  pid: number;
}

export interface Side {
  name: PeerStackName;
  stack: RealLocalStack;
  sim: Ec2Simulator;
  /** What the CPU and memory figures sum: forwarder + backend, or the driver and its four sidecars. */
  controllers: MeasuredProcess[];
  /** Where the processes' logs are. */
  dir: string;
  stop(): Promise<void>;
}

export interface SideOptions {
  name: PeerStackName;
  inputs: RealPlaneInputs;
  binDir: string;
  timeScale: number;
  seed: number;
  /** Pods the run places: decides the nodes (24 volumes each). */
  pods: number;
}

export async function startSide(options: SideOptions): Promise<Side> {
  const dir = await mkdtemp(join(tmpdir(), `volhook-bench-${options.name}-`));
  const cleanups: Array<() => Promise<void>> = [];
  const stopAll = async () => {
    for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
  };
  try {
    const host = '127.0.0.1';
    const ec2Port = await freePort(host);
    const common = {
      ports: { backend: 0, ec2: ec2Port, kube: 0 },
      zones: ZONES,
      nodesPerZone: Math.max(1, Math.ceil(options.pods / VOLUMES_PER_NODE / ZONES.length)),
      // EC2's snapshot time is a draw from a long tail (median 90 s, p99 10 min): at AWS's
      // median for every snapshot, the snapshot phase measures the controllers, not the tail.
      ec2: { timeScale: options.timeScale, seed: options.seed, latency: { snapshot: SNAPSHOT_MEDIAN } },
      kube: { ...options.inputs, dir: join(dir, 'kube') },
      forwarder: false as const,
    };
    const controllers: MeasuredProcess[] = [];
    let stack: RealLocalStack;
    if (options.name === 'volhook') {
      const localDir = join(dir, 'local');
      const backend = await startBackendChild({
        VOLHOOK_REGISTRY_FILE: localPaths(localDir).registryFile,
        VOLHOOK_BENCH_EC2_ENDPOINT: `http://${host}:${ec2Port}`,
        VOLHOOK_BUDGET_TIME_SCALE: String(options.timeScale),
      }, join(dir, 'backend.log'));
      cleanups.push(backend.stop);
      controllers.push({ name: 'backend', pid: backend.pid });
      stack = await startLocalStack({ ...common, localDir, backendUrl: backend.url });
      cleanups.push(() => stack.stop());
      const forwarder = await startForwarderChild(stack, dir);
      cleanups.push(forwarder.stop);
      controllers.push({ name: 'forwarder', pid: forwarder.pid });
    } else {
      stack = await startLocalStack(common);
      cleanups.push(() => stack.stop());
      stack.simulator!.addPrincipal(EBS_CSI_DRIVER_KEY.accessKeyId, ebsCsiDriverPrincipal());
      const peer = await startEbsCsiPeer({
        binDir: options.binDir,
        dir: join(dir, 'ebs-csi'),
        ec2Endpoint: stack.urls.ec2,
        region: stack.region,
        credentials: EBS_CSI_DRIVER_KEY,
        kubeconfig: stack.kubeconfig,
        snapshotController: false,
      });
      cleanups.push(() => peer.stop());
      controllers.push(...peer.controllers.map((p) => ({ name: p.name, pid: p.pid })));
    }
    const snapshotController = await startSnapshotController({ binDir: options.binDir, dir: join(dir, 'snapshot-controller'), kubeconfig: stack.kubeconfig });
    cleanups.push(() => snapshotController.stop());
    const sim = stack.simulator!;
    return { name: options.name, stack, sim, controllers, dir, stop: async () => {
      await stopAll();
      await rm(dir, { recursive: true, force: true });
    } };
  } catch (err) {
    await stopAll();
    throw new Error(`starting the ${options.name} side failed (logs under ${dir}): ${err instanceof Error ? err.message : String(err)}`);
  }
}

interface Child {
  pid: number;
  stop(): Promise<void>;
}

function childOf(child: ChildProcess, name: string): Child {
  if (child.pid === undefined) throw new Error(`${name} did not start`);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    pid: child.pid,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** bench/lib/backend-process.ts as a child: the registry file the stack writes, EC2 at the simulator's port (bound a moment later). */
async function startBackendChild(env: Record<string, string>, log: string): Promise<Child & { url: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(repoRoot, 'bench/lib/backend-process.ts')], {
    cwd: repoRoot,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const handle = childOf(child, 'backend');
  let errors = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    errors = (errors + chunk.toString()).slice(-20_000);
  });
  try {
    const url = await readyUrl(child, () => errors);
    return {
      ...handle,
      url,
      async stop() {
        await handle.stop();
        await writeFile(log, errors).catch(() => undefined);
      },
    };
  } catch (err) {
    await handle.stop();
    throw err;
  }
}

/**
 * bin/forwarder.ts as a child with production settings, reaching the plane as its chart's
 * ServiceAccount: a kubeconfig holding a token of that account from the TokenRequest API,
 * valid for 6 hours (longer than any run).
 */
async function startForwarderChild(stack: RealLocalStack, dir: string): Promise<Child> {
  const { namespace, serviceAccount } = stack.real.forwarder;
  const admin = stack.real.plane.rest();
  const request = await admin.request<{ status: { token: string } }>('POST', `/api/v1/namespaces/${namespace}/serviceaccounts/${serviceAccount}/token`, {
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 6 * 3600 } },
  });
  const kubeconfig = join(dir, 'forwarder.kubeconfig');
  await writeFile(kubeconfig, kubeconfigText({ server: stack.real.url, token: request.status.token, caData: stack.real.caData }), { mode: 0o600 });
  const port = await freePort('127.0.0.1');
  const child = spawn(process.execPath, ['--import', 'tsx', join(repoRoot, 'bin/forwarder.ts')], {
    cwd: repoRoot,
    env: {
      PATH: process.env.PATH,
      HOME: dir,
      KUBECONFIG: kubeconfig,
      VOLHOOK_API_URL: stack.urls.backend,
      VOLHOOK_CLUSTER_ID: stack.clusterId,
      VOLHOOK_SECRET: stack.secret,
      VOLHOOK_PORT: String(port),
      VOLHOOK_LISTEN_HOST: '127.0.0.1',
      VOLHOOK_LOG_LEVEL: 'warn',
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const handle = childOf(child, 'forwarder');
  let errors = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    errors = (errors + chunk.toString()).slice(-20_000);
  });
  const deadline = Date.now() + 90_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the forwarder exited (${child.exitCode}): ${errors}`);
    if ((await httpGet(`http://127.0.0.1:${port}/readyz`))?.status === 200) return handle;
    if (Date.now() > deadline) {
      await handle.stop();
      throw new Error(`the forwarder not ready in 90 s: ${errors}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
