/**
 * Judges every EC2 mutation at the moment EC2 carries it out, against the cluster as it is
 * then (the store, read directly — the truth, not anyone's cache):
 *
 * - wrongly deleted: DeleteVolume of a disk whose PV is Retain, or whose PV exists and is not
 *   Released; or, with no PV, of a disk whose claim is alive (not being deleted) and that is
 *   not a failed (`error`) volume, or of a disk the user took over (its Retain PV deleted);
 * - wrongly detached: DetachVolume while a VolumeAttachment that is not being deleted names
 *   that volume's PV and that instance's node — except of an attachment still `attaching` that
 *   the simulator holds stuck (it would never have attached), or that has been attaching for
 *   longer than the driver's bound (90 s ÷ the time scale);
 * - created: every volume CreateVolume made, by `CSIVolumeName`, to count duplicates from
 *   what EC2 created rather than from what is left.
 *
 * Only calls EC2 accepted count (an error answer changed nothing); a lost answer does. Except
 * for what the backend must never ask at all, whatever EC2 (or its IAM) answers — a call that
 * changes a volume which, at the call, is not the cluster's adopted disk (tagged
 * `kubernetes.io/cluster/<id>=owned`, `ebs.csi.aws.com/cluster=true` and `volhook.io/cluster=<id>`):
 * - copied foreign: a CopyVolumes of such a source (another cluster's data in a disk this one owns);
 * - touched not adopted: any other change of such a volume (attach, detach, delete, modify, tags, snapshot).
 * And: made from an unprotected source — a volume made from a VolumeSnapshot, or a copy of a
 * claim's volume, while that source lacked external-provisioner's source protection (write
 * before act: the protection is on before the volume is made from it).
 *
 * Group snapshots: every CreateSnapshots by its group content's name (a second call for one
 * group, or a second snapshot of one member, is a duplicate); a DeleteSnapshot of a group's
 * snapshot while its group content is Retain, not being deleted, or its VolumeGroupSnapshot is
 * alive is wrongly deleted; and a CreateSnapshots for a group whose claims are used on two nodes
 * is counted whatever EC2 answers (it must be refused before any EC2 call).
 */
import type { KubeObject } from '../../lib/local/kube/index.js';
import type { Snapshot as Ec2Snapshot, Volume } from '../../lib/local/ec2/index.js';
import { stuckAttachingMs } from '../../lib/reconcile/stuck-attachment.js';
import { changesVolumes, createdSnapshotId, createdSnapshotSet, createdVolumeId, createVolumeTags, isMutation, type Ec2Call } from './ec2-transport.js';
import { CLONE_SOURCE_PROTECTION, contentOf, diskIdOf, groupContentOf, SNAPSHOT_SOURCE_PROTECTION, type Content, type GroupContent, type Pv } from './checks.js';
import type { CrashController } from './crashes.js';
import type { JudgedWorld } from './world.js';

interface Va extends KubeObject {
  spec: { nodeName?: string; source?: { persistentVolumeName?: string; inlineVolumeSpec?: { csi?: { volumeHandle?: string } } } };
}

