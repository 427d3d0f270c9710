/**
 * What `cluster adopt` does to each disk and snapshot, decided purely from the cluster's PVs
 * and EC2's answer. Adoption only ever adds tags: a tag that is set is never changed, and a
 * resource whose tags claim another cluster is never touched.
 *
 * The tags are those volhook writes when it provisions (`volumeTags`), less the StorageClass's
 * and registration's own:
 * - `kubernetes.io/cluster/<id>=owned` — the one volhook checks before it changes a disk in any
 *   way (`isOwnedDisk`) and filters its look-ups by name on;
 * - `ebs.csi.aws.com/cluster=true` — the one the function's IAM policy requires on every
 *   change of an existing volume (attach, detach, modify, snapshot, copy, delete); EBS CSI disks
 *   have it, in-tree disks do not;
 * - `volhook.io/cluster=<id>` — the cluster id in a value, which the EC2 role's policy compares
 *   with the session's; volhook's own disks and snapshots made before it existed lack it (and
 *   are refused until adopt adds it), CSI-driver disks never have it;
 * - `CSIVolumeName=<PV name>` and `kubernetes.io/created-for/pv/name`, `…/pvc/name`,
 *   `…/pvc/namespace` from the PV and its claimRef — what volhook's look-up by name and its
 *   cleanup of a deleted claim's disk read, so an adopted disk looks like one volhook made.
 * - `ebs.csi.aws.com/cluster-name=<id>` — what AWS's cluster-scoped policy for the EBS CSI
 *   driver fences by, so a cluster handed back to the driver can act on the disk; volhook writes
 *   it on what it creates but never requires it.
 * volhook refuses a disk or snapshot short of the first three (`tagOwnership` `needs-adopt`,
 * reason `NotAdopted`) before calling EC2, naming this command.
 *
 * Disks come from the cluster's PVs (the evidence that a CSI-made disk is the cluster's), and
 * from EC2's listing of the cluster (`kubernetes.io/cluster/<id>=owned`): a disk no PV names
 * that needs adopting — one of volhook's own made before `volhook.io/cluster`, whose claim is
 * still being provisioned, say — gets the cluster tags only. Snapshots come from EC2's listing
 * of the cluster; those that need adopting get the cluster tags they lack.
 * The EBS CSI driver's `Name` and `KubernetesCluster` are not added: volhook neither writes nor
 * reads them.
 */
// The very rule every reconciler applies: adopted means exactly what they accept.
import { clusterTags, handBackTags, TagKeys, tagOwnership } from '../contract/index.js';
import type { Disk, Snapshot } from '../ec2/index.js';
import type { PvDisk } from './adopt-pvs.js';

export type AdoptionStatus =
  /** Tags to add (a dry run's plan). */
  | 'tag'
  /** Tags added (with --apply). */
  | 'tagged'
  /** CreateTags failed (with --apply). */
  | 'failed'
  /** Owned by this cluster and tagged as volhook needs: nothing to do. */
  | 'adopted'
  /** A tag names another cluster: left alone. */
  | 'other-cluster'
  /** A tag adoption would have to change is set to something else: left alone. */
  | 'conflict'
  /** EC2 has no such volume, or it is being deleted. */
  | 'not-found'
  /** The PV's volume ID is not an EBS volume ID. */
  | 'invalid-id';

export interface DiskAdoption {
  /** The EBS volume ID, or the PV's ID as written when it is none. */
  volumeId: string;
  /** The PVs naming the disk (one, unless static PVs share it; none for a disk found by the cluster's tag only). */
  pvs: string[];
  status: AdoptionStatus;
  /** The tags adoption adds (`tag`, `tagged`, `failed`); none otherwise. */
  tags: Record<string, string>;
  /** Why the disk is left alone, or what else is worth knowing. */
  detail?: string;
}

export interface SnapshotAdoption {
  snapshotId: string;
  /** The volume it was taken of. */
  volumeId: string;
  status: Extract<AdoptionStatus, 'tag' | 'tagged' | 'failed' | 'other-cluster' | 'conflict'>;
  tags: Record<string, string>;
  detail?: string;
}

