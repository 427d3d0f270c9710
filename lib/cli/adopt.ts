/**
 * `npm run cluster -- adopt <id>`: hands the disks of a cluster's EBS PersistentVolumes — made
 * by the EBS CSI controller, or by the in-tree plugin before CSI migration — to volhook by
 * tagging them as volhook tags its own (see adopt-plan.ts for the tags and why), and gives the
 * cluster's own disks and snapshots that lack `volhook.io/cluster` (made before volhook wrote
 * it) that tag. A dry run unless `--apply`; the exit code is the same either way: 1 when a
 * disk or snapshot of the cluster is (or would be) left not adopted — another cluster's, a
 * conflicting tag, a failed CreateTags — else 0. A PV whose disk does not exist is reported;
 * it needs no tag.
 *
 * Runs with the operator's AWS credentials (the SDK's default chain): the function's role can
 * tag only while creating a volume, so it can never pull an existing disk into its scope.
 */
import { EC2Client } from '@aws-sdk/client-ec2';
import type { KubeConfig } from '@kubernetes/client-node';
import { createEc2Gateway } from '../ec2/index.js';
import { parseRegistration } from '../registry/file-registry.js';
import { describeDisks, tagResources } from './adopt-ec2.js';
import { adoptionExitCode, planAdoption, planSnapshots, planUnnamedDisks, type DiskAdoption, type SnapshotAdoption } from './adopt-plan.js';
import { listClusterPvs, loadKubeConfig, pvDisks, readPvFile, type AdoptPv } from './adopt-pvs.js';
import { adoptionJson, adoptionSummary, adoptionTable, type AdoptionReport } from './adopt-report.js';
import type { AdoptCommand, PvSource } from './args.js';
import { EXIT } from './exit.js';
import { startProgress, type Progress, type ProgressTimer } from './progress.js';
import { LOCAL_CREDENTIALS, localKubeConfig, type LocalCredentials, type LocalStackDescriptor } from './local-stack.js';
import type { RegistrationStore } from './stores.js';

export interface AdoptIo {
  stdout(text: string): void;
  stderr(text: string): void;
  env?: NodeJS.ProcessEnv;
  /**
   * EC2 client factory; tests give one with fixed credentials. Default: the SDK's default chain
   * (the local stack's simulator and keys for its cluster).
   */
  ec2Client?(region: string, endpoint?: string, credentials?: LocalCredentials): EC2Client;
  /** The progress lines' clock and timer; default the system's. */
  progressTimer?: ProgressTimer;
}

/** The PVs as read while the arguments are checked: a file's, or the kubeconfig to list them with. */
export type OpenedPvSource = { kind: 'file'; pvs: AdoptPv[] } | { kind: 'cluster'; kubeConfig: KubeConfig };

/**
 * Reads `--pvs` or loads the kubeconfig; a problem with either is a UsageError naming it. With
 * neither --kubeconfig nor --context, the local stack's Kubernetes API when it applies.
 */
export async function openPvSource(source: PvSource, local?: LocalStackDescriptor): Promise<OpenedPvSource> {
  if (source.kind === 'file') return { kind: 'file', pvs: await readPvFile(source.path) };
  if (local && source.kubeconfig === undefined && source.context === undefined) return { kind: 'cluster', kubeConfig: localKubeConfig(local) };
  return { kind: 'cluster', kubeConfig: loadKubeConfig(source) };
}