export class Oracle {
  /** CSIVolumeName → IDs of the volumes CreateVolume (or CopyVolumes) made for it. */
  readonly created = new Map<string, Set<string>>();
  /** CSIVolumeSnapshotName → IDs of the snapshots CreateSnapshot made for it. */
  readonly createdSnapshots = new Map<string, Set<string>>();
  /** CopySnapshot answers by the copy's CSIVolumeSnapshotName: more than one per content is a duplicate. */
  readonly createdCopies = new Map<string, Set<string>>();
  /** A group content's name (its snapshots' CSIVolumeSnapshotName) → CreateSnapshots calls EC2 carried out for it. */
  readonly createdGroups = new Map<string, number>();
  /** A group content's name → per member volume, the IDs of the snapshots CreateSnapshots made of it. */
  readonly createdGroupSnapshots = new Map<string, Map<string, Set<string>>>();
  /** VolumeGroupSnapshots whose claims are used on two nodes: never to be snapshotted. */
  readonly splitGroups = new Set<string>();
  /** Snapshot calls (answered or refused) for a group of volumes attached to different nodes. */
  readonly splitSnapshotted: string[] = [];
  readonly wronglyDeleted: string[] = [];
  readonly wronglyDetached: string[] = [];
  /** DetachVolumes of attachments the simulator held stuck `attaching`; of them, before the driver's 90 s (÷ the scale). */
  stuckGivenUp = 0;
  stuckGivenUpEarly = 0;
  /** Calls answered UnauthorizedOperation: the simulator holds the backend to the role policy. */
  readonly unauthorized: string[] = [];
  /** `CSIVolumeName` (pvc-<claim uid>) → ModifyVolume calls EC2 carried out on its volume. */
  readonly modified = new Map<string, number>();
  /** Volume ID → CreateTags calls EC2 carried out on it (only class changes tag a volume after create). */
  readonly tagged = new Map<string, number>();
  /** Disks the user took over (their Released Retain PV deleted): never to be deleted. */
  readonly takenOver = new Set<string>();
  /** Disks of pods' inline volumes (volume ID → pod): the user's, never to be deleted. */
  readonly inlineDisks = new Map<string, string>();
  /** CopyVolumes asked of a source that was not, at the call, the cluster's adopted disk. */
  readonly copiedForeign: string[] = [];
  /** Other changes asked of a volume that was not, at the call, the cluster's adopted disk. */
  readonly touchedNotAdopted: string[] = [];
  /**
   * CreateVolume from a snapshot, or CopyVolumes of a volume, carried out while the VolumeSnapshot
   * (or source claim) did not carry external-provisioner's source protection — for a claim that
   * was alive (a claim being deleted needs its source no more).
   */
  readonly unprotectedSource: string[] = [];
  /** Other clusters' disks the run put into EC2, as they were put there: so they must be at the end. */
  readonly foreign = new Map<string, Volume>();
  world?: JudgedWorld;

  constructor(
    private readonly crashes: Pick<CrashController, 'afterMutation'>,
    private readonly trace: (line: string) => void,
    /** A readable name for a volume: its claim's, when known. */
    private readonly describe: (volumeId: string, csiName?: string) => string,
    /** The simulator's time scale, which the backend's stuck-attach window is divided by. */
    private readonly ec2TimeScale = 1,
  ) {}

