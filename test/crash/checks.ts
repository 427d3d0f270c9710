/**
 * What a run must end with, read from the store and the simulator directly.
 *
 * `convergenceProblems` lists what is not (yet) as it should be; the runner steps until the
 * list is empty or its budget is spent, so the same function is both the stop condition and,
 * once the budget is spent, the "not converged" verdict. `finalCounts` adds the end-of-run
 * counts that do not depend on the scenario's intent: leaked disks, duplicates, disks left
 * attached without a VolumeAttachment, another cluster's disk not as it was put into EC2.
 * Snapshots count as leaked when no VolumeSnapshotContent nor VolumeGroupSnapshotContent names
 * them (a group's are named by its content: recorded in its status, or by their name tag).
 *
 * What must not converge, narrowly: a clone whose source claim's disk is not, now, the
 * cluster's adopted disk stays Pending, with a Warning naming the disk; a VolumeAttachment of a
 * disk of the cluster not adopted stays unattached, its error and a Warning on the PV naming
 * `npm run cluster -- adopt`, and its pod waits. Once adopted, it must attach like any other.
 */
import type { KubeObject } from '../../lib/local/kube/index.js';
import type { Snapshot as Ec2Snapshot, Volume } from '../../lib/local/ec2/index.js';
import { notAdopted, type Oracle } from './oracle.js';
import type { StaticDisk } from './scenario.js';
import type { ClassSpec, JudgedWorld } from './world.js';
import { COPY_REGION } from './world.js';

export interface TrackedClaim {
  name: string;
  class: ClassSpec;
  uid?: string;
  /** The scenario deleted it. */
  deleted: boolean;
  /** The scenario grew its request to 8Gi. */
  resized?: boolean;
  /** The VolumeAttributesClass the scenario moved it to. */
  volumeAttributesClass?: string;
  /** Of a deleted Retain claim: the disk the user took over (its Released PV deleted). */
  takenOver?: string;
  /** Bound to a static PV (Retain) the run made, naming the disk it put into EC2. */
  static?: { disk: StaticDisk; volumeId: string; pv: string };
  /** Restored from a member VolumeSnapshot of this group. */
  fromGroup?: string;
}

/** A VolumeGroupSnapshot the scenario plans (scenario.ts GroupPlan), as the run made it. */
export interface TrackedGroup {
  name: string;
  policy: 'Delete' | 'Retain';
  /** Its claims are used on two nodes: it must be refused, never snapshotted. */
  split: boolean;
  /** How many claims it selects. */
  members: number;
  /** Set once made. */
  uid?: string;
  /** The scenario deleted it (or, never made, gave it up at the teardown). */
  deleted: boolean;
}

export interface TrackedSnapshot {
  name: string;
  policy: 'Delete' | 'Retain';
  uid: string;
  /** The scenario deleted it. */
  deleted: boolean;
}

export interface Counts {
  leaked: number;
  duplicate: number;
  wronglyDeleted: number;
  wronglyDetached: number;
  attachedWithoutVa: number;
  notConverged: number;
  /** Calls the role's IAM policy refused: a call the deployed backend could not make. */
  unauthorized: number;
  /** CopyVolumes asked of a source that is not the cluster's adopted disk. */
  copiedForeign: number;
  /** Any other change asked of a volume that is not the cluster's adopted disk; another cluster's disk not as it was put. */
  touchedNotAdopted: number;
  /** A volume made from a VolumeSnapshot or claim that did not carry external-provisioner's source protection then. */
  unprotectedSource: number;
  /** A snapshot call for a group whose claims are used on two nodes (it must be refused before any EC2 call). */
  splitGroupSnapshotted: number;
  /** A cross-Region copy no content names, or whose content is being deleted under Delete. */
  copiesLeftBehind: number;
}

export const COUNT_NAMES: Record<keyof Counts, string> = {
  leaked: 'leaked',
  duplicate: 'duplicate',
  wronglyDeleted: 'wrongly deleted',
  wronglyDetached: 'wrongly detached',
  attachedWithoutVa: 'attached without VA',
  notConverged: 'not converged',
  unauthorized: 'denied by IAM',
  copiedForeign: 'copied foreign',
  touchedNotAdopted: 'touched not adopted',
  unprotectedSource: 'made from unprotected source',
  splitGroupSnapshotted: 'group across nodes snapshotted',
  copiesLeftBehind: 'copies left behind',
};

export function zeroCounts(): Counts {
  return { leaked: 0, duplicate: 0, wronglyDeleted: 0, wronglyDetached: 0, attachedWithoutVa: 0, notConverged: 0, unauthorized: 0, copiedForeign: 0, touchedNotAdopted: 0, unprotectedSource: 0, splitGroupSnapshotted: 0, copiesLeftBehind: 0 };
}

interface Claim extends KubeObject {
  spec: { volumeName?: string; dataSource?: { kind?: string; name?: string } };
  status?: {
    phase?: string;
    capacity?: { storage?: string };
    allocatedResourceStatuses?: Record<string, string>;
    modifyVolumeStatus?: unknown;
    currentVolumeAttributesClassName?: string;
  };
}
interface Pod extends KubeObject {
  spec?: { nodeName?: string; volumes?: { persistentVolumeClaim?: { claimName?: string } }[] };
  status?: { phase?: string };
}
export interface Pv extends KubeObject {
  spec: {
    capacity?: { storage?: string };
    csi?: { volumeHandle?: string };
    awsElasticBlockStore?: { volumeID?: string };
    persistentVolumeReclaimPolicy?: string;
    claimRef?: { name?: string; uid?: string };
  };
  status?: { phase?: string };
}