/** The statuses that leave a disk or snapshot of the cluster not adopted: the run exits 1. */
export const UNADOPTED: readonly AdoptionStatus[] = ['other-cluster', 'conflict', 'failed'];

/** Legacy cluster tags, as the EBS CSI driver (with --k8s-tag-cluster-id) and the AWS cloud provider write them. */
const KUBERNETES_CLUSTER = 'KubernetesCluster';
const EBS_CLUSTER_NAME = TagKeys.ebsClusterName;
const CLUSTER_TAG_PREFIX = TagKeys.cluster('');

/**
 * The tag by which another cluster claims the disk, as `key=value`; undefined when none does.
 * `kubernetes.io/cluster/<other>` with any value (owned or shared), `volhook.io/cluster` in any
 * case naming another cluster (as `tagOwnership` reads it), and the EBS CSI driver's
 * `ebs.csi.aws.com/cluster-name` and `KubernetesCluster` naming another cluster.
 */
export function otherClusterTag(tags: Record<string, string>, clusterId: string): string | undefined {
  for (const [key, value] of Object.entries(tags)) {
    const claimed =
      (key.startsWith(CLUSTER_TAG_PREFIX) && key !== TagKeys.cluster(clusterId)) ||
      (key.toLowerCase() === TagKeys.volhookCluster.toLowerCase() && value !== clusterId) ||
      ((key === EBS_CLUSTER_NAME || key === KUBERNETES_CLUSTER) && value !== clusterId);
    if (claimed) return `${key}=${value}`;
  }
  return undefined;
}

/** The tags every adopted disk and snapshot carries: the cluster's, and the hand-back tag. */
function adoptedTags(clusterId: string): Record<string, string> {
  return { ...clusterTags(clusterId), ...handBackTags(clusterId) };
}

/** The full tag set an adopted disk carries, per the file comment. One PV: its names too. */
export function wantedTags(clusterId: string, pvs: readonly PvDisk[]): Record<string, string> {
  const tags = adoptedTags(clusterId);
  // Several PVs on one disk (static PVs) name it differently, none (a disk found by the
  // cluster's tag) names it at all: only the cluster's tags then.
  if (pvs.length !== 1) return tags;
  const [pv] = pvs as [PvDisk];
  tags[TagKeys.csiVolumeName] = pv.pv;
  tags[TagKeys.pvName] = pv.pv;
  if (pv.claim) {
    tags[TagKeys.pvcName] = pv.claim.name;
    tags[TagKeys.pvcNamespace] = pv.claim.namespace;
  }
  return tags;
}

/** Pure: the plan for one disk named by `pvs`; `disk` is EC2's answer (undefined: no such volume). */
export function planDisk(clusterId: string, volumeId: string, pvs: readonly PvDisk[], disk: Disk | undefined): DiskAdoption {
  const row = { volumeId, pvs: pvs.map((p) => p.pv) };
  if (!disk || disk.state === 'deleting' || disk.state === 'deleted') {
    return { ...row, status: 'not-found', tags: {}, detail: disk ? `volume is ${disk.state}` : 'EC2 has no such volume' };
  }
  const plan = planTags(clusterId, disk.tags, wantedTags(clusterId, pvs));
  return { ...row, ...plan, ...(plan.status === 'tag' && noteOn(disk, pvs)) };
}

interface TagPlan {
  status: Extract<AdoptionStatus, 'tag' | 'adopted' | 'other-cluster' | 'conflict'>;
  tags: Record<string, string>;
  detail?: string;
}

/**
 * Pure: what adoption does to a resource with `tags`, to give it `wanted`. Only the tags volhook
 * acts on can stand in the way; a CSIVolumeName or created-for tag that differs (a static PV
 * on a disk made for another) describes the disk's past and is kept.
 */