  /** The transport's observer: judges, records, and says whether to lose the answer. */
  observe(call: Ec2Call): boolean {
    const { action, params, response } = call;
    if (response.code === 'UnauthorizedOperation') this.unauthorized.push(`${action} ${params.get('VolumeId') ?? params.get('SnapshotId') ?? params.get('SourceVolumeId') ?? ''}: ${/<Message>([^<]{0,200})/.exec(response.body)?.[1] ?? ''}`);
    if (!changesVolumes(action)) return false;
    const world = this.world;
    if (!world) throw new Error('oracle used before its world was set');
    this.judgeOwnership(world, call);
    if (action === 'CreateSnapshots') this.judgeSplit(world, call);
    if (!isMutation(action) || response.status !== 200) return false;
    const volumeId = action === 'CreateVolume' || action === 'CopyVolumes' ? createdVolumeId(response.body) : (params.get('VolumeId') ?? undefined);
    let subject = volumeId ?? '?';
    switch (action) {
      case 'CreateSnapshot': {
        const name = createVolumeTags(params).CSIVolumeSnapshotName ?? '(no CSIVolumeSnapshotName)';
        const id = createdSnapshotId(response.body);
        if (id) addTo(this.createdSnapshots, name, id);
        subject = `${id ?? '?'} of ${this.describe(volumeId ?? '?')}`;
        break;
      }
      case 'CreateSnapshots': {
        const name = createVolumeTags(params).CSIVolumeSnapshotName ?? '(no CSIVolumeSnapshotName)';
        this.createdGroups.set(name, (this.createdGroups.get(name) ?? 0) + 1);
        let byVolume = this.createdGroupSnapshots.get(name);
        if (!byVolume) this.createdGroupSnapshots.set(name, (byVolume = new Map()));
        const set = createdSnapshotSet(response.body);
        for (const { snapshotId, volumeId: of } of set) addTo(byVolume, of, snapshotId);
        subject = `${name}: ${set.map((x) => `${x.snapshotId} of ${this.describe(x.volumeId)}`).join(', ') || 'no snapshot'}`;
        break;
      }
      case 'CopySnapshot': {
        const name = createVolumeTags(params).CSIVolumeSnapshotName ?? '(no CSIVolumeSnapshotName)';
        const id = createdSnapshotId(response.body);
        if (id) addTo(this.createdCopies, name, id);
        subject = `${id ?? '?'} in ${call.region ?? '?'}, a copy of ${params.get('SourceSnapshotId') ?? '?'}`;
        break;
      }
      case 'DeleteSnapshot': {
        const id = params.get('SnapshotId') ?? '?';
        subject = call.region && call.region !== world.sim.region ? `${id} in ${call.region}` : id;
        const wrong = this.judgeSnapshotDelete(world, id, call.region);
        if (wrong) this.wronglyDeleted.push(`DeleteSnapshot ${subject}: ${wrong}`);
        break;
      }
      case 'CopyVolumes':
      case 'CreateVolume': {
        const name = createVolumeTags(params).CSIVolumeName ?? '(no CSIVolumeName)';
        if (volumeId) addTo(this.created, name, volumeId);
        subject = this.describe(volumeId ?? '?', name);
        const unprotected = this.judgeSource(world, call, name);
        if (unprotected) this.unprotectedSource.push(`${action} ${subject}: ${unprotected}`);
        break;
      }
      case 'DeleteVolume': {
        subject = this.describe(volumeId ?? '?');
        const wrong = this.judgeDelete(world, call, volumeId ?? '');
        if (wrong) this.wronglyDeleted.push(`DeleteVolume ${subject}: ${wrong}`);
        break;
      }
      case 'DetachVolume': {
        const instanceId = params.get('InstanceId') ?? '';
        const node = world.nodes.find((n) => n.instanceId === instanceId)?.name ?? instanceId;
        subject = `${this.describe(volumeId ?? '?')} from ${node}`;
        const wrong = this.judgeDetach(world, call, volumeId ?? '', node);
        if (wrong) this.wronglyDetached.push(`DetachVolume ${subject}: ${wrong}`);
        break;
      }
      case 'ModifyVolume': {
        const name = call.volumeBefore?.tags.find((t) => t.key === 'CSIVolumeName')?.value ?? volumeId ?? '?';
        this.modified.set(name, (this.modified.get(name) ?? 0) + 1);
        subject = this.describe(volumeId ?? '?');
        break;
      }
      case 'CreateTags': {
        const id = params.get('ResourceId.1') ?? '?';
        this.tagged.set(id, (this.tagged.get(id) ?? 0) + 1);
        subject = this.describe(id);
        break;
      }
      case 'AttachVolume': {
        const instanceId = params.get('InstanceId') ?? '';
        subject = `${this.describe(volumeId ?? '?')} to ${world.nodes.find((n) => n.instanceId === instanceId)?.name ?? instanceId}`;
        break;
      }
    }
    const lose = this.crashes.afterMutation(action, subject);
    this.trace(`ec2 ${action} ${subject}${lose ? ' (answer lost)' : ''}`);
    return lose;
  }

  /** Judged for every call that changes volumes, answered or refused: asking is the fault. */
  private judgeOwnership(world: JudgedWorld, call: Ec2Call): void {
    for (const volume of call.volumesBefore ?? []) {
      const why = notAdopted(volume, world.clusterId);
      if (!why) continue;
      const line = `${call.action} ${volume.id}: ${why} (EC2 answered ${call.response.code ?? call.response.status})`;
      if (call.action === 'CopyVolumes') this.copiedForeign.push(line);
      else this.touchedNotAdopted.push(line);
    }
  }