/**
 * The EBS volume a PV names: its CSI handle, or an in-tree `aws://<zone>/vol-…` / `vol-…` ID.
 * Read here independently of lib/migration, so the judge does not share the code it judges.
 */
export function diskIdOf(pv: Pv): string | undefined {
  return pv.spec.csi?.volumeHandle ?? pv.spec.awsElasticBlockStore?.volumeID?.split('/').pop();
}
interface Va extends KubeObject {
  spec: { nodeName?: string; source?: { persistentVolumeName?: string; inlineVolumeSpec?: { csi?: { volumeHandle?: string } } } };
  status?: { attached?: boolean; attachError?: { message?: string } };
}
interface Event extends KubeObject {
  involvedObject: { kind?: string; name?: string; namespace?: string };
  type?: string;
  reason?: string;
  message?: string;
}

const SELECTED_NODE = 'volume.kubernetes.io/selected-node';

const tag = (v: Volume, key: string) => v.tags.find((t) => t.key === key)?.value;
const isGone = (v: Volume) => v.state === 'deleting' || v.state === 'deleted';
const claimsOf = (pod: Pod) => (pod.spec?.volumes ?? []).flatMap((v) => (v.persistentVolumeClaim?.claimName ? [v.persistentVolumeClaim.claimName] : []));

export interface Content extends KubeObject {
  spec: { deletionPolicy?: string; volumeSnapshotRef?: { name?: string; uid?: string } };
  status?: { snapshotHandle?: string | null; readyToUse?: boolean | null };
}
interface VolumeSnapshot extends KubeObject {
  spec?: { source?: { persistentVolumeClaimName?: string } };
  status?: { readyToUse?: boolean; boundVolumeSnapshotContentName?: string };
}
export interface GroupContent extends KubeObject {
  spec: { deletionPolicy?: string; volumeGroupSnapshotRef?: { name?: string; namespace?: string; uid?: string }; source?: { volumeHandles?: string[] } };
  status?: { volumeGroupSnapshotHandle?: string | null; readyToUse?: boolean | null; error?: { message?: string } | null; volumeSnapshotInfoList?: { volumeHandle?: string; snapshotHandle?: string }[] | null };
}
interface VolumeGroupSnapshot extends KubeObject {
  status?: { readyToUse?: boolean; boundVolumeGroupSnapshotContentName?: string; error?: { message?: string } };
}

export interface Snapshot {
  claims: Claim[];
  pods: Pod[];
  pvs: Pv[];
  vas: Va[];
  /** Volumes tagged for the cluster, in any state. */
  volumes: Volume[];
  volumeSnapshots: VolumeSnapshot[];
  contents: Content[];
  groups: VolumeGroupSnapshot[];
  groupContents: GroupContent[];
  /** EBS snapshots tagged for the cluster. */
  ebsSnapshots: Ec2Snapshot[];
  /** The cluster's cross-Region copies, in COPY_REGION. */
  copies: Ec2Snapshot[];
  events: Event[];
}

export function snapshot(world: JudgedWorld): Snapshot {
  const owner = `kubernetes.io/cluster/${world.clusterId}`;
  return {
    claims: world.store.list('persistentvolumeclaims').items as Claim[],
    pods: world.store.list('pods').items as Pod[],
    pvs: world.store.list('persistentvolumes').items as Pv[],
    vas: world.store.list('volumeattachments').items as Va[],
    volumes: world.sim.volumes().filter((v) => tag(v, owner) === 'owned'),
    volumeSnapshots: world.store.list('volumesnapshots').items as VolumeSnapshot[],
    contents: world.store.list('volumesnapshotcontents').items as Content[],
    groups: world.store.list('volumegroupsnapshots').items as VolumeGroupSnapshot[],
    groupContents: world.store.list('volumegroupsnapshotcontents').items as GroupContent[],
    ebsSnapshots: world.sim.snapshots().filter((v) => v.tags.find((t) => t.key === owner)?.value === 'owned'),
    // A world whose simulator holds only its home Region (the fleet bench, the e2e stacks) has no copies.
    copies: world.sim.holdsRegion(COPY_REGION) ? world.sim.inRegion(COPY_REGION).snapshots().filter((v) => v.tags.find((t) => t.key === owner)?.value === 'owned') : [],
    events: world.store.list('events').items as Event[],
  };
}

/** A Warning about the object whose message contains `text`. */
function warned(s: Snapshot, kind: string, name: string, reason: string, text: string): boolean {
  return s.events.some((e) => e.involvedObject.kind === kind && e.involvedObject.name === name && e.type === 'Warning' && e.reason === reason && (e.message ?? '').includes(text));
}

/**
 * The disk a PV names, when EC2 has it and it is not, now, the cluster's adopted disk (another
 * cluster's, or not adopted); `ownOnly`: only when it is the cluster's, not adopted.
 */
