/**
 * The reference EBS CSI controller stack as a peer of volhook (issue 40): the driver
 * (aws-ebs-csi-driver v1.63.0 in controller mode, serving CSI on a unix socket, EC2 at the
 * simulator with a key held to AmazonEBSCSIDriverPolicy) and the sidecars the driver's chart
 * runs beside it — csi-provisioner, csi-attacher, csi-resizer, csi-snapshotter — plus the
 * snapshot-controller, each with the chart's flags (chartFlags below) and built by
 * `npm run ebs-csi:build` into tools/ebs-csi/bin. Each is a process of its own in its own
 * process group (lib/local/plane/processes.ts), stopped with `stop()`.
 *
 * It runs against the real control plane (lib/local/plane) with volhook's forwarder NOT
 * running (`startLocalStack({ forwarder: false, kube })`), so the two never serve one
 * cluster. The sidecars are given the kubeconfig they are handed — the plane's administrator
 * in the bench and the test, where the chart's ClusterRoles would be (not rendered here).
 * Nothing listens on the network: no `--http-endpoint`/`--metrics-address` is passed.
 */
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startProcess, type PlaneProcess } from '../plane/processes.js';

/** The binaries, by name, as tools/ebs-csi/components.json builds them. */
export const EBS_CSI_BINARIES = ['aws-ebs-csi-driver', 'csi-provisioner', 'csi-attacher', 'csi-resizer', 'csi-snapshotter', 'snapshot-controller'] as const;
export type EbsCsiBinary = (typeof EBS_CSI_BINARIES)[number];

export interface EbsCsiPeerOptions {
  /** Where the binaries are (tools/ebs-csi/bin). */
  binDir: string;
  /** The socket, the kubeconfig and one log per process. */
  dir: string;
  /** The EC2 endpoint (the simulator's URL). */
  ec2Endpoint: string;
  region: string;
  /** The driver's key: one the simulator holds to AmazonEBSCSIDriverPolicy (ebsCsiDriverPrincipals). */
  credentials: { accessKeyId: string; secretAccessKey: string };
  /** The kubeconfig the sidecars and snapshot-controller use (text). */
  kubeconfig: string;
  /** How long to wait for the driver's socket. */
  timeoutMs?: number;
  /**
   * Also run the common snapshot-controller (default true). It is the cluster's, not the
   * driver's (EKS's snapshot-controller add-on): the bench runs it for either stack alike.
   */
  snapshotController?: boolean;
}

export interface EbsCsiPeer {
  socket: string;
  /** Every process started, driver first. */
  processes: readonly PlaneProcess[];
  /** The driver's controller stack: the driver and its four sidecars (not snapshot-controller). */
  controllers: readonly PlaneProcess[];
  dir: string;
  stop(): Promise<void>;
}

/**
 * The flags each process gets, as the driver's chart (charts/aws-ebs-csi-driver v1.63.0,
 * templates/controller.yaml with its values.yaml defaults) sets them, except: leader election
 * off (one replica, no Lease to win), no metrics endpoints, `--v=2` (the chart's logLevel).
 * snapshot-controller is not in the chart: it is external-snapshotter's own deployment
 * (deploy/kubernetes/snapshot-controller), whose args are `--v=5 --leader-election=true`.
 * Pure.
 */
export function chartFlags(socket: string, kubeconfig: string): Record<EbsCsiBinary, string[]> {
  const sidecar = [`--csi-address=${socket}`, `--kubeconfig=${kubeconfig}`, '--v=2', '--leader-election=false'];
  const api = ['--kube-api-qps=20', '--kube-api-burst=100'];
  return {
    'aws-ebs-csi-driver': ['controller', `--endpoint=unix://${socket}`, '--batching=true', '--v=2'],
    'csi-provisioner': [
      ...sidecar,
      '--timeout=60s',
      '--feature-gates=Topology=true',
      '--extra-create-metadata',
      '--default-fstype=ext4',
      ...api,
      '--worker-threads=100',
      '--retry-interval-max=30m',
    ],
    // Kubernetes ≥ 1.33: the chart adds the MutableCSINodeAllocatableCount gate.
    'csi-attacher': [...sidecar, '--timeout=6m', ...api, '--worker-threads=100', '--retry-interval-max=5m', '--feature-gates=MutableCSINodeAllocatableCount=true'],
    'csi-resizer': [...sidecar, '--timeout=60s', '--extra-modify-metadata', '--handle-volume-inuse-error=false', ...api, '--workers=100', '--retry-interval-max=30m'],
    'csi-snapshotter': [...sidecar, '--extra-create-metadata', ...api, '--worker-threads=100', '--retry-interval-max=30m'],
    'snapshot-controller': [`--kubeconfig=${kubeconfig}`, '--v=2', '--leader-election=false'],
  };
}

