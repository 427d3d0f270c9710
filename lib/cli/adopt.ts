/**
 * `npm run cluster -- adopt <id>`: hands the disks of a cluster's EBS PersistentVolumes — made
 * by the EBS CSI controller, or by the in-tree plugin before CSI migration — to volhook by
 * tagging them as volhook tags its own (see adopt-plan.ts for the tags and why). A dry run
 * unless `--apply`; the exit code is the same either way: 1 when a disk a PV names is (or
 * would be) left not owned by the cluster — another cluster's, a conflicting tag, a failed
 * CreateTags — else 0. A PV whose disk does not exist is reported; it needs no tag.
 *
 * Runs with the operator's AWS credentials (the SDK's default chain): the function's role can
 * tag only while creating a volume, so it can never pull an existing disk into its scope.
 */
import { EC2Client } from '@aws-sdk/client-ec2';
import type { KubeConfig } from '@kubernetes/client-node';
import { createEc2Gateway } from '../ec2/index.js';
import { parseRegistration } from '../registry/file-registry.js';
import { describeDisks, tagDisks } from './adopt-ec2.js';
import { adoptionExitCode, planAdoption, type DiskAdoption } from './adopt-plan.js';
import { listClusterPvs, loadKubeConfig, pvDisks, readPvFile, type AdoptPv } from './adopt-pvs.js';
import { adoptionJson, adoptionSummary, adoptionTable, type AdoptionReport } from './adopt-report.js';
import type { AdoptCommand, PvSource } from './args.js';
import { EXIT } from './exit.js';
import type { RegistrationStore } from './stores.js';

export interface AdoptIo {
  stdout(text: string): void;
  stderr(text: string): void;
  env?: NodeJS.ProcessEnv;
  /** EC2 client factory; tests give one with fixed credentials. Default: the SDK's default chain. */
  ec2Client?(region: string, endpoint?: string): EC2Client;
}

/** The PVs as read while the arguments are checked: a file's, or the kubeconfig to list them with. */
export type OpenedPvSource = { kind: 'file'; pvs: AdoptPv[] } | { kind: 'cluster'; kubeConfig: KubeConfig };

/** Reads `--pvs` or loads the kubeconfig; a problem with either is a UsageError naming it. */
export async function openPvSource(source: PvSource): Promise<OpenedPvSource> {
  return source.kind === 'file' ? { kind: 'file', pvs: await readPvFile(source.path) } : { kind: 'cluster', kubeConfig: loadKubeConfig(source) };
}

export async function runAdopt(command: AdoptCommand, opened: OpenedPvSource, store: RegistrationStore, io: AdoptIo): Promise<number> {
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
  const endpoint = env.AWS_ENDPOINT_URL_EC2 || env.AWS_ENDPOINT_URL || undefined;
  const client = io.ec2Client ? io.ec2Client(region, endpoint) : new EC2Client({ region, ...(endpoint && { endpoint }) });
  try {
    let disks: DiskAdoption[];
    try {
      const found = await describeDisks(createEc2Gateway({ client, clusterId }), ours.flatMap((pv) => (pv.volumeId ? [pv.volumeId] : [])));
      disks = planAdoption(clusterId, ours, found);
    } catch (err) {
      return fail(`DescribeVolumes in ${region}: ${(err as Error).message}; nothing was tagged`);
    }
    if (command.apply) disks = await apply(client, disks);

    const report: AdoptionReport = { clusterId, region, applied: command.apply, otherPvs: others, disks };
    io.stdout(command.json ? adoptionJson(report) : adoptionTable(report));
    io.stderr(adoptionSummary(report));
    return adoptionExitCode(disks);
  } finally {
    if (!io.ec2Client) client.destroy();
  }
}

/** Tags the disks planned `tag`; each becomes `tagged` or `failed` with EC2's reason. */
async function apply(client: EC2Client, disks: DiskAdoption[]): Promise<DiskAdoption[]> {
  const failures = await tagDisks(
    client,
    disks.filter((d) => d.status === 'tag').map(({ volumeId, tags }) => ({ volumeId, tags })),
  );
  return disks.map((d) => {
    if (d.status !== 'tag') return d;
    const error = failures.get(d.volumeId);
    return error === undefined ? { ...d, status: 'tagged' } : { ...d, status: 'failed', detail: error };
  });
}