function unadoptedDiskOf(world: JudgedWorld, pv: Pv | undefined, ownOnly = false): { id: string; why: string } | undefined {
  const id = pv && diskIdOf(pv);
  const volume = id ? world.sim.volume(id) : undefined;
  const why = volume && notAdopted(volume, world.clusterId);
  if (!id || !why) return undefined;
  if (ownOnly && tag(volume, `kubernetes.io/cluster/${world.clusterId}`) !== 'owned') return undefined;
  return { id, why };
}

/** A clone whose source claim is bound to a PV naming a disk that is not the cluster's adopted one: it must be refused. */
function refusedCloneSource(world: JudgedWorld, s: Snapshot, pvc: Claim): { id: string; why: string } | undefined {
  const source = pvc.spec.dataSource;
  if (source?.kind !== 'PersistentVolumeClaim') return undefined;
  const claim = s.claims.find((c) => c.metadata.namespace === pvc.metadata.namespace && c.metadata.name === source.name);
  return unadoptedDiskOf(world, s.pvs.find((p) => claim?.spec.volumeName !== undefined && p.metadata.name === claim.spec.volumeName));
}

/** The content that names an EBS snapshot: by its recorded handle, or by the name tag (`CSIVolumeSnapshotName`). */
export function contentOf(s: Pick<Snapshot, 'contents'>, snapshot: Ec2Snapshot): Content | undefined {
  const name = snapshot.tags.find((t) => t.key === 'CSIVolumeSnapshotName')?.value;
  return s.contents.find((c) => c.status?.snapshotHandle === snapshot.id) ?? s.contents.find((c) => c.metadata.name === name);
}

/** The group content whose snapshot it is: recorded in its status, or named by the snapshot's name tag (`CSIVolumeSnapshotName`). */
export function groupContentOf(s: Pick<Snapshot, 'groupContents'>, snapshot: Ec2Snapshot): GroupContent | undefined {
  const name = snapshot.tags.find((t) => t.key === 'CSIVolumeSnapshotName')?.value;
  return (
    s.groupContents.find((c) => (c.status?.volumeSnapshotInfoList ?? []).some((i) => i.snapshotHandle === snapshot.id)) ?? s.groupContents.find((c) => c.metadata.name === name)
  );
}

/** The name the common controller gives a group's content, spelled here apart from lib/local. */
export const groupContentName = (uid: string) => `groupsnapcontent-${uid}`;
/** The annotation that makes a VolumeSnapshotContent a member of a group (its value the group's handle). */
const GROUP_HANDLE = 'groupsnapshot.storage.k8s.io/volumeGroupSnapshotHandle';

/** The VolumeSnapshots a group owns (its members). */
function membersOf(s: Snapshot, uid: string): VolumeSnapshot[] {
  return s.volumeSnapshots.filter((v) => (v.metadata.ownerReferences as { kind?: string; uid?: string }[] | undefined)?.some((o) => o.kind === 'VolumeGroupSnapshot' && o.uid === uid));
}

/**
 * What is not as it should be for the VolumeGroupSnapshots. A live one: ready, with a snapshot
 * per claim — or, its claims on two nodes, refused (its content's error says so) and not ready.
 * A deleted one: gone with its members (but while a restore from a member is Pending, not at the
 * end); Delete: its content, member contents and EBS snapshots gone too; Retain: its content kept.
 */
export function groupProblems(s: Snapshot, groups: readonly TrackedGroup[], final = false): string[] {
  const problems: string[] = [];
  for (const g of groups) {
    if (!g.uid) continue;
    const vgs = s.groups.find((x) => x.metadata.uid === g.uid);
    const name = groupContentName(g.uid);
    const content = s.groupContents.find((c) => c.metadata.name === name);
    const members = membersOf(s, g.uid);
    const label = `VolumeGroupSnapshot ${g.name} (${g.policy}${g.split ? ', claims on two nodes' : ''})`;
    if (!g.deleted) {
      if (!vgs) {
        problems.push(`${label} vanished though never deleted`);
        continue;
      }
      if (g.split) {
        const message = content?.status?.error?.message ?? '';
        if (!message.includes('attached to different nodes')) problems.push(`${label}: its content is not refused for claims on different nodes (error: ${message || 'none'})`);
        if (vgs.status?.readyToUse === true) problems.push(`${label} is ready, though its claims are on two nodes`);
        continue;
      }
      if (vgs.status?.readyToUse !== true) problems.push(`${label} is not ready to use${vgs.status?.error?.message ? ` (${vgs.status.error.message})` : ''}`);
      const recorded = content?.status?.volumeSnapshotInfoList ?? [];
      if (vgs.status?.readyToUse === true && (recorded.length !== g.members || members.length !== g.members)) {
        problems.push(`${label} is ready with ${recorded.length} recorded snapshot(s) and ${members.length} member VolumeSnapshot(s) for ${g.members} claims`);
      }
      continue;
    }
    const restoring = members.some((m) => pendingFrom(s, 'VolumeSnapshot', m.metadata.name, true).length > 0);
    if (vgs || members.length > 0) {
      if (!final && restoring) continue;
      if (vgs) problems.push(`deleted ${label} is stuck terminating (finalizers: ${(vgs.metadata.finalizers ?? []).join(', ') || 'none'})`);
      for (const m of members) problems.push(`deleted ${label}: its member VolumeSnapshot ${m.metadata.name} is still there`);
      continue;
    }
    if (g.policy === 'Delete') {
      if (content) problems.push(`deleted ${label}: its content ${name} is still there${content.metadata.deletionTimestamp ? ' (terminating)' : ''}`);
      for (const c of s.contents) if (c.metadata.annotations?.[GROUP_HANDLE] === name) problems.push(`deleted ${label}: its member content ${c.metadata.name} is still there`);
      for (const e of s.ebsSnapshots) {
        if (e.tags.find((t) => t.key === 'CSIVolumeSnapshotName')?.value === name && !e.deleteRequested) problems.push(`deleted ${label}: its EBS snapshot ${e.id} is ${e.state}`);
      }
    } else if (!content) problems.push(`deleted ${label}: its Retain content ${name} is gone`);
    else if (content.metadata.deletionTimestamp) problems.push(`deleted ${label}: its Retain content ${name} is terminating`);
  }
  return problems;
}

