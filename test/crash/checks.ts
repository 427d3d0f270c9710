/**
 * What a run must end with, read from the store and the simulator directly.
 *
 * `convergenceProblems` lists what is not (yet) as it should be; the runner steps until the
 * list is empty or its budget is spent, so the same function is both the stop condition and,
 * once the budget is spent, the "not converged" verdict. `finalCounts` adds the end-of-run
 * counts that do not depend on the scenario's intent: leaked disks, duplicates, disks left
 * attached without a VolumeAttachment.
 */
import type { KubeObject } from '../../lib/local/kube/index.js';
import type { Snapshot as Ec2Snapshot, Volume } from '../../lib/local/ec2/index.js';
import type { Oracle } from './oracle.js';
import type { ClassSpec, World } from './world.js';

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
}

export const COUNT_NAMES: Record<keyof Counts, string> = {
  leaked: 'leaked',
  duplicate: 'duplicate',
  wronglyDeleted: 'wrongly deleted',
  wronglyDetached: 'wrongly detached',
  attachedWithoutVa: 'attached without VA',
  notConverged: 'not converged',
  unauthorized: 'denied by IAM',
};

export function zeroCounts(): Counts {
  return { leaked: 0, duplicate: 0, wronglyDeleted: 0, wronglyDetached: 0, attachedWithoutVa: 0, notConverged: 0, unauthorized: 0 };
}

interface Claim extends KubeObject {
  spec: { volumeName?: string };
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
  spec: { nodeName?: string; source?: { persistentVolumeName?: string } };
  status?: { attached?: boolean };
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
  status?: { readyToUse?: boolean; boundVolumeSnapshotContentName?: string };
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
  /** EBS snapshots tagged for the cluster. */
  ebsSnapshots: Ec2Snapshot[];
}

export function snapshot(world: World): Snapshot {
  const owner = `kubernetes.io/cluster/${world.clusterId}`;
  return {
    claims: world.store.list('persistentvolumeclaims').items as Claim[],
    pods: world.store.list('pods').items as Pod[],
    pvs: world.store.list('persistentvolumes').items as Pv[],
    vas: world.store.list('volumeattachments').items as Va[],
    volumes: world.sim.volumes().filter((v) => tag(v, owner) === 'owned'),
    volumeSnapshots: world.store.list('volumesnapshots').items as VolumeSnapshot[],
    contents: world.store.list('volumesnapshotcontents').items as Content[],
    ebsSnapshots: world.sim.snapshots().filter((v) => v.tags.find((t) => t.key === owner)?.value === 'owned'),
  };
}

/** The content that names an EBS snapshot: by its recorded handle, or by the name tag (`CSIVolumeSnapshotName`). */
export function contentOf(s: Pick<Snapshot, 'contents'>, snapshot: Ec2Snapshot): Content | undefined {
  const name = snapshot.tags.find((t) => t.key === 'CSIVolumeSnapshotName')?.value;
  return s.contents.find((c) => c.status?.snapshotHandle === snapshot.id) ?? s.contents.find((c) => c.metadata.name === name);
}