  /** A CreateSnapshots for the content of a group whose claims are used on two nodes: asking is the fault. */
  private judgeSplit(world: JudgedWorld, call: Ec2Call): void {
    const name = createVolumeTags(call.params).CSIVolumeSnapshotName ?? '';
    const content = world.store.get('volumegroupsnapshotcontents', name) as GroupContent | undefined;
    const group = content?.spec.volumeGroupSnapshotRef?.name;
    if (group && this.splitGroups.has(group)) {
      this.splitSnapshotted.push(`CreateSnapshots of instance ${call.params.get('InstanceSpecification.InstanceId') ?? '?'} for group ${group} (${name}), whose claims are used on two nodes (EC2 answered ${call.response.code ?? call.response.status})`);
    }
  }

  /** Why the volume's source was not protected when it was made from it; undefined when it was (or had no source). */
  private judgeSource(world: JudgedWorld, call: Ec2Call, csiName: string): string | undefined {
    const uid = csiName.startsWith('pvc-') ? csiName.slice(4) : '';
    const claims = world.store.list('persistentvolumeclaims').items;
    const claim = claims.find((c) => c.metadata.uid === uid);
    if (!claim || claim.metadata.deletionTimestamp) return undefined;
    const snapshotId = call.action === 'CreateVolume' ? call.params.get('SnapshotId') : null;
    if (snapshotId) {
      const contents = world.store.list('volumesnapshotcontents').items as Content[];
      const ref = contents.find((c) => c.status?.snapshotHandle === snapshotId)?.spec.volumeSnapshotRef;
      const vs = ref?.name ? world.store.get('volumesnapshots', ref.name, claim.metadata.namespace) : undefined;
      if (!vs) return `no VolumeSnapshot records snapshot ${snapshotId}`;
      return (vs.metadata.finalizers ?? []).includes(SNAPSHOT_SOURCE_PROTECTION) ? undefined : `VolumeSnapshot ${vs.metadata.name} lacks ${SNAPSHOT_SOURCE_PROTECTION}`;
    }
    const sourceVolumeId = call.action === 'CopyVolumes' ? call.params.get('SourceVolumeId') : null;
    if (!sourceVolumeId) return undefined;
    const pv = pvNaming(world, sourceVolumeId);
    const source = pv && claims.find((c) => c.metadata.uid === pv.spec.claimRef?.uid);
    if (!source) return `no claim is bound to the PV of source volume ${sourceVolumeId}`;
    return (source.metadata.finalizers ?? []).includes(CLONE_SOURCE_PROTECTION) ? undefined : `source claim ${source.metadata.name} lacks ${CLONE_SOURCE_PROTECTION}`;
  }

  private judgeDelete(world: JudgedWorld, call: Ec2Call, volumeId: string): string | undefined {
    if (this.takenOver.has(volumeId)) return 'the user took it over: its last PV had reclaim policy Retain and was deleted';
    if (this.inlineDisks.has(volumeId)) return `it is the disk of pod ${this.inlineDisks.get(volumeId)}'s inline volume, the user's`;
    const pv = pvNaming(world, volumeId);
    if (pv) {
      const policy = pv.spec.persistentVolumeReclaimPolicy ?? 'Retain';
      const phase = pv.status?.phase ?? '(no phase)';
      if (policy !== 'Delete') return `its PV ${pv.metadata.name} has reclaim policy ${policy}`;
      if (phase !== 'Released') return `its PV ${pv.metadata.name} is ${phase}, not Released`;
      return undefined;
    }
    const name = call.volumeBefore?.tags.find((t) => t.key === 'CSIVolumeName')?.value ?? '';
    const uid = name.startsWith('pvc-') ? name.slice(4) : '';
    const claim = uid ? world.store.list('persistentvolumeclaims').items.find((c) => c.metadata.uid === uid) : undefined;
    if (claim && !claim.metadata.deletionTimestamp && call.volumeBefore?.state !== 'error') {
      return `no PV names it, and its claim ${claim.metadata.namespace}/${claim.metadata.name} is alive (not being deleted)`;
    }
    return undefined;
  }