/**
 * external-provisioner's source-protection finalizers (its `controller.go`), spelled here apart
 * from lib/contract so that the judge does not share the code it judges.
 */
export const SNAPSHOT_SOURCE_PROTECTION = 'provisioner.storage.kubernetes.io/volumesnapshot-as-source-protection';
export const CLONE_SOURCE_PROTECTION = 'provisioner.storage.kubernetes.io/cloning-protection';

/**
 * The claims (present, Pending) made from the VolumeSnapshot or claim `name`; those being
 * deleted only with `deleting` (a claim being deleted makes no volume any more, though the
 * snapshot controller still counts it as restoring).
 */
function pendingFrom(s: Snapshot, kind: 'VolumeSnapshot' | 'PersistentVolumeClaim', name: string, deleting = false): Claim[] {
  return s.claims.filter(
    (c) => c.spec.dataSource?.kind === kind && c.spec.dataSource.name === name && (c.status?.phase ?? 'Pending') === 'Pending' && (deleting || !c.metadata.deletionTimestamp),
  );
}

/**
 * A source protection nothing needs: a VolumeSnapshot or claim carrying external-provisioner's
 * finalizer while no claim made from it is Pending and alive (external-provisioner #1507 is such
 * a finalizer left behind by a claim deleted first). Deleted, it would stay Terminating for good.
 */
export function sourceProtectionProblems(s: Snapshot): string[] {
  const problems: string[] = [];
  for (const vs of s.volumeSnapshots) {
    if ((vs.metadata.finalizers ?? []).includes(SNAPSHOT_SOURCE_PROTECTION) && pendingFrom(s, 'VolumeSnapshot', vs.metadata.name).length === 0) {
      problems.push(`VolumeSnapshot ${vs.metadata.name}${vs.metadata.deletionTimestamp ? ' (terminating)' : ''} keeps ${SNAPSHOT_SOURCE_PROTECTION}, though no claim is being restored from it`);
    }
  }
  for (const c of s.claims) {
    if ((c.metadata.finalizers ?? []).includes(CLONE_SOURCE_PROTECTION) && pendingFrom(s, 'PersistentVolumeClaim', c.metadata.name).length === 0) {
      problems.push(`claim ${c.metadata.name}${c.metadata.deletionTimestamp ? ' (terminating)' : ''} keeps ${CLONE_SOURCE_PROTECTION}, though no claim is being cloned from it`);
    }
  }
  return problems;
}

/**
 * A claim whose source the scenario deleted before the claim could protect it: refused, as
 * external-provisioner refuses it ("is being deleted", or gone: "does not exist"), with a Warning
 * saying so. It stays Pending until deleted; that is right, not a failure to converge.
 */
function refusedForDeletedSource(s: Snapshot, pvc: Claim, tracked: readonly TrackedClaim[], snapshots: readonly TrackedSnapshot[], groups: readonly TrackedGroup[]): boolean {
  const source = pvc.spec.dataSource;
  if (!source?.name || (pvc.status?.phase ?? 'Pending') !== 'Pending') return false;
  // A member VolumeSnapshot goes with its group.
  const fromGroup = tracked.find((c) => c.name === pvc.metadata.name)?.fromGroup;
  const deleted =
    source.kind === 'VolumeSnapshot'
      ? snapshots.some((v) => v.name === source.name && v.deleted) || groups.some((g) => g.name === fromGroup && g.deleted)
      : tracked.some((c) => c.name === source.name && c.deleted);
  if (!deleted) return false;
  return ['is being deleted', 'does not exist'].some((text) => warned(s, 'PersistentVolumeClaim', pvc.metadata.name, 'ProvisioningFailed', text));
}