/** The driver's environment: EC2 at `ec2Endpoint`, the static key, no instance metadata. Pure. */
export function driverEnv(options: Pick<EbsCsiPeerOptions, 'ec2Endpoint' | 'region' | 'credentials'>): NodeJS.ProcessEnv {
  return {
    AWS_EC2_ENDPOINT: options.ec2Endpoint,
    AWS_REGION: options.region,
    AWS_ACCESS_KEY_ID: options.credentials.accessKeyId,
    AWS_SECRET_ACCESS_KEY: options.credentials.secretAccessKey,
    AWS_EC2_METADATA_DISABLED: 'true',
  };
}

/** The binaries missing from `binDir`, by name. */
export function missingBinaries(binDir: string): EbsCsiBinary[] {
  return EBS_CSI_BINARIES.filter((name) => !existsSync(join(binDir, name)));
}

/**
 * The common snapshot-controller alone, as external-snapshotter deploys it (for a stack that is
 * not the driver's: volhook does csi-snapshotter's part, the cluster runs this one).
 */
export async function startSnapshotController(options: { binDir: string; dir: string; kubeconfig: string }): Promise<PlaneProcess> {
  const binary = join(options.binDir, 'snapshot-controller');
  if (!existsSync(binary)) throw new Error(`no snapshot-controller in ${options.binDir}: run npm run ebs-csi:build`);
  await mkdir(join(options.dir, 'logs'), { recursive: true, mode: 0o700 });
  const kubeconfig = join(options.dir, 'snapshot-controller.kubeconfig');
  await writeFile(kubeconfig, options.kubeconfig, { mode: 0o600 });
  return startProcess('snapshot-controller', binary, chartFlags('', kubeconfig)['snapshot-controller'], join(options.dir, 'logs', 'snapshot-controller.log'));
}

export async function startEbsCsiPeer(options: EbsCsiPeerOptions): Promise<EbsCsiPeer> {
  const missing = missingBinaries(options.binDir);
  if (missing.length > 0) throw new Error(`no ${missing.join(', ')} in ${options.binDir}: run npm run ebs-csi:build`);
  const dir = options.dir;
  await mkdir(join(dir, 'logs'), { recursive: true, mode: 0o700 });
  const socket = join(dir, 'csi.sock');
  const kubeconfig = join(dir, 'kubeconfig');
  await writeFile(kubeconfig, options.kubeconfig, { mode: 0o600 });
  const flags = chartFlags(socket, kubeconfig);
  const processes: PlaneProcess[] = [];
  const stop = async () => {
    for (const p of processes.splice(0).reverse()) await p.stop();
  };
  const start = (name: EbsCsiBinary, env: NodeJS.ProcessEnv = {}) => {
    const p = startProcess(name, join(options.binDir, name), flags[name], join(dir, 'logs', `${name}.log`), env);
    processes.push(p);
    return p;
  };
  try {
    const driver = start('aws-ebs-csi-driver', driverEnv(options));
    const deadline = Date.now() + (options.timeoutMs ?? 60_000);
    while (!existsSync(socket)) {
      if (driver.done()) throw new Error(`aws-ebs-csi-driver exited (${await driver.exited}) before serving ${socket}; its log: ${driver.log}`);
      if (Date.now() > deadline) throw new Error(`aws-ebs-csi-driver: no socket at ${socket} within the time allowed; its log: ${driver.log}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    for (const name of EBS_CSI_BINARIES.slice(1)) {
      if (name !== 'snapshot-controller' || options.snapshotController !== false) start(name);
    }
    // A sidecar refused its flags or its kubeconfig: it exits at once, say so now.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const dead = processes.find((p) => p.done());
    if (dead) throw new Error(`${dead.name} exited (${await dead.exited}) at start; its log: ${dead.log}`);
    return { socket, processes: [...processes], controllers: processes.filter((p) => p.name !== 'snapshot-controller'), dir, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