  /**
   * Wrong: a snapshot of another cluster (or none); one whose content is Retain; one whose
   * content is there and not being deleted — unless it is a younger duplicate its content never
   * recorded (the name tag names the content, the handle another snapshot).
   */
  /** A copy (in another Region) is judged as its content's snapshot is: by the content its name tag names. */
  private judgeSnapshotDelete(world: JudgedWorld, snapshotId: string, region?: string): string | undefined {
    const snapshot = (region && region !== world.sim.region ? world.sim.inRegion(region) : world.sim).snapshot(snapshotId);
    if (!snapshot) return undefined;
    if (snapshot.tags.find((t) => t.key === `kubernetes.io/cluster/${world.clusterId}`)?.value !== 'owned') return 'it is not owned by this cluster';
    return this.judgeContentSnapshotDelete(world, snapshot) ?? this.judgeGroupSnapshotDelete(world, snapshot);
  }

  /**
   * Of a group's snapshot (its group content records it, or — nothing recorded for its volume —
   * it is the oldest of a member volume tagged with the content's name), wrong: when the group
   * content is Retain; when the content is not being deleted, or its VolumeGroupSnapshot is alive.
   * A younger duplicate, or a snapshot of a volume not in the group, was never the group's.
   */
  private judgeGroupSnapshotDelete(world: JudgedWorld, snapshot: Ec2Snapshot): string | undefined {
    const groupContents = world.store.list('volumegroupsnapshotcontents').items as GroupContent[];
    const content = groupContentOf({ groupContents }, snapshot);
    if (!content) return undefined;
    const name = content.metadata.name;
    const infos = content.status?.volumeSnapshotInfoList ?? [];
    const recorded = infos.some((i) => i.snapshotHandle === snapshot.id);
    if (!recorded) {
      if (!(content.spec.source?.volumeHandles ?? []).includes(snapshot.volumeId)) return undefined;
      if (infos.some((i) => i.volumeHandle === snapshot.volumeId && i.snapshotHandle)) return undefined;
      const oldest = world.sim
        .snapshots()
        .filter((x) => x.volumeId === snapshot.volumeId && x.tags.find((t) => t.key === 'CSIVolumeSnapshotName')?.value === name)
        .sort((a, b) => a.startTime - b.startTime || (a.id < b.id ? -1 : 1))[0];
      if (oldest?.id !== snapshot.id) return undefined;
    }
    const what = `${recorded ? 'recorded by' : 'the oldest of its volume named by'} group content ${name}`;
    if ((content.spec.deletionPolicy ?? 'Delete') !== 'Delete') return `it is ${what}, which has deletion policy ${content.spec.deletionPolicy}`;
    const ref = content.spec.volumeGroupSnapshotRef;
    const group = ref?.name ? world.store.get('volumegroupsnapshots', ref.name, ref.namespace ?? undefined) : undefined;
    if (group && group.metadata.uid === ref?.uid && !group.metadata.deletionTimestamp) return `it is ${what}, whose VolumeGroupSnapshot ${ref?.name} is alive (not being deleted)`;
    if (!content.metadata.deletionTimestamp) return `it is ${what}, which is not being deleted`;
    return undefined;
  }

  private judgeContentSnapshotDelete(world: JudgedWorld, snapshot: Ec2Snapshot): string | undefined {
    const snapshotId = snapshot.id;
    const contents = world.store.list('volumesnapshotcontents').items as Content[];
    const content = contentOf({ contents }, snapshot);
    if (!content) return undefined;
    if ((content.spec.deletionPolicy ?? 'Delete') !== 'Delete') return `its content ${content.metadata.name} has deletion policy ${content.spec.deletionPolicy}`;
    if (content.metadata.deletionTimestamp) return undefined;
    const recorded = content.status?.snapshotHandle;
    if (recorded === snapshotId) return `its content ${content.metadata.name} records it and is not being deleted`;
    if (recorded) return undefined; // a duplicate its content never recorded
    const name = snapshot.tags.find((t) => t.key === 'CSIVolumeSnapshotName')?.value;
    const oldest = world.sim
      .snapshots()
      .filter((x) => x.tags.find((t) => t.key === 'CSIVolumeSnapshotName')?.value === name)
      .sort((a, b) => a.startTime - b.startTime || (a.id < b.id ? -1 : 1))[0];
    return oldest?.id === snapshotId ? `it is the snapshot of content ${content.metadata.name}, which is not being deleted` : undefined;
  }