/** What is not as it should be for the VolumeSnapshots. `final`: they have all been deleted. */
export function snapshotProblems(s: Snapshot, snapshots: readonly TrackedSnapshot[], final = false): string[] {
  const problems: string[] = [];
  for (const v of snapshots) {
    const vs = s.volumeSnapshots.find((x) => x.metadata.uid === v.uid);
    const contents = s.contents.filter((c) => c.spec.volumeSnapshotRef?.uid === v.uid);
    if (!v.deleted) {
      if (vs?.status?.readyToUse !== true) problems.push(`VolumeSnapshot ${v.name} is not ready to use`);
      continue;
    }
    // Deleted before a restore from it could protect it: the common snapshot controller keeps
    // it while that claim is Pending (refused), until the claim goes at the teardown.
    if (vs && !final && !(vs.metadata.finalizers ?? []).includes(SNAPSHOT_SOURCE_PROTECTION) && pendingFrom(s, 'VolumeSnapshot', v.name, true).length > 0) continue;
    if (vs) {
      problems.push(`deleted VolumeSnapshot ${v.name} is stuck terminating (finalizers: ${(vs.metadata.finalizers ?? []).join(', ') || 'none'})`);
      continue;
    }
    if (v.policy === 'Delete') {
      for (const c of contents) problems.push(`deleted VolumeSnapshot ${v.name} (Delete): its content ${c.metadata.name} is still there`);
      for (const e of s.ebsSnapshots) {
        const name = e.tags.find((t) => t.key === 'CSIVolumeSnapshotName')?.value ?? '';
        if (name.endsWith(v.uid) && !e.deleteRequested) problems.push(`deleted VolumeSnapshot ${v.name} (Delete): its EBS snapshot ${e.id} is ${e.state}`);
      }
    }
  }
  return problems;
}

/** Names a volume for humans: the claim it was made for. */
export function volumeLabel(tracked: readonly TrackedClaim[], v: Volume): string {
  const name = tag(v, 'CSIVolumeName') ?? '';
  const claim = tracked.find((c) => c.uid && `pvc-${c.uid}` === name);
  return `${v.id}${claim ? ` (${claim.name}, ${claim.class.name})` : ''}`;
}

function nodeOf(world: JudgedWorld, instanceId: string): string {
  return world.nodes.find((n) => n.instanceId === instanceId)?.name ?? instanceId;
}