function planTags(clusterId: string, tags: Record<string, string>, wanted: Record<string, string>): TagPlan {
  const claim = otherClusterTag(tags, clusterId);
  if (claim) return { status: 'other-cluster', tags: {}, detail: `tagged ${claim}` };
  const handBack = handBackTags(clusterId);
  const lacksHandBack = Object.keys(handBack).some((key) => !(key in tags));
  if (tagOwnership(tags, clusterId).kind === 'owned' && !lacksHandBack) return { status: 'adopted', tags: {} };
  const changed = [TagKeys.cluster(clusterId), TagKeys.ebsCluster].find((key) => key in tags && tags[key] !== wanted[key]);
  if (changed) return { status: 'conflict', tags: {}, detail: `tagged ${changed}=${tags[changed]}; adopt changes no tag that is set` };
  return { status: 'tag', tags: Object.fromEntries(Object.entries(wanted).filter(([key]) => !(key in tags))) };
}

/**
 * Pure: the disks of EC2's listing of the cluster that no PV names and that need adopting, in
 * volume ID order (one adopted already is no row: the listing is every disk of the cluster).
 */
export function planUnnamedDisks(clusterId: string, listed: readonly Disk[], named: ReadonlySet<string>): DiskAdoption[] {
  return listed
    .filter((disk) => !named.has(disk.volumeId))
    .map((disk) => planDisk(clusterId, disk.volumeId, [], disk))
    .filter((row) => row.status !== 'adopted' && row.status !== 'not-found')
    .sort((a, b) => a.volumeId.localeCompare(b.volumeId));
}

/** Pure: the snapshots of EC2's listing of the cluster that need adopting, in snapshot ID order. */
export function planSnapshots(clusterId: string, listed: readonly Snapshot[]): SnapshotAdoption[] {
  const rows: SnapshotAdoption[] = [];
  for (const snapshot of listed) {
    const plan = planTags(clusterId, snapshot.tags, adoptedTags(clusterId));
    if (plan.status === 'adopted') continue;
    rows.push({ snapshotId: snapshot.snapshotId, volumeId: snapshot.volumeId, ...plan, status: plan.status });
  }
  return rows.sort((a, b) => a.snapshotId.localeCompare(b.snapshotId));
}

/** A CSIVolumeName kept that is not the PV's name, or a disk several PVs share. */
function noteOn(disk: Disk, pvs: readonly PvDisk[]): { detail?: string } {
  if (pvs.length > 1) return { detail: 'named by several PVs: cluster tags only' };
  if (pvs.length === 0) return { detail: 'no PersistentVolume names it: cluster tags only' };
  const name = disk.tags[TagKeys.csiVolumeName];
  return name !== undefined && name !== pvs[0]?.pv ? { detail: `${TagKeys.csiVolumeName} is ${name} (kept)` } : {};
}

/**
 * Pure: a plan per disk the PVs name, in PV-name order. PVs whose ID is no EBS volume ID get
 * a row each (`invalid-id`); PVs sharing a disk share its row.
 */
export function planAdoption(clusterId: string, pvs: readonly PvDisk[], disks: ReadonlyMap<string, Disk | undefined>): DiskAdoption[] {
  const byVolume = new Map<string, PvDisk[]>();
  const rows: DiskAdoption[] = [];
  for (const pv of pvs) {
    if (pv.volumeId === undefined) {
      rows.push({ volumeId: pv.given, pvs: [pv.pv], status: 'invalid-id', tags: {}, detail: `${pv.source === 'csi' ? 'volumeHandle' : 'awsElasticBlockStore.volumeID'} is not an EBS volume ID` });
      continue;
    }
    const same = byVolume.get(pv.volumeId);
    if (same) same.push(pv);
    else byVolume.set(pv.volumeId, [pv]);
  }
  for (const [volumeId, named] of byVolume) rows.push(planDisk(clusterId, volumeId, named, disks.get(volumeId)));
  return rows.sort((a, b) => a.pvs[0]!.localeCompare(b.pvs[0]!));
}

/** 1 when a disk or snapshot of the cluster is left not adopted (see {@link UNADOPTED}), else 0. */
export function adoptionExitCode(rows: readonly DiskAdoption[], snapshots: readonly SnapshotAdoption[] = []): 0 | 1 {
  return [...rows, ...snapshots].some((row) => UNADOPTED.includes(row.status)) ? 1 : 0;
}