  /**
   * Wrong while a VolumeAttachment that is not being deleted names the disk on that node — unless
   * the attachment was stuck (never attached, so nothing was written through it), which is
   * detached to attach it afresh: held stuck by the simulator (the truth, whatever evidence the
   * backend went by), or `attaching` for longer than the driver's bound. An attachment that
   * would have finished, given up early, is wrong.
   */
  private judgeDetach(world: JudgedWorld, call: Ec2Call, volumeId: string, node: string): string | undefined {
    const instanceId = call.params.get('InstanceId');
    const before = call.volumeBefore?.attachments.find((a) => a.instanceId === instanceId);
    const late = before !== undefined && world.clock.now() - before.attachTime > stuckAttachingMs(this.ec2TimeScale);
    if (before?.state === 'attaching' && before.stuck) {
      this.stuckGivenUp++;
      if (!late) this.stuckGivenUpEarly++;
    }
    if (before?.state === 'attaching' && (before.stuck || late)) return undefined;
    const inline = (world.store.list('volumeattachments').items as Va[]).find(
      (a) => a.spec.source?.inlineVolumeSpec?.csi?.volumeHandle === volumeId && a.spec.nodeName === node && !a.metadata.deletionTimestamp,
    );
    if (inline) return `VolumeAttachment ${inline.metadata.name.slice(0, 16)}… (not being deleted) names it inline on ${node}`;
    const pv = pvNaming(world, volumeId);
    if (!pv) return undefined;
    const va = (world.store.list('volumeattachments').items as Va[]).find(
      (a) => a.spec.source?.persistentVolumeName === pv.metadata.name && a.spec.nodeName === node && !a.metadata.deletionTimestamp,
    );
    return va ? `VolumeAttachment ${va.metadata.name.slice(0, 16)}… (not being deleted) names PV ${pv.metadata.name} on ${node}` : undefined;
  }
}

/**
 * Why the volume is not the cluster's adopted disk, or undefined when it is. Read from the tags
 * here, independently of lib/reconcile/tags.ts, so the judge does not share the rule it judges.
 */
export function notAdopted(volume: Pick<Volume, 'tags'>, clusterId: string): string | undefined {
  const tag = (key: string) => volume.tags.find((t) => t.key === key)?.value;
  if (tag(`kubernetes.io/cluster/${clusterId}`) !== 'owned') {
    const other = volume.tags.find((t) => t.key.startsWith('kubernetes.io/cluster/'));
    return other ? `another cluster's disk (${other.key}=${other.value})` : `not cluster "${clusterId}"'s disk`;
  }
  // IAM reads tag keys in any case: any spelling of volhook.io/cluster naming another cluster claims the disk.
  const claimed = volume.tags.find((t) => t.key.toLowerCase() === 'volhook.io/cluster' && t.value !== clusterId);
  if (claimed) return `another cluster's disk (${claimed.key}=${claimed.value})`;
  if (tag('ebs.csi.aws.com/cluster') !== 'true') return `cluster "${clusterId}"'s disk, not adopted (no ebs.csi.aws.com/cluster=true)`;
  return tag('volhook.io/cluster') === clusterId ? undefined : `cluster "${clusterId}"'s disk, not adopted (no volhook.io/cluster=${clusterId})`;
}

export function pvNaming(world: JudgedWorld, volumeId: string): Pv | undefined {
  return (world.store.list('persistentvolumes').items as Pv[]).find((pv) => diskIdOf(pv) === volumeId);
}

/** Adds `value` to the set `map` holds under `key`, making the set on first use. */
function addTo<K, V>(map: Map<K, Set<V>>, key: K, value: V): void {
  let set = map.get(key);
  if (!set) map.set(key, (set = new Set()));
  set.add(value);
}