/** What is not as it should be, now. `final`: everything has been deleted. */
export function convergenceProblems(world: JudgedWorld, tracked: readonly TrackedClaim[], final: boolean, snapshots: readonly TrackedSnapshot[] = [], groups: readonly TrackedGroup[] = []): string[] {
  const s = snapshot(world);
  const problems: string[] = [...snapshotProblems(s, snapshots, final), ...groupProblems(s, groups, final), ...sourceProtectionProblems(s)];
  const livePodsUsing = (claim: string) => s.pods.filter((p) => claimsOf(p).includes(claim));

  for (const c of tracked) {
    const pvc = s.claims.find((x) => x.metadata.name === c.name);
    if (!c.deleted) {
      if (!pvc) {
        problems.push(`claim ${c.name} (${c.class.name}) vanished though never deleted`);
        continue;
      }
      const shouldBind = c.class.binding === 'Immediate' || Boolean(pvc.metadata.annotations?.[SELECTED_NODE]) || livePodsUsing(c.name).length > 0;
      const phase = pvc.status?.phase ?? 'Pending';
      const refused = refusedCloneSource(world, s, pvc);
      if (refused) {
        // Never copied: Pending for good, and told why (ProvisioningFailed, naming the disk).
        if (phase !== 'Pending' || pvc.spec.volumeName) problems.push(`claim ${c.name} (${c.class.name}) is ${phase}${pvc.spec.volumeName ? ` on ${pvc.spec.volumeName}` : ''}, though its source's disk ${refused.id} is ${refused.why}`);
        else if (!warned(s, 'PersistentVolumeClaim', c.name, 'ProvisioningFailed', refused.id)) problems.push(`claim ${c.name} (${c.class.name}) is Pending with no Warning ProvisioningFailed naming its source's disk ${refused.id} (${refused.why})`);
        continue;
      }
      if (refusedForDeletedSource(s, pvc, tracked, snapshots, groups)) continue;
      if (shouldBind && phase !== 'Bound') problems.push(`claim ${c.name} (${c.class.name}) is ${phase}, not Bound`);
      if (phase === 'Bound') problems.push(...dayTwoProblems(c, pvc, s, livePodsUsing(c.name)));
      continue;
    }
    if (pvc) {
      // Deleted while a pod still uses it: held by pvc-protection, rightly, until the pod goes.
      if (livePodsUsing(c.name).length > 0) continue;
      problems.push(`deleted claim ${c.name} (${c.class.name}) is stuck terminating (finalizers: ${(pvc.metadata.finalizers ?? []).join(', ') || 'none'})`);
      continue;
    }
    if (c.static) {
      // The user's PV: Released, Retain, until they delete it; its disk is theirs (the oracle judges what is done to it).
      const pv = s.pvs.find((p) => p.metadata.name === c.static?.pv);
      if (pv?.metadata.deletionTimestamp) problems.push(`deleted claim ${c.name}: its static PV ${pv.metadata.name} is stuck terminating (finalizers: ${(pv.metadata.finalizers ?? []).join(', ') || 'none'})`);
      else if (pv && pv.status?.phase !== 'Released') problems.push(`deleted claim ${c.name}: its static PV ${pv.metadata.name} is ${pv.status?.phase ?? '?'}, not Released`);
      continue;
    }
    if (!c.uid) continue;
    const pvName = `pvc-${c.uid}`;
    const pv = s.pvs.find((p) => p.metadata.name === pvName);
    const disks = s.volumes.filter((v) => tag(v, 'CSIVolumeName') === pvName && !isGone(v));
    const label = `deleted claim ${c.name} (${c.class.name})`;
    if (c.class.policy === 'Delete') {
      if (pv) problems.push(`${label}: its PV is still there (${pv.status?.phase ?? '?'}${pv.metadata.deletionTimestamp ? ', terminating' : ''}, finalizers: ${(pv.metadata.finalizers ?? []).join(', ') || 'none'})`);
      for (const d of disks) problems.push(`${label}: its disk ${d.id} is ${d.state}${d.attachments.length ? `, attached to ${d.attachments.map((a) => `${nodeOf(world, a.instanceId)} (${a.state})`).join(', ')}` : ''}, not deleted`);
    } else if (pv) {
      if (pv.metadata.deletionTimestamp) problems.push(`${label}: its Retain PV is stuck terminating (finalizers: ${(pv.metadata.finalizers ?? []).join(', ')})`);
      else if (pv.status?.phase !== 'Released') problems.push(`${label}: its Retain PV is ${pv.status?.phase ?? '?'}, not Released`);
      for (const d of disks) {
        const held = d.attachments;
        if (held.length) problems.push(`${label}: its retained disk ${d.id} is still attached to ${held.map((a) => nodeOf(world, a.instanceId)).join(', ')}`);
      }
    } else {
      // A disk the user took over is theirs, PV or not; its deletion is the oracle's to judge.
      for (const d of disks) if (d.id !== c.takenOver) problems.push(`${label}: its disk ${d.id} is ${d.state} and no PV names it`);
    }
  }

  for (const pod of s.pods) {
    const names = claimsOf(pod);
    const claims = names.map((n) => s.claims.find((c) => c.metadata.name === n));
    if (claims.some((c) => !c)) continue; // a claim deleted under it: it can never start
    const allBound = claims.every((c) => c?.status?.phase === 'Bound');
    const anyTerminating = claims.some((c) => c?.metadata.deletionTimestamp);
    if (!pod.spec?.nodeName) {
      if (!anyTerminating) problems.push(`pod ${pod.metadata.name} is not scheduled`);
      continue;
    }
    // A disk of the cluster's that is not adopted is never attached: its pod waits (its VolumeAttachment says why, below).
    const unattachable = claims.some((c) => unadoptedDiskOf(world, s.pvs.find((p) => p.metadata.name === c?.spec.volumeName), true));
    if (allBound && !unattachable && pod.status?.phase !== 'Running') problems.push(`pod ${pod.metadata.name} on ${pod.spec.nodeName} is ${pod.status?.phase ?? 'Pending'}, not Running`);
  }

  for (const va of s.vas) {
    const pvName = va.spec.source?.persistentVolumeName ?? '';
    const pv = s.pvs.find((p) => p.metadata.name === pvName);
    const inlineHandle = va.spec.source?.inlineVolumeSpec?.csi?.volumeHandle;
    const who = `VolumeAttachment of ${inlineHandle ? `inline ${inlineHandle}` : (pv?.spec.claimRef?.name ?? pvName)} on ${va.spec.nodeName}`;
    if (final) {
      problems.push(`${who} is still there${va.metadata.deletionTimestamp ? ' (terminating)' : ''}`);
      continue;
    }
    if (va.metadata.deletionTimestamp) {
      problems.push(`${who} is stuck terminating (finalizers: ${(va.metadata.finalizers ?? []).join(', ') || 'none'})`);
      continue;
    }
    const unadopted = unadoptedDiskOf(world, pv, true);
    if (unadopted) {
      // Refused before EC2 is asked (NotAdopted), on the VolumeAttachment and as a Warning on the PV, naming the fix.
      const fix = 'npm run cluster -- adopt';
      if (va.status?.attached === true) problems.push(`${who} is attached, though its disk ${unadopted.id} is ${unadopted.why}`);
      else if (!(va.status?.attachError?.message ?? '').includes(fix)) problems.push(`${who}: its disk ${unadopted.id} is ${unadopted.why}, and its attachError does not name \`${fix}\` (${va.status?.attachError?.message ?? 'none'})`);
      else if (!warned(s, 'PersistentVolume', pvName, 'FailedAttachVolume', fix)) problems.push(`${who}: its disk ${unadopted.id} is ${unadopted.why}, and no Warning FailedAttachVolume on PV ${pvName} names \`${fix}\``);
      continue;
    }
    if (va.status?.attached !== true) problems.push(`${who} is not attached`);
    const instance = world.nodes.find((n) => n.name === va.spec.nodeName)?.instanceId;
    const disk = s.volumes.find((v) => (inlineHandle ? v.id === inlineHandle : pv !== undefined && v.id === diskIdOf(pv)));
    if (disk && !disk.attachments.some((a) => a.instanceId === instance && a.state === 'attached')) {
      problems.push(`${who}: its disk ${disk.id} is not attached there in EC2 (${disk.attachments.map((a) => a.state).join(', ') || 'no attachment'})`);
    }
  }

  for (const pv of s.pvs) {
    if (!pv.metadata.deletionTimestamp) continue;
    if (tracked.some((c) => c.deleted && c.uid && `pvc-${c.uid}` === pv.metadata.name)) continue; // reported above
    problems.push(`PV ${pv.metadata.name} (of ${pv.spec.claimRef?.name ?? '?'}) is stuck terminating`);
  }

  return problems;
}

