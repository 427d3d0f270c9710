/**
 * The PersistentVolumes `cluster adopt` works from — a `kubectl get pv -o json` file or the
 * cluster itself, through a kubeconfig — and the EBS disk each one of ours names. The cluster's
 * own PVs are the evidence that a disk is its: without `--k8s-tag-cluster-id` the EBS CSI
 * controller writes nothing on a disk that names the cluster (`ebs.csi.aws.com/cluster=true`
 * is the same in every cluster of the account), so disks are found by joining PVs to them.
 */
import { readFile } from 'node:fs/promises';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import * as z from 'zod';
import { EBS_DRIVER } from '../contract/index.js';
import { kubernetesVolumeIdToEbsVolumeId } from '../migration/index.js';
import { UsageError, type PvSource } from './args.js';

/** What adopt reads of a PV; every other field passes, whatever the cluster's version. */
export const AdoptPvSchema = z.looseObject({
  kind: z.literal('PersistentVolume').optional(),
  metadata: z.looseObject({ name: z.string().min(1) }),
  spec: z
    .looseObject({
      csi: z.looseObject({ driver: z.string(), volumeHandle: z.string() }).nullish(),
      awsElasticBlockStore: z.looseObject({ volumeID: z.string() }).nullish(),
      claimRef: z.looseObject({ namespace: z.string().optional(), name: z.string().optional() }).nullish(),
    })
    .default({}),
});
export type AdoptPv = z.infer<typeof AdoptPvSchema>;

/** `kubectl get pv -o json` (a List) or `kubectl get pv <name> -o json` (one PV). */
export const PvFileSchema = z.union([
  z.looseObject({ items: z.array(AdoptPvSchema) }),
  AdoptPvSchema.extend({ kind: z.literal('PersistentVolume') }).transform((pv) => ({ items: [pv] })),
]);

/** A PV of ours and the disk it names. */
export interface PvDisk {
  pv: string;
  /** `csi` (driver ebs.csi.aws.com) or `in-tree` (awsElasticBlockStore, CSI migration). */
  source: 'csi' | 'in-tree';
  /** The EBS volume ID, when the PV's ID is one (see {@link ebsVolumeId}). */
  volumeId?: string;
  /** The ID as the PV writes it, for messages. */
  given: string;
  /** The claim the PV is (or was) bound to. */
  claim?: { namespace: string; name: string };
}

export interface PvsOfCluster {
  /** Every PV of ours, in name order. */
  ours: PvDisk[];
  /** PVs of other drivers and plugins, left out. */
  others: number;
}

/** EBS volume IDs as EC2 issues them (`vol-` and 8 or 17 hex digits). */
const VOLUME_ID = /^vol-[0-9a-f]+$/;

/**
 * The EBS volume ID a PV's ID names: a CSI volumeHandle, or an in-tree `aws://<zone>/vol-…`,
 * `aws:///vol-…` or bare `vol-…` read as CSI migration reads it. Undefined when that is no
 * EBS volume ID (csi-translation-lib passes a bare ID unchecked; adopt has nothing to tag).
 */
export function ebsVolumeId(kubernetesId: string): string | undefined {
  let id: string;
  try {
    id = kubernetesVolumeIdToEbsVolumeId(kubernetesId);
  } catch {
    return undefined;
  }
  return VOLUME_ID.test(id) ? id : undefined;
}

/** Pure: the PVs of ours among `pvs` and their disks; others are only counted. */
export function pvDisks(pvs: readonly AdoptPv[]): PvsOfCluster {
  const ours: PvDisk[] = [];
  let others = 0;
  for (const pv of pvs) {
    const { csi, awsElasticBlockStore: inTree, claimRef } = pv.spec;
    const given = csi?.driver === EBS_DRIVER ? csi.volumeHandle : inTree?.volumeID;
    if (given === undefined) {
      others++;
      continue;
    }
    const volumeId = ebsVolumeId(given);
    ours.push({
      pv: pv.metadata.name,
      source: csi?.driver === EBS_DRIVER ? 'csi' : 'in-tree',
      given,
      ...(volumeId !== undefined && { volumeId }),
      ...(claimRef?.namespace && claimRef.name ? { claim: { namespace: claimRef.namespace, name: claimRef.name } } : {}),
    });
  }
  ours.sort((a, b) => a.pv.localeCompare(b.pv));
  return { ours, others };
}

/** The PVs of a `--pvs` file; an unreadable or malformed file is a UsageError naming it. */
export async function readPvFile(path: string): Promise<AdoptPv[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new UsageError(`--pvs: cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new UsageError(`--pvs: ${path} is not JSON (write it with: kubectl get pv -o json > ${path})`);
  }
  const parsed = PvFileSchema.safeParse(json);
  if (!parsed.success) {
    throw new UsageError(`--pvs: ${path} is not the output of kubectl get pv -o json:\n${z.prettifyError(parsed.error)}`);
  }
  return parsed.data.items;
}

/**
 * The kubeconfig to read the cluster with (adopt's PVs, release's objects): `--kubeconfig`,
 * else client-node's default (KUBECONFIG, ~/.kube/config, in-cluster); `--context`, else its
 * current context. Problems with either are UsageErrors naming the option, raised before
 * anything is read from a cluster.
 */
export function loadKubeConfig(source: Extract<PvSource, { kind: 'cluster' }>): KubeConfig {
  const kc = new KubeConfig();
  const option = source.kubeconfig !== undefined ? '--kubeconfig' : 'the default kubeconfig (KUBECONFIG, ~/.kube/config)';
  try {
    if (source.kubeconfig !== undefined) kc.loadFromFile(source.kubeconfig);
    else kc.loadFromDefault();
  } catch (err) {
    throw new UsageError(`${option}: cannot load it (${(err as Error).message})`);
  }
  if (source.context !== undefined) {
    if (!kc.getContextObject(source.context)) throw new UsageError(`--context: no context "${source.context}" in ${option}`);
    kc.setCurrentContext(source.context);
  }
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new UsageError(`${option}: no current context with a cluster; name one with --context`);
  const problem = plainHttpProblem(cluster);
  if (problem) throw new UsageError(`${source.kubeconfig !== undefined ? `--kubeconfig ${source.kubeconfig}` : option}: ${problem}`);
  return kc;
}

/**
 * client-node refuses a plain-http server unless its cluster skips TLS verification, in its
 * own words ("HTTP protocol is not allowed when skipTLSVerify is not set or false") and only
 * once a request is made; said here first, naming the cluster and its server, with the fix.
 */
export function plainHttpProblem(cluster: { name: string; server: string; skipTLSVerify?: boolean }): string | undefined {
  if (!cluster.server.startsWith('http://') || cluster.skipTLSVerify === true) return undefined;
  return (
    `cluster "${cluster.name}" has a plain-http server (${cluster.server}), which is read only when that cluster sets ` +
    'insecure-skip-tls-verify: true (a local API server such as npm start\'s); otherwise give its https address'
  );
}

/** Every PV of the cluster, 500 per page. */
export async function listClusterPvs(kc: KubeConfig): Promise<AdoptPv[]> {
  const core = kc.makeApiClient(CoreV1Api);
  const pvs: AdoptPv[] = [];
  let next: string | undefined;
  do {
    const page = await core.listPersistentVolume({ limit: 500, ...(next && { _continue: next }) });
    // client-node's objects carry the API's field names; read them with the file's schema.
    for (const item of page.items) pvs.push(AdoptPvSchema.parse(item));
    next = page.metadata?._continue || undefined;
  } while (next);
  return pvs;
}