export async function runAdopt(command: AdoptCommand, opened: OpenedPvSource, store: RegistrationStore, io: AdoptIo, local?: LocalStackDescriptor): Promise<number> {
  const { clusterId } = command;
  const fail = (message: string) => {
    io.stderr(`error: ${message}\n`);
    return EXIT.failed;
  };

  // The registration first: a mistyped id would tag disks for a cluster volhook does not
  // know, and a later adopt under the right id would then refuse them as another cluster's.
  const raw = await store.read(clusterId);
  if (raw === undefined) return fail(`cluster "${clusterId}" is not registered in ${store.describe(clusterId)}; register it first (npm run cluster -- add)`);
  const registered = parseRegistration(clusterId, raw);
  const region = command.region ?? registered.region;
  if (region !== registered.region) io.stderr(`warning: cluster "${clusterId}" is registered in ${registered.region}; volhook looks for its disks there, not in ${region}\n`);

  let pvs: AdoptPv[];
  if (opened.kind === 'file') {
    pvs = opened.pvs;
  } else {
    try {
      pvs = await listClusterPvs(opened.kubeConfig);
    } catch (err) {
      return fail(`reading PersistentVolumes from ${opened.kubeConfig.getCurrentCluster()?.server ?? 'the cluster'}: ${(err as Error).message}`);
    }
  }
  const { ours, others } = pvDisks(pvs);

  const env = io.env ?? {};
  const endpoint = local?.ec2Endpoint ?? (env.AWS_ENDPOINT_URL_EC2 || env.AWS_ENDPOINT_URL || undefined);
  const credentials = local && { ...LOCAL_CREDENTIALS };
  const client = io.ec2Client ? io.ec2Client(region, endpoint, credentials) : new EC2Client({ region, ...(endpoint && { endpoint }), ...(credentials && { credentials }) });
  const progress = startProgress({ label: `adopt ${clusterId}`, write: (line) => io.stderr(`${line}\n`), ...(io.progressTimer && { timer: io.progressTimer }) });
  try {
    let disks: DiskAdoption[];
    let snapshots: SnapshotAdoption[];
    try {
      const gateway = createEc2Gateway({ client, clusterId, observer: { call: () => progress.call() } });
      const named = ours.flatMap((pv) => (pv.volumeId ? [pv.volumeId] : []));
      const [found, listed, listedSnapshots] = await Promise.all([describeDisks(gateway, named), gateway.listClusterDisks(), gateway.listClusterSnapshots()]);
      disks = [...planAdoption(clusterId, ours, found), ...planUnnamedDisks(clusterId, listed, new Set(named))];
      snapshots = planSnapshots(clusterId, listedSnapshots);
    } catch (err) {
      return fail(`describing the disks and snapshots in ${region}: ${(err as Error).message}; nothing was tagged`);
    }
    if (command.apply) [disks, snapshots] = await apply(client, disks, snapshots, progress);
    progress.finish();

    const report: AdoptionReport = { clusterId, region, applied: command.apply, otherPvs: others, disks, snapshots };
    io.stdout(command.json ? adoptionJson(report) : adoptionTable(report));
    io.stderr(adoptionSummary(report));
    return adoptionExitCode(disks, snapshots);
  } finally {
    progress.finish();
    if (!io.ec2Client) client.destroy();
  }
}

/** Tags the disks and snapshots planned `tag`; each becomes `tagged` or `failed` with EC2's reason. */
async function apply(client: EC2Client, disks: DiskAdoption[], snapshots: SnapshotAdoption[], progress: Progress): Promise<[DiskAdoption[], SnapshotAdoption[]]> {
  const requests = [
    ...disks.filter((d) => d.status === 'tag').map(({ volumeId, tags }) => ({ id: volumeId, tags })),
    ...snapshots.filter((s) => s.status === 'tag').map(({ snapshotId, tags }) => ({ id: snapshotId, tags })),
  ];
  progress.goal(requests.length, 'disk(s) and snapshot(s) tagged');
  const failures = await tagResources(client, requests, (tagged) => {
    progress.call();
    progress.step(tagged);
  });
  const outcome = <T extends { status: string; detail?: string }>(row: T, id: string): T => {
    if (row.status !== 'tag') return row;
    const error = failures.get(id);
    return error === undefined ? { ...row, status: 'tagged' } : { ...row, status: 'failed', detail: error };
  };
  return [disks.map((d) => outcome(d, d.volumeId)), snapshots.map((s) => outcome(s, s.snapshotId))];
}