/** A bound claim that grew or changed class: its PV, disk and status must say so. */
function dayTwoProblems(c: TrackedClaim, pvc: Claim, s: Snapshot, pods: Pod[]): string[] {
  const problems: string[] = [];
  const pv = s.pvs.find((p) => p.metadata.name === pvc.spec.volumeName);
  const disk = pv && s.volumes.find((v) => v.id === diskIdOf(pv));
  const label = `claim ${c.name} (${c.class.name})`;
  if (!pv || !disk) return [];
  if (c.resized) {
    if (pv.spec.capacity?.storage !== '8Gi') problems.push(`${label}: resized to 8Gi, its PV has ${pv.spec.capacity?.storage}`);
    if (disk.size !== 8) problems.push(`${label}: resized to 8Gi, its disk ${disk.id} has ${disk.size} GiB`);
    const status = pvc.status?.allocatedResourceStatuses?.storage;
    if (status === 'ControllerResizeInProgress' || status === 'ControllerResizeInfeasible') problems.push(`${label}: resize still ${status}`);
    if (pods.some((p) => p.status?.phase === 'Running') && pvc.status?.capacity?.storage !== '8Gi') {
      problems.push(`${label}: mounted by a Running pod, but its capacity is ${pvc.status?.capacity?.storage}, not 8Gi`);
    }
  }
  if (c.volumeAttributesClass) {
    if (pvc.status?.currentVolumeAttributesClassName !== c.volumeAttributesClass || pvc.status?.modifyVolumeStatus) {
      problems.push(`${label}: asked for class ${c.volumeAttributesClass}, status says ${pvc.status?.currentVolumeAttributesClassName ?? 'none'} (${JSON.stringify(pvc.status?.modifyVolumeStatus ?? null)})`);
    }
    if (c.volumeAttributesClass === 'fast' && (disk.type !== 'gp3' || disk.throughput !== 200)) problems.push(`${label}: class fast, disk ${disk.id} is ${disk.type} at ${disk.throughput} MiB/s`);
    if (c.volumeAttributesClass === 'tagged' && tag(disk, 'team') !== 'crash') problems.push(`${label}: class tagged, disk ${disk.id} lacks tag team=crash`);
  }
  return problems;
}

/** Convergence problems plus attachments no VolumeAttachment names: empty once all is settled. */
export function unsettled(world: JudgedWorld, tracked: readonly TrackedClaim[], final: boolean, snapshots: readonly TrackedSnapshot[] = [], groups: readonly TrackedGroup[] = []): string[] {
  return [...convergenceProblems(world, tracked, final, snapshots, groups), ...attachedWithoutVa(world, snapshot(world), tracked)];
}

/** Attachments in EC2 (attaching, attached, detaching…) that no VolumeAttachment names. */
export function attachedWithoutVa(world: JudgedWorld, s: Snapshot, tracked: readonly TrackedClaim[]): string[] {
  const out: string[] = [];
  for (const v of s.volumes) {
    for (const a of v.attachments) {
      const node = nodeOf(world, a.instanceId);
      const pv = s.pvs.find((p) => diskIdOf(p) === v.id);
      const va =
        (pv && s.vas.find((x) => x.spec.source?.persistentVolumeName === pv.metadata.name && x.spec.nodeName === node)) ??
        s.vas.find((x) => x.spec.source?.inlineVolumeSpec?.csi?.volumeHandle === v.id && x.spec.nodeName === node);
      if (!va) out.push(`disk ${volumeLabel(tracked, v)} is ${a.state} to ${node} and no VolumeAttachment names it`);
    }
  }
  return out;
}

export interface FinalVerdict {
  counts: Counts;
  /** What was wrong, one line per count. */
  findings: string[];
}