/** What is not as it should be for the VolumeSnapshots. `final`: they have all been deleted. */
export function snapshotProblems(s: Snapshot, snapshots: readonly TrackedSnapshot[]): string[] {
  const problems: string[] = [];
  for (const v of snapshots) {
    const vs = s.volumeSnapshots.find((x) => x.metadata.uid === v.uid);
    const contents = s.contents.filter((c) => c.spec.volumeSnapshotRef?.uid === v.uid);
    if (!v.deleted) {
      if (vs?.status?.readyToUse !== true) problems.push(`VolumeSnapshot ${v.name} is not ready to use`);
      continue;
    }
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

function nodeOf(world: World, instanceId: string): string {
  return world.nodes.find((n) => n.instanceId === instanceId)?.name ?? instanceId;
}

/** What is not as it should be, now. `final`: everything has been deleted. */
export function convergenceProblems(world: World, tracked: readonly TrackedClaim[], final: boolean, snapshots: readonly TrackedSnapshot[] = []): string[] {
  const s = snapshot(world);
  const problems: string[] = snapshotProblems(s, snapshots);
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
    if (allBound && pod.status?.phase !== 'Running') problems.push(`pod ${pod.metadata.name} on ${pod.spec.nodeName} is ${pod.status?.phase ?? 'Pending'}, not Running`);
  }

  for (const va of s.vas) {
    const pvName = va.spec.source?.persistentVolumeName ?? '';
    const pv = s.pvs.find((p) => p.metadata.name === pvName);
    const who = `VolumeAttachment of ${pv?.spec.claimRef?.name ?? pvName} on ${va.spec.nodeName}`;
    if (final) {
      problems.push(`${who} is still there${va.metadata.deletionTimestamp ? ' (terminating)' : ''}`);
      continue;
    }
    if (va.metadata.deletionTimestamp) {
      problems.push(`${who} is stuck terminating (finalizers: ${(va.metadata.finalizers ?? []).join(', ') || 'none'})`);
      continue;
    }
    if (va.status?.attached !== true) problems.push(`${who} is not attached`);
    const instance = world.nodes.find((n) => n.name === va.spec.nodeName)?.instanceId;
    const disk = s.volumes.find((v) => pv !== undefined && v.id === diskIdOf(pv));
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
export function unsettled(world: World, tracked: readonly TrackedClaim[], final: boolean, snapshots: readonly TrackedSnapshot[] = []): string[] {
  return [...convergenceProblems(world, tracked, final, snapshots), ...attachedWithoutVa(world, snapshot(world), tracked)];
}

/** Attachments in EC2 (attaching, attached, detaching…) that no VolumeAttachment names. */
export function attachedWithoutVa(world: World, s: Snapshot, tracked: readonly TrackedClaim[]): string[] {
  const out: string[] = [];
  for (const v of s.volumes) {
    for (const a of v.attachments) {
      const node = nodeOf(world, a.instanceId);
      const pv = s.pvs.find((p) => diskIdOf(p) === v.id);
      const va = pv && s.vas.find((x) => x.spec.source?.persistentVolumeName === pv.metadata.name && x.spec.nodeName === node);
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

export function finalVerdict(world: World, tracked: readonly TrackedClaim[], oracle: Oracle, notConverged: string[]): FinalVerdict {
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
    if (!pv) note('leaked', `disk ${volumeLabel(tracked, v)} is ${v.state} and no PV names it`);
    else if ((pv.spec.persistentVolumeReclaimPolicy ?? 'Retain') === 'Delete' && !claimUids.has(pv.spec.claimRef?.uid ?? '')) {
      note('leaked', `disk ${volumeLabel(tracked, v)} is ${v.state}; its claim is gone and its Delete PV is ${pv.status?.phase ?? '?'}${pv.metadata.deletionTimestamp ? ' (terminating)' : ''}`);
    }
  }
  for (const e of s.ebsSnapshots) {
    if (e.deleteRequested) continue;
    const content = contentOf(s, e);
    if (!content) note('leaked', `EBS snapshot ${e.id} (${e.state}) and no VolumeSnapshotContent names it`);
    else if ((content.spec.deletionPolicy ?? 'Delete') === 'Delete' && content.metadata.deletionTimestamp) {
      note('leaked', `EBS snapshot ${e.id} (${e.state}); its Delete content ${content.metadata.name} is being deleted`);
    }
  }
  for (const [name, ids] of oracle.createdSnapshots) {
    if (ids.size > 1) note('duplicate', `${ids.size} EBS snapshots created for ${name}: ${[...ids].join(', ')}`);
  }
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
  for (const line of attachedWithoutVa(world, s, tracked)) note('attachedWithoutVa', line);
  for (const line of notConverged) note('notConverged', line);
  return { counts, findings };
}