export function finalVerdict(world: JudgedWorld, tracked: readonly TrackedClaim[], oracle: Oracle, notConverged: string[]): FinalVerdict {
  const s = snapshot(world);
  const findings: string[] = [];
  const counts = zeroCounts();
  const note = (kind: keyof Counts, line: string) => {
    counts[kind]++;
    findings.push(`${COUNT_NAMES[kind]}: ${line}`);
  };
  const claimUids = new Set(s.claims.map((c) => c.metadata.uid));
  for (const v of s.volumes) {
    if (isGone(v)) continue;
    const pv = s.pvs.find((p) => diskIdOf(p) === v.id);
    if (!pv && tracked.some((c) => c.takenOver === v.id)) continue; // the user's: kept on purpose
    if (!pv && oracle.inlineDisks.has(v.id)) continue; // an inline volume's disk, the user's: kept
    if (!pv) note('leaked', `disk ${volumeLabel(tracked, v)} is ${v.state} and no PV names it`);
    else if ((pv.spec.persistentVolumeReclaimPolicy ?? 'Retain') === 'Delete' && !claimUids.has(pv.spec.claimRef?.uid ?? '')) {
      note('leaked', `disk ${volumeLabel(tracked, v)} is ${v.state}; its claim is gone and its Delete PV is ${pv.status?.phase ?? '?'}${pv.metadata.deletionTimestamp ? ' (terminating)' : ''}`);
    }
  }
  for (const e of s.ebsSnapshots) {
    if (e.deleteRequested) continue;
    const content = contentOf(s, e);
    const group = groupContentOf(s, e);
    if (!content && !group) note('leaked', `EBS snapshot ${e.id} (${e.state}) and no VolumeSnapshotContent or VolumeGroupSnapshotContent names it`);
    else if (content && (content.spec.deletionPolicy ?? 'Delete') === 'Delete' && content.metadata.deletionTimestamp) {
      note('leaked', `EBS snapshot ${e.id} (${e.state}); its Delete content ${content.metadata.name} is being deleted`);
    } else if (group && (group.spec.deletionPolicy ?? 'Delete') === 'Delete' && group.metadata.deletionTimestamp) {
      note('leaked', `EBS snapshot ${e.id} (${e.state}); its Delete group content ${group.metadata.name} is being deleted`);
    }
  }
  for (const [name, ids] of oracle.createdSnapshots) {
    if (ids.size > 1) note('duplicate', `${ids.size} EBS snapshots created for ${name}: ${[...ids].join(', ')}`);
  }
  for (const [name, ids] of oracle.createdCopies) {
    if (ids.size > 1) note('duplicate', `${ids.size} cross-Region copies made for ${name}: ${[...ids].join(', ')}`);
  }
  for (const e of s.copies) {
    if (e.deleteRequested) continue;
    const content = contentOf({ contents: s.contents }, { ...e, id: '' });
    if (!content) note('copiesLeftBehind', `copy ${e.id} (${e.state}) in ${COPY_REGION} and no VolumeSnapshotContent names it`);
    else if ((content.spec.deletionPolicy ?? 'Delete') === 'Delete' && content.metadata.deletionTimestamp) {
      note('copiesLeftBehind', `copy ${e.id} (${e.state}) in ${COPY_REGION}; its Delete content ${content.metadata.name} is being deleted`);
    }
  }
  for (const [name, n] of oracle.createdGroups) {
    if (n > 1) note('duplicate', `${n} CreateSnapshots for group content ${name}`);
  }
  for (const [name, byVolume] of oracle.createdGroupSnapshots) {
    for (const [volumeId, ids] of byVolume) if (ids.size > 1) note('duplicate', `${ids.size} EBS snapshots of member volume ${volumeId} created for group content ${name}: ${[...ids].join(', ')}`);
  }
  for (const line of oracle.splitSnapshotted) note('splitGroupSnapshotted', line);
  for (const [name, n] of oracle.modified) {
    const c = tracked.find((t) => t.uid && `pvc-${t.uid}` === name);
    const wanted = (c?.resized ? 1 : 0) + (c?.volumeAttributesClass === 'fast' ? 1 : 0);
    if (n > wanted) note('duplicate', `${n} ModifyVolume of ${c ? `${c.name}'s disk` : `disk ${name}`} for ${wanted} desired change(s)`);
  }
  for (const [volumeId, n] of oracle.tagged) {
    if (n > 1) note('duplicate', `${n} CreateTags of disk ${volumeId} for one class change`);
  }
  for (const [name, ids] of oracle.created) {
    if (ids.size > 1) {
      const claim = tracked.find((c) => c.uid && `pvc-${c.uid}` === name);
      note('duplicate', `${ids.size} volumes created for ${claim ? `${claim.name} (${name})` : name}: ${[...ids].join(', ')}`);
    }
  }
  for (const line of oracle.wronglyDeleted) note('wronglyDeleted', line);
  for (const line of oracle.wronglyDetached) note('wronglyDetached', line);
  for (const line of oracle.unauthorized) note('unauthorized', line);
  for (const line of oracle.copiedForeign) note('copiedForeign', line);
  for (const line of oracle.touchedNotAdopted) note('touchedNotAdopted', line);
  for (const line of oracle.unprotectedSource) note('unprotectedSource', line);
  for (const [id, seeded] of oracle.foreign) {
    const change = changeOf(seeded, world.sim.volume(id));
    if (change) note('touchedNotAdopted', `another cluster's disk ${id} is not as it was put into EC2: ${change}`);
  }
  for (const line of attachedWithoutVa(world, s, tracked)) note('attachedWithoutVa', line);
  for (const line of notConverged) note('notConverged', line);
  return { counts, findings };
}

/** How a volume differs from what it was (state, size, type, performance, tags, attachments); undefined when it does not. */
export function changeOf(before: Volume, now: Volume | undefined): string | undefined {
  if (!now) return 'EC2 no longer has it';
  const tags = (v: Volume) => JSON.stringify(v.tags.map((t) => `${t.key}=${t.value}`).sort());
  const fields: [string, unknown, unknown][] = [
    ['state', before.state, now.state],
    ['size', before.size, now.size],
    ['type', before.type, now.type],
    ['iops', before.iops, now.iops],
    ['throughput', before.throughput, now.throughput],
    ['tags', tags(before), tags(now)],
    ['attachments', JSON.stringify(before.attachments), JSON.stringify(now.attachments)],
  ];
  const changed = fields.filter(([, a, b]) => a !== b).map(([name, a, b]) => `${name} ${String(a)} → ${String(b)}`);
  return changed.length ? changed.join('; ') : undefined;
}
