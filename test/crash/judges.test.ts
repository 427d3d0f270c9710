/**
 * The explorer is only as good as its judges: each is shown the situation it must catch, and
 * the nearest one it must let pass, on a world built as a run builds it.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CLONE_SOURCE_PROTECTION, finalVerdict, groupProblems, snapshot, SNAPSHOT_SOURCE_PROTECTION, sourceProtectionProblems, unsettled, type TrackedClaim, type TrackedGroup } from './checks.js';
import { CrashController } from './crashes.js';
import { simulatorTransport, type Ec2Call } from './ec2-transport.js';
import { notAdopted, Oracle } from './oracle.js';
import { clusterSession } from '../iam/fixtures.js';
import { CLASSES, COPY_REGION, createWorld, DRIVER, type World } from './world.js';
import { STUCK_ATTACHING_MS } from '../../lib/reconcile/stuck-attachment.js';

const retain = CLASSES.find((c) => c.name === 'wffc-retain')!;
const del = CLASSES.find((c) => c.name === 'wffc-delete')!;

let world: World;
let oracle: Oracle;

beforeEach(async () => {
  oracle = new Oracle(new CrashController([]), () => {}, (id) => id);
  world = await createWorld({ seed: 1, clusterId: 'crash', observe: () => false });
  oracle.world = world;
});
afterEach(() => world.close());

/** A volume made straight in the simulator, tagged as volhook tags it. */
async function volume(name: string): Promise<string> {
  const out = await world.sim.call({
    Action: 'CreateVolume',
    AvailabilityZone: 'us-east-1a',
    Size: '4',
    'TagSpecification.1.ResourceType': 'volume',
    'TagSpecification.1.Tag.1.Key': 'CSIVolumeName',
    'TagSpecification.1.Tag.1.Value': name,
    'TagSpecification.1.Tag.2.Key': 'kubernetes.io/cluster/crash',
    'TagSpecification.1.Tag.2.Value': 'owned',
  });
  const id = /<volumeId>(vol-[0-9a-f]+)<\/volumeId>/.exec(out.body)?.[1];
  if (!id) throw new Error(out.body);
  world.clock.advance(20_000);
  return id;
}

function pv(name: string, volumeId: string, policy: 'Delete' | 'Retain', phase: string) {
  const created = world.store.create('persistentvolumes', {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name },
    spec: {
      capacity: { storage: '4Gi' },
      accessModes: ['ReadWriteOnce'],
      persistentVolumeReclaimPolicy: policy,
      csi: { driver: 'ebs.csi.aws.com', volumeHandle: volumeId },
    },
  });
  world.store.updateStatus('persistentvolumes', { ...created, status: { phase } });
}

function va(pvName: string, node: string) {
  return world.store.create('volumeattachments', {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'VolumeAttachment',
    metadata: { name: `va-${pvName}`, finalizers: ['external-attacher/ebs-csi-aws-com'] },
    spec: { attacher: 'ebs.csi.aws.com', nodeName: node, source: { persistentVolumeName: pvName } },
  });
}

/** What the transport tells the oracle once EC2 carried a call out. */
function call(action: string, params: Record<string, string>, body = ''): Ec2Call {
  return { action, params: new URLSearchParams({ Action: action, ...params }), response: { status: 200, body, requestId: 'r', action } };
}

describe('crash explorer judges', () => {
  it('wrongly deleted: a DeleteVolume whose PV is Retain, or not Released; a Released Delete PV is fine', async () => {
    const kept = await volume('pvc-kept');
    const bound = await volume('pvc-bound');
    const released = await volume('pvc-released');
    pv('pvc-kept', kept, 'Retain', 'Released');
    pv('pvc-bound', bound, 'Delete', 'Bound');
    pv('pvc-released', released, 'Delete', 'Released');
    for (const id of [kept, bound, released]) oracle.observe(call('DeleteVolume', { VolumeId: id }));
    expect(oracle.wronglyDeleted).toEqual([
      expect.stringMatching(new RegExp(`${kept}.*reclaim policy Retain`)),
      expect.stringMatching(new RegExp(`${bound}.*is Bound, not Released`)),
    ]);
  });

  it('wrongly deleted: no PV, but the claim the disk was made for is alive', async () => {
    const claim = world.store.create('persistentvolumeclaims', {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: 'c0', namespace: 'default' },
      spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'wffc-delete', resources: { requests: { storage: '4Gi' } } },
    });
    const id = await volume(`pvc-${claim.metadata.uid}`);
    const before = world.sim.volume(id)!;
    oracle.observe({ ...call('DeleteVolume', { VolumeId: id }), volumeBefore: before });
    expect(oracle.wronglyDeleted).toEqual([expect.stringContaining('claim default/c0 is alive')]);
  });

  it('wrongly detached: a DetachVolume while a VolumeAttachment not being deleted names the volume and node', async () => {
    const node = world.nodes[0]!;
    const live = await volume('pvc-live');
    const going = await volume('pvc-going');
    pv('pvc-live', live, 'Delete', 'Bound');
    pv('pvc-going', going, 'Delete', 'Bound');
    va('pvc-live', node.name);
    va('pvc-going', node.name);
    world.store.delete('volumeattachments', 'va-pvc-going');
    oracle.observe(call('DetachVolume', { VolumeId: live, InstanceId: node.instanceId }));
    oracle.observe(call('DetachVolume', { VolumeId: going, InstanceId: node.instanceId }));
    expect(oracle.wronglyDetached).toEqual([expect.stringMatching(new RegExp(`${live}.*not being deleted`))]);
  });

  it('wrongly detached: not the DetachVolume of an attachment attaching past the driver’s bound, nor of a young one the simulator holds stuck; still one that is attaching, young and not stuck', async () => {
    const node = world.nodes[0]!;
    const old = await volume('pvc-old');
    const stuck = await volume('pvc-stuck');
    const young = await volume('pvc-young');
    for (const [name, id] of [['pvc-old', old], ['pvc-stuck', stuck], ['pvc-young', young]] as const) {
      pv(name, id, 'Delete', 'Bound');
      va(name, node.name);
    }
    const attaching = (id: string, sinceMs: number, stuckThere: boolean) => {
      const v = world.sim.volume(id)!;
      const attachment = { instanceId: node.instanceId, device: '/dev/xvdba', state: 'attaching' as const, attachTime: world.clock.now() - sinceMs, deleteOnTermination: false, epoch: 1 };
      return { ...v, attachments: [stuckThere ? { ...attachment, stuck: true } : attachment] };
    };
    oracle.observe({ ...call('DetachVolume', { VolumeId: old, InstanceId: node.instanceId }), volumeBefore: attaching(old, STUCK_ATTACHING_MS + 1_000, false) });
    oracle.observe({ ...call('DetachVolume', { VolumeId: stuck, InstanceId: node.instanceId }), volumeBefore: attaching(stuck, STUCK_ATTACHING_MS / 6, true) });
    oracle.observe({ ...call('DetachVolume', { VolumeId: young, InstanceId: node.instanceId }), volumeBefore: attaching(young, STUCK_ATTACHING_MS / 6, false) });
    expect(oracle.wronglyDetached).toEqual([expect.stringMatching(new RegExp(`${young}.*not being deleted`))]);
  });

  it('wrongly detached, judged at a simulator time scale of 10: stuck past a tenth of the bound -> not wrong; the same detach judged at scale 1 -> wrong', async () => {
    const node = world.nodes[0]!;
    const id = await volume('pvc-scaled');
    pv('pvc-scaled', id, 'Delete', 'Bound');
    va('pvc-scaled', node.name);
    const v = world.sim.volume(id)!;
    const before = { ...v, attachments: [{ instanceId: node.instanceId, device: '/dev/xvdba', state: 'attaching' as const, attachTime: world.clock.now() - STUCK_ATTACHING_MS / 10 - 1_000, deleteOnTermination: false, epoch: 1 }] };
    const scaled = new Oracle(new CrashController([]), () => {}, (volumeId) => volumeId, 10);
    scaled.world = world;
    scaled.observe({ ...call('DetachVolume', { VolumeId: id, InstanceId: node.instanceId }), volumeBefore: before });
    expect(scaled.wronglyDetached).toEqual([]);
    oracle.observe({ ...call('DetachVolume', { VolumeId: id, InstanceId: node.instanceId }), volumeBefore: before });
    expect(oracle.wronglyDetached).toEqual([expect.stringMatching(new RegExp(`${id}.*not being deleted`))]);
  });

  it("an inline volume's disk (no PV): detached while its VolumeAttachment is not being deleted, or deleted -> wrong; attached under it -> not without a VolumeAttachment, kept -> not leaked", async () => {
    const node = world.nodes[0]!;
    const disk = await volume('inline-disk');
    const other = await volume('pvc-other');
    oracle.inlineDisks.set(disk, 'i0-pod0');
    world.store.create('volumeattachments', {
      apiVersion: 'storage.k8s.io/v1',
      kind: 'VolumeAttachment',
      metadata: { name: 'va-inline', finalizers: ['external-attacher/ebs-csi-aws-com'] },
      spec: { attacher: 'ebs.csi.aws.com', nodeName: node.name, source: { inlineVolumeSpec: { csi: { driver: 'ebs.csi.aws.com', volumeHandle: disk } } } },
    });
    await world.sim.call({ Action: 'AttachVolume', VolumeId: disk, InstanceId: node.instanceId, Device: '/dev/xvdba' });
    world.clock.advance(10_000);
    expect(unsettled(world, [], false).filter((line) => line.includes(disk) && line.includes('no VolumeAttachment'))).toEqual([]);
    oracle.observe(call('DetachVolume', { VolumeId: disk, InstanceId: node.instanceId }));
    oracle.observe(call('DeleteVolume', { VolumeId: disk }));
    expect(oracle.wronglyDetached).toEqual([expect.stringMatching(new RegExp(`${disk}.*names it inline`))]);
    expect(oracle.wronglyDeleted).toEqual([expect.stringContaining("i0-pod0's inline volume")]);
    // The control: the same disk not known as inline is leaked at the end; the inline one is not.
    const verdict = finalVerdict(world, [], oracle, []);
    expect(verdict.findings.filter((f) => f.startsWith('leaked'))).toEqual([expect.stringContaining(`disk ${other}`)]);
  });

  it('the end: a disk no PV names is leaked, a second volume for a name is a duplicate, an attachment without a VolumeAttachment is reported', async () => {
    const node = world.nodes[0]!;
    const orphan = await volume('pvc-orphan');
    const first = await volume('pvc-twice');
    const second = await volume('pvc-twice');
    pv('pvc-twice', first, 'Retain', 'Released');
    await world.sim.call({ Action: 'DeleteVolume', VolumeId: second });
    oracle.observe(call('CreateVolume', tagsOf('pvc-twice'), `<volumeId>${first}</volumeId>`));
    oracle.observe(call('CreateVolume', tagsOf('pvc-twice'), `<volumeId>${second}</volumeId>`));
    await world.sim.call({ Action: 'AttachVolume', VolumeId: orphan, InstanceId: node.instanceId, Device: '/dev/xvdba' });
    world.clock.advance(10_000);

    const tracked: TrackedClaim[] = [{ name: 'c0', class: retain, deleted: true }];
    const verdict = finalVerdict(world, tracked, oracle, []);
    expect(verdict.counts).toMatchObject({ leaked: 1, duplicate: 1, attachedWithoutVa: 1, wronglyDeleted: 0, wronglyDetached: 0, notConverged: 0 });
    expect(verdict.findings.join('\n')).toContain(`leaked: disk ${orphan}`);
    expect(unsettled(world, tracked, true)).toEqual([expect.stringContaining(`disk ${orphan} is attached to ${node.name}`)]);
  });

  it('not converged: a deleted Delete claim whose PV and disk are still there', async () => {
    const claim = world.store.create('persistentvolumeclaims', {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: 'c1', namespace: 'default' },
      spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'wffc-delete', resources: { requests: { storage: '4Gi' } } },
    });
    const uid = claim.metadata.uid;
    const id = await volume(`pvc-${uid}`);
    pv(`pvc-${uid}`, id, 'Delete', 'Released');
    world.store.delete('persistentvolumeclaims', 'c1', 'default');
    await world.settle();
    const problems = unsettled(world, [{ name: 'c1', class: del, uid, deleted: true }], true);
    expect(problems).toEqual([
      expect.stringContaining('deleted claim c1 (wffc-delete): its PV is still there'),
      expect.stringContaining(`deleted claim c1 (wffc-delete): its disk ${id} is available, not deleted`),
    ]);
  });
});

describe('crash explorer judges: snapshots', () => {
  /** An EBS snapshot of a new volume, tagged as volhook tags it (or for another cluster). */
  async function ebsSnapshot(name: string, cluster = 'crash'): Promise<string> {
    const volumeId = await volume(`pvc-src-${name}`);
    const out = await world.sim.call({
      Action: 'CreateSnapshot',
      VolumeId: volumeId,
      'TagSpecification.1.ResourceType': 'snapshot',
      'TagSpecification.1.Tag.1.Key': 'CSIVolumeSnapshotName',
      'TagSpecification.1.Tag.1.Value': name,
      'TagSpecification.1.Tag.2.Key': `kubernetes.io/cluster/${cluster}`,
      'TagSpecification.1.Tag.2.Value': 'owned',
    });
    const id = /<snapshotId>(snap-[0-9a-f]+)<\/snapshotId>/.exec(out.body)?.[1];
    if (!id) throw new Error(out.body);
    world.clock.advance(1_000);
    return id;
  }

  function content(name: string, policy: 'Delete' | 'Retain', handle?: string, deleting = false) {
    const created = world.store.create('volumesnapshotcontents', {
      apiVersion: 'snapshot.storage.k8s.io/v1',
      kind: 'VolumeSnapshotContent',
      metadata: { name, ...(deleting && { finalizers: ['snapshot.storage.kubernetes.io/volumesnapshotcontent-bound-protection'] }) },
      spec: {
        driver: 'ebs.csi.aws.com',
        deletionPolicy: policy,
        source: { volumeHandle: 'vol-0123456789abcdef0' },
        volumeSnapshotClassName: 'snap-delete',
        volumeSnapshotRef: { kind: 'VolumeSnapshot', apiVersion: 'snapshot.storage.k8s.io/v1', namespace: 'default', name: `vs-${name}`, uid: `uid-${name}` },
      },
    } as never);
    if (handle) world.store.updateStatus('volumesnapshotcontents', { ...created, status: { snapshotHandle: handle, readyToUse: true } } as never);
    if (deleting) world.store.delete('volumesnapshotcontents', name);
  }

  it("wrongly deleted: a Retain content's snapshot, a recorded one whose content is not being deleted, another cluster's; fine: a Delete content being deleted, an unrecorded younger duplicate", async () => {
    const retained = await ebsSnapshot('snapcontent-retain');
    content('snapcontent-retain', 'Retain', retained);
    const recorded = await ebsSnapshot('snapcontent-live');
    content('snapcontent-live', 'Delete', recorded);
    const foreign = await ebsSnapshot('snapcontent-other', 'other');
    const going = await ebsSnapshot('snapcontent-going');
    content('snapcontent-going', 'Delete', going, true);
    const oldest = await ebsSnapshot('snapcontent-dup');
    const younger = await ebsSnapshot('snapcontent-dup');
    content('snapcontent-dup', 'Delete');
    for (const id of [retained, recorded, foreign, going, younger]) oracle.observe(call('DeleteSnapshot', { SnapshotId: id }));
    expect(oracle.wronglyDeleted).toEqual([
      expect.stringMatching(new RegExp(`${retained}.*deletion policy Retain`)),
      expect.stringMatching(new RegExp(`${recorded}.*records it and is not being deleted`)),
      expect.stringMatching(new RegExp(`${foreign}.*not owned by this cluster`)),
    ]);
    oracle.observe(call('DeleteSnapshot', { SnapshotId: oldest }));
    expect(oracle.wronglyDeleted[3]).toMatch(new RegExp(`${oldest}.*snapshot of content snapcontent-dup`));
  });

  it('the end: a snapshot no content names is leaked; two CreateSnapshot for one name are a duplicate', async () => {
    const orphan = await ebsSnapshot('snapcontent-orphan');
    const kept = await ebsSnapshot('snapcontent-kept');
    content('snapcontent-kept', 'Retain', kept);
    const params = { 'TagSpecification.1.Tag.1.Key': 'CSIVolumeSnapshotName', 'TagSpecification.1.Tag.1.Value': 'snapcontent-kept' };
    oracle.observe(call('CreateSnapshot', params, `<snapshotId>${kept}</snapshotId>`));
    oracle.observe(call('CreateSnapshot', params, `<snapshotId>${orphan}</snapshotId>`));
    const verdict = finalVerdict(world, [], oracle, []);
    // (The snapshots' source volumes, which no PV names, are leaked disks too.)
    expect(verdict.findings.filter((f) => f.startsWith('leaked: EBS snapshot'))).toEqual([expect.stringContaining(`leaked: EBS snapshot ${orphan}`)]);
    expect(verdict.findings.filter((f) => f.startsWith('duplicate'))).toEqual([expect.stringContaining(`2 EBS snapshots created for snapcontent-kept`)]);
    expect(verdict.counts).toMatchObject({ duplicate: 1, wronglyDeleted: 0 });
  });

  /** A copy of `source` in COPY_REGION, made as the backend makes it: sent to that Region, tagged like its snapshot. */
  async function copyIn(source: string, name: string): Promise<string> {
    world.clock.advance(60_000);
    const out = await world.sim.call(
      {
        Action: 'CopySnapshot',
        SourceRegion: 'us-east-1',
        SourceSnapshotId: source,
        'TagSpecification.1.ResourceType': 'snapshot',
        'TagSpecification.1.Tag.1.Key': 'CSIVolumeSnapshotName',
        'TagSpecification.1.Tag.1.Value': name,
        'TagSpecification.1.Tag.2.Key': 'kubernetes.io/cluster/crash',
        'TagSpecification.1.Tag.2.Value': 'owned',
      },
      { region: COPY_REGION },
    );
    const id = /<snapshotId>(snap-[0-9a-f]+)<\/snapshotId>/.exec(out.body)?.[1];
    if (!id) throw new Error(out.body);
    return id;
  }

  it('cross-Region copies at the end: a copy no content names, or whose Delete content is being deleted, is left behind; one its Retain content names is not; two CopySnapshot for one name are a duplicate', async () => {
    const kept = await ebsSnapshot('snapcontent-kept');
    content('snapcontent-kept', 'Retain', kept);
    const keptCopy = await copyIn(kept, 'snapcontent-kept');
    const gone = await ebsSnapshot('snapcontent-gone');
    const orphanCopy = await copyIn(gone, 'snapcontent-gone');
    const going = await ebsSnapshot('snapcontent-going');
    content('snapcontent-going', 'Delete', going, true);
    const goingCopy = await copyIn(going, 'snapcontent-going');
    const params = { 'TagSpecification.1.Tag.1.Key': 'CSIVolumeSnapshotName', 'TagSpecification.1.Tag.1.Value': 'snapcontent-kept' };
    oracle.observe({ ...call('CopySnapshot', params, `<snapshotId>${keptCopy}</snapshotId>`), region: COPY_REGION });
    oracle.observe({ ...call('CopySnapshot', params, `<snapshotId>${orphanCopy}</snapshotId>`), region: COPY_REGION });
    const verdict = finalVerdict(world, [], oracle, []);
    expect(verdict.findings.filter((f) => f.startsWith('copiesLeftBehind') || f.includes(`copy `))).toEqual([
      expect.stringContaining(`copy ${orphanCopy}`),
      expect.stringMatching(new RegExp(`copy ${goingCopy}.*its Delete content snapcontent-going is being deleted`)),
    ]);
    expect(verdict.findings.filter((f) => f.startsWith('duplicate'))).toEqual([expect.stringContaining('2 cross-Region copies made for snapcontent-kept')]);
    expect(verdict.counts).toMatchObject({ copiesLeftBehind: 2, duplicate: 1 });
  });

  it("a copy deleted is judged as its content's snapshot: while its Retain content names it -> wrongly deleted; its Delete content being deleted -> fine", async () => {
    const kept = await ebsSnapshot('snapcontent-kept');
    content('snapcontent-kept', 'Retain', kept);
    const keptCopy = await copyIn(kept, 'snapcontent-kept');
    const going = await ebsSnapshot('snapcontent-going');
    content('snapcontent-going', 'Delete', going, true);
    const goingCopy = await copyIn(going, 'snapcontent-going');
    for (const id of [keptCopy, goingCopy]) oracle.observe({ ...call('DeleteSnapshot', { SnapshotId: id }), region: COPY_REGION });
    expect(oracle.wronglyDeleted).toEqual([expect.stringMatching(new RegExp(`${keptCopy} in ${COPY_REGION}.*deletion policy Retain`))]);
  });
});

describe('crash explorer judges: group snapshots', () => {
  const node = () => world.nodes[0]!;

  /** Volumes attached to the first node, as a group's members are. */
  async function attachedVolumes(n: number): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      const id = await volume(`pvc-member-${i}`);
      const out = await world.sim.call({ Action: 'AttachVolume', VolumeId: id, InstanceId: node().instanceId, Device: `/dev/xvdb${'abcdef'[i]}` });
      if (out.status !== 200) throw new Error(out.body);
      ids.push(id);
    }
    world.clock.advance(10_000);
    return ids;
  }

  /** The group's CreateSnapshots as EC2 answers it, its snapshots tagged with the group content's name. */
  async function createSnapshots(name: string, exclude: string[] = []): Promise<Ec2Call> {
    const params: Record<string, string> = {
      Action: 'CreateSnapshots',
      'InstanceSpecification.InstanceId': node().instanceId,
      'InstanceSpecification.ExcludeBootVolume': 'true',
      'TagSpecification.1.ResourceType': 'snapshot',
      'TagSpecification.1.Tag.1.Key': 'CSIVolumeSnapshotName',
      'TagSpecification.1.Tag.1.Value': name,
      'TagSpecification.1.Tag.2.Key': 'kubernetes.io/cluster/crash',
      'TagSpecification.1.Tag.2.Value': 'owned',
    };
    exclude.forEach((id, i) => (params[`InstanceSpecification.ExcludeDataVolumeId.${i + 1}`] = id));
    const response = await world.sim.call(params);
    if (response.status !== 200) throw new Error(response.body);
    // EC2 takes one snapshot of a volume at a time: 15 s between them.
    world.clock.advance(16_000);
    return { action: 'CreateSnapshots', params: new URLSearchParams(params), response };
  }

  /** The snapshots a CreateSnapshots made, by volume. */
  function byVolume(c: Ec2Call): Map<string, string> {
    return new Map(world.sim.snapshots().filter((s) => c.response.body.includes(s.id)).map((s) => [s.volumeId, s.id]));
  }

  /** A VolumeGroupSnapshot (the common controller's view of it is not needed: only what the judges read). */
  function group(name: string, deleting = false): string {
    const created = world.store.create('volumegroupsnapshots', {
      apiVersion: 'groupsnapshot.storage.k8s.io/v1',
      kind: 'VolumeGroupSnapshot',
      metadata: { name, namespace: 'default', ...(deleting && { finalizers: ['groupsnapshot.storage.kubernetes.io/volumegroupsnapshot-bound-protection'] }) },
      spec: { volumeGroupSnapshotClassName: 'group-delete', source: { selector: { matchLabels: { app: name } } } },
    } as never);
    if (deleting) world.store.delete('volumegroupsnapshots', name, 'default');
    return created.metadata.uid;
  }

  /** A group content of `members`, recording `recorded` (volume → snapshot) when given; `deleting`: with a deletion timestamp. */
  function groupContent(name: string, policy: 'Delete' | 'Retain', ref: { name: string; uid: string }, members: string[], recorded?: Map<string, string>, deleting = false) {
    const created = world.store.create('volumegroupsnapshotcontents', {
      apiVersion: 'groupsnapshot.storage.k8s.io/v1',
      kind: 'VolumeGroupSnapshotContent',
      metadata: { name, finalizers: ['groupsnapshot.storage.kubernetes.io/volumegroupsnapshotcontent-bound-protection'] },
      spec: {
        driver: DRIVER,
        deletionPolicy: policy,
        volumeGroupSnapshotClassName: `group-${policy.toLowerCase()}`,
        volumeGroupSnapshotRef: { kind: 'VolumeGroupSnapshot', namespace: 'default', ...ref },
        source: { volumeHandles: members },
      },
    } as never);
    if (recorded) {
      const list = [...recorded].map(([volumeHandle, snapshotHandle]) => ({ volumeHandle, snapshotHandle, readyToUse: true }));
      world.store.updateStatus('volumegroupsnapshotcontents', { ...created, status: { volumeGroupSnapshotHandle: name, readyToUse: true, volumeSnapshotInfoList: list } } as never);
    }
    if (deleting) world.store.delete('volumegroupsnapshotcontents', name);
  }

  const deleteSnapshot = (id: string) => oracle.observe(call('DeleteSnapshot', { SnapshotId: id }));

  it("wrongly deleted: a group's snapshot its Retain content records, one its live group's content records, the oldest of a member volume while the group is alive; fine: its Delete content being deleted with the group, a younger duplicate, a non-member's", async () => {
    const [a, b, other] = await attachedVolumes(3);
    // Retain, its group gone: its snapshots are the content's, kept.
    const retain = await createSnapshots('groupsnapcontent-retain', [other!]);
    groupContent('groupsnapcontent-retain', 'Retain', { name: 'gone', uid: 'uid-gone' }, [a!, b!], byVolume(retain), true);
    // Delete, its group alive: nothing of it may go.
    const live = await createSnapshots('groupsnapcontent-live', [other!]);
    groupContent('groupsnapcontent-live', 'Delete', { name: 'live', uid: group('live') }, [a!, b!], byVolume(live));
    // Delete, nothing recorded yet, its group alive: a lost answer's set, then a duplicate of it, and one of a volume not in the group.
    const first = await createSnapshots('groupsnapcontent-unrecorded');
    const second = await createSnapshots('groupsnapcontent-unrecorded', [other!]);
    groupContent('groupsnapcontent-unrecorded', 'Delete', { name: 'unrecorded', uid: group('unrecorded') }, [a!, b!]);
    // Delete, being deleted with its group: its snapshots go.
    const going = await createSnapshots('groupsnapcontent-going', [other!]);
    groupContent('groupsnapcontent-going', 'Delete', { name: 'going', uid: group('going', true) }, [a!, b!], byVolume(going), true);

    deleteSnapshot(byVolume(retain).get(a!)!);
    deleteSnapshot(byVolume(live).get(b!)!);
    deleteSnapshot(byVolume(first).get(a!)!);
    expect(oracle.wronglyDeleted).toEqual([
      expect.stringMatching(new RegExp(`${byVolume(retain).get(a!)}: it is recorded by group content groupsnapcontent-retain, which has deletion policy Retain`)),
      expect.stringMatching(new RegExp(`${byVolume(live).get(b!)}: .*VolumeGroupSnapshot live is alive`)),
      expect.stringMatching(new RegExp(`${byVolume(first).get(a!)}: it is the oldest of its volume named by group content groupsnapcontent-unrecorded, whose VolumeGroupSnapshot unrecorded is alive`)),
    ]);
    // The controls: none of these is judged wrong.
    deleteSnapshot(byVolume(second).get(a!)!);
    deleteSnapshot(byVolume(first).get(other!)!);
    deleteSnapshot(byVolume(going).get(a!)!);
    deleteSnapshot(byVolume(going).get(b!)!);
    expect(oracle.wronglyDeleted).toHaveLength(3);
  });

  it('the end: a group snapshot no content names is leaked, one its Retain group content names is not; a second CreateSnapshots for one group, and a second snapshot of one member, are duplicates; one call of two members is not', async () => {
    const [a, b] = await attachedVolumes(2);
    const kept = await createSnapshots('groupsnapcontent-kept');
    groupContent('groupsnapcontent-kept', 'Retain', { name: 'gone', uid: 'uid-gone' }, [a!, b!], undefined, true);
    oracle.observe(kept);
    const orphan = await createSnapshots('groupsnapcontent-orphan');
    oracle.observe(orphan);
    let verdict = finalVerdict(world, [], oracle, []);
    expect(verdict.findings.filter((f) => f.startsWith('leaked: EBS snapshot'))).toEqual([
      expect.stringContaining(`leaked: EBS snapshot ${byVolume(orphan).get(a!)}`),
      expect.stringContaining(`leaked: EBS snapshot ${byVolume(orphan).get(b!)}`),
    ]);
    expect(verdict.counts.duplicate).toBe(0);

    oracle.observe(await createSnapshots('groupsnapcontent-kept', [b!]));
    verdict = finalVerdict(world, [], oracle, []);
    expect(verdict.findings.filter((f) => f.startsWith('duplicate'))).toEqual([
      expect.stringContaining('2 CreateSnapshots for group content groupsnapcontent-kept'),
      expect.stringContaining(`2 EBS snapshots of member volume ${a} created for group content groupsnapcontent-kept`),
    ]);
    expect(verdict.counts).toMatchObject({ duplicate: 2, wronglyDeleted: 0 });
  });

  it('a group across two nodes snapshotted: a CreateSnapshots for its content is counted, answered or refused; the same for a group on one node, not', async () => {
    await attachedVolumes(2);
    const uid = group('split');
    groupContent('groupsnapcontent-split', 'Delete', { name: 'split', uid }, ['vol-a', 'vol-b']);
    groupContent('groupsnapcontent-whole', 'Delete', { name: 'whole', uid: group('whole') }, ['vol-a', 'vol-b']);
    oracle.splitGroups.add('split');
    oracle.observe(await createSnapshots('groupsnapcontent-whole'));
    expect(oracle.splitSnapshotted).toEqual([]);
    const refused = await createSnapshots('groupsnapcontent-split');
    oracle.observe({ ...refused, response: { ...refused.response, status: 400, code: 'InvalidParameterValue' } });
    expect(oracle.splitSnapshotted).toEqual([expect.stringContaining('for group split (groupsnapcontent-split), whose claims are used on two nodes (EC2 answered InvalidParameterValue)')]);
    expect(finalVerdict(world, [], oracle, []).counts.splitGroupSnapshotted).toBe(1);
  });

  it('not converged: a deleted Delete group whose content and EBS snapshots are still there, a live split group not refused; a ready group on one node and a deleted Retain group with its content kept are fine', async () => {
    const [a, b] = await attachedVolumes(2);
    const make = (name: string, policy: 'Delete' | 'Retain', deleting: boolean) => {
      const uid = group(name);
      if (deleting) world.store.delete('volumegroupsnapshots', name, 'default');
      return uid;
    };
    // Deleted (gone), Delete: its content and snapshots remain.
    const stale = make('stale', 'Delete', true);
    const staleSet = await createSnapshots(`groupsnapcontent-${stale}`);
    groupContent(`groupsnapcontent-${stale}`, 'Delete', { name: 'stale', uid: stale }, [a!, b!], byVolume(staleSet));
    // Deleted (gone), Retain: its content kept — right.
    const kept = make('kept', 'Retain', true);
    groupContent(`groupsnapcontent-${kept}`, 'Retain', { name: 'kept', uid: kept }, [a!, b!], byVolume(await createSnapshots(`groupsnapcontent-${kept}`)));
    // Live, split: its content must carry the refusal.
    const split = make('split', 'Delete', false);
    groupContent(`groupsnapcontent-${split}`, 'Delete', { name: 'split', uid: split }, [a!, b!]);
    // Live, one node, ready.
    const ready = make('ready', 'Delete', false);
    groupContent(`groupsnapcontent-${ready}`, 'Delete', { name: 'ready', uid: ready }, [a!, b!], byVolume(await createSnapshots(`groupsnapcontent-${ready}`)));
    const vgs = world.store.get('volumegroupsnapshots', 'ready', 'default')!;
    world.store.updateStatus('volumegroupsnapshots', { ...vgs, status: { readyToUse: true, boundVolumeGroupSnapshotContentName: `groupsnapcontent-${ready}` } } as never);
    for (const m of [a!, b!]) {
      world.store.create('volumesnapshots', {
        apiVersion: 'snapshot.storage.k8s.io/v1',
        kind: 'VolumeSnapshot',
        metadata: { name: `member-${m}`, namespace: 'default', ownerReferences: [{ apiVersion: 'groupsnapshot.storage.k8s.io/v1', kind: 'VolumeGroupSnapshot', name: 'ready', uid: ready }] },
        spec: { source: { persistentVolumeClaimName: m } },
      } as never);
    }
    const groups: TrackedGroup[] = [
      { name: 'stale', policy: 'Delete', split: false, members: 2, uid: stale, deleted: true },
      { name: 'kept', policy: 'Retain', split: false, members: 2, uid: kept, deleted: true },
      { name: 'split', policy: 'Delete', split: true, members: 2, uid: split, deleted: false },
      { name: 'ready', policy: 'Delete', split: false, members: 2, uid: ready, deleted: false },
    ];
    const problems = groupProblems(snapshot(world), groups, true);
    expect(problems).toEqual([
      expect.stringContaining(`deleted VolumeGroupSnapshot stale (Delete): its content groupsnapcontent-${stale} is still there`),
      expect.stringContaining(`deleted VolumeGroupSnapshot stale (Delete): its EBS snapshot ${byVolume(staleSet).get(a!)}`),
      expect.stringContaining(`deleted VolumeGroupSnapshot stale (Delete): its EBS snapshot ${byVolume(staleSet).get(b!)}`),
      expect.stringContaining('VolumeGroupSnapshot split (Delete, claims on two nodes): its content is not refused for claims on different nodes'),
    ]);
  });
});

describe("crash explorer judges: disks that are not the cluster's adopted ones", () => {
  const FOREIGN = { 'kubernetes.io/cluster/other': 'owned', 'ebs.csi.aws.com/cluster': 'true', 'volhook.io/cluster': 'other' };
  const UNADOPTED = { 'kubernetes.io/cluster/crash': 'owned' };
  const ADOPTED = { 'kubernetes.io/cluster/crash': 'owned', 'ebs.csi.aws.com/cluster': 'true', 'volhook.io/cluster': 'crash' };
  const immediate = CLASSES.find((c) => c.name === 'immediate-retain')!;
  const SESSION_KEY = 'ASIACRASHSESSION';
  let sessionHeld = false;
  beforeEach(() => {
    sessionHeld = false;
  });

  /** A disk put straight into EC2 with exactly these tags, in the first node's zone. */
  function disk(tags: Record<string, string>): string {
    return world.sim.seedVolumes({ zone: world.nodes[0]!.zone, tags })[0]!.id;
  }

  /**
   * A call through the run's transport, so the oracle is told what a run tells it (the volumes
   * the call names, as they were before it); signed in the cluster's session of the EC2 role
   * (`role`), IAM holds it to that role's policy, as in a run.
   */
  async function send(params: Record<string, string>, role = false) {
    const transport = simulatorTransport(world.sim, (c) => oracle.observe(c));
    if (role && !sessionHeld) {
      world.sim.addPrincipal(SESSION_KEY, clusterSession(world.clusterId, world.clusterId));
      sessionHeld = true;
    }
    const authorization = role ? `AWS4-HMAC-SHA256 Credential=${SESSION_KEY}/20260101/us-east-1/ec2/aws4_request` : undefined;
    await transport.handle({ body: new URLSearchParams({ Version: '2016-11-15', ...params }).toString(), headers: { authorization } });
  }

  /** A static PV (Retain) naming the disk, pre-bound to a claim of that name, and the claim; bound by the cluster's controllers. */
  async function staticClaim(name: string, volumeId: string) {
    world.store.create('persistentvolumes', {
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: { name: `static-${name}` },
      spec: {
        capacity: { storage: '4Gi' },
        accessModes: ['ReadWriteOnce'],
        persistentVolumeReclaimPolicy: 'Retain',
        storageClassName: immediate.name,
        claimRef: { namespace: 'default', name },
        csi: { driver: DRIVER, volumeHandle: volumeId, fsType: 'ext4' },
        nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: [world.nodes[0]!.zone] }] }] } },
      },
    });
    claimObject(name, { volumeName: `static-${name}` });
    await world.settle();
  }

  function claimObject(name: string, spec: Record<string, unknown> = {}) {
    return world.store.create('persistentvolumeclaims', {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name, namespace: 'default' },
      spec: { accessModes: ['ReadWriteOnce'], storageClassName: immediate.name, resources: { requests: { storage: '4Gi' } }, ...spec },
    });
  }

  function warning(kind: string, name: string, reason: string, message: string) {
    world.store.create('events', {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: `${name}.${reason.toLowerCase()}`, namespace: 'default' },
      involvedObject: { kind, name, namespace: 'default' },
      type: 'Warning',
      reason,
      message,
    } as never);
  }

  it('the judge\'s own rule: adopted means kubernetes.io/cluster/<id>=owned, ebs.csi.aws.com/cluster=true and volhook.io/cluster=<id>; a disk made before volhook.io/cluster is not adopted; another cluster\'s volhook.io/cluster in any case is foreign', () => {
    const tags = (t: Record<string, string>) => ({ tags: Object.entries(t).map(([key, value]) => ({ key, value })) });
    const { 'volhook.io/cluster': _tag, ...preChange } = ADOPTED;
    expect(notAdopted(tags(ADOPTED), 'crash')).toBeUndefined();
    expect(notAdopted(tags(preChange), 'crash')).toBe('cluster "crash"\'s disk, not adopted (no volhook.io/cluster=crash)');
    expect(notAdopted(tags({ ...ADOPTED, 'Volhook.IO/Cluster': 'other' }), 'crash')).toBe("another cluster's disk (Volhook.IO/Cluster=other)");
    expect(notAdopted(tags(FOREIGN), 'crash')).toBe("another cluster's disk (kubernetes.io/cluster/other=owned)");
  });

  it("copied foreign: a CopyVolumes of another cluster's disk, or of the cluster's not adopted, counted whether EC2 copied it or IAM refused it; of an adopted disk, not", async () => {
    const foreign = disk(FOREIGN);
    const unadopted = disk(UNADOPTED);
    const adopted = disk(ADOPTED);
    const copy = (source: string, role: boolean) =>
      send({ Action: 'CopyVolumes', SourceVolumeId: source, 'TagSpecification.1.ResourceType': 'volume', 'TagSpecification.1.Tag.1.Key': 'CSIVolumeName', 'TagSpecification.1.Tag.1.Value': `pvc-copy-of-${source}` }, role);
    await copy(foreign, false);
    await copy(unadopted, true);
    await copy(adopted, false);
    expect(oracle.copiedForeign).toEqual([
      expect.stringMatching(new RegExp(`^CopyVolumes ${foreign}: another cluster's disk \\(kubernetes.io/cluster/other=owned\\) \\(EC2 answered 200\\)`)),
      expect.stringMatching(new RegExp(`^CopyVolumes ${unadopted}: cluster "crash"'s disk, not adopted .*\\(EC2 answered UnauthorizedOperation\\)`)),
    ]);
    expect(oracle.touchedNotAdopted).toEqual([]);
    // The control went through: the adopted disk was copied.
    expect(oracle.created.get(`pvc-copy-of-${adopted}`)?.size).toBe(1);
    expect(finalVerdict(world, [], oracle, []).counts).toMatchObject({ copiedForeign: 2, touchedNotAdopted: 0 });
  });

  it('touched not adopted: every change of a disk not adopted (attach, detach, modify, tags, snapshot, delete) or of another cluster\'s, answered or refused; the same of an adopted disk, not', async () => {
    const node = world.nodes[0]!;
    const unadopted = disk(UNADOPTED);
    const foreign = disk(FOREIGN);
    const adopted = disk(ADOPTED);
    const changes = (id: string): Record<string, string>[] => [
      { Action: 'AttachVolume', VolumeId: id, InstanceId: node.instanceId, Device: '/dev/xvdbz' },
      { Action: 'DetachVolume', VolumeId: id, InstanceId: node.instanceId },
      { Action: 'ModifyVolume', VolumeId: id, Size: '8' },
      { Action: 'CreateTags', 'ResourceId.1': id, 'Tag.1.Key': 'team', 'Tag.1.Value': 'crash' },
      { Action: 'DeleteTags', 'ResourceId.1': id, 'Tag.1.Key': 'team' },
      { Action: 'CreateSnapshot', VolumeId: id },
      { Action: 'DeleteVolume', VolumeId: id },
    ];
    for (const params of changes(adopted)) {
      await send(params);
      world.clock.advance(15_000);
    }
    expect(oracle.touchedNotAdopted).toEqual([]);
    for (const params of changes(unadopted)) {
      await send(params, true);
      world.clock.advance(15_000);
    }
    await send({ Action: 'AttachVolume', VolumeId: foreign, InstanceId: node.instanceId, Device: '/dev/xvdby' }, true);
    expect(oracle.touchedNotAdopted.map((line) => line.split(':')[0])).toEqual([
      ...changes(unadopted).map((p) => `${p.Action} ${unadopted}`),
      `AttachVolume ${foreign}`,
    ]);
    // IAM refuses both, in the cluster's session (the volhook.io/cluster fence): the attempt is
    // counted all the same, whatever EC2 answered.
    expect(oracle.touchedNotAdopted[0]).toContain('(EC2 answered UnauthorizedOperation)');
    expect(oracle.touchedNotAdopted.at(-1)).toContain('(EC2 answered UnauthorizedOperation)');
    expect(finalVerdict(world, [], oracle, []).counts).toMatchObject({ touchedNotAdopted: 8, copiedForeign: 0 });
  });

  it('made from unprotected source: a CopyVolumes for a live claim while the source claim lacks cloning-protection is counted; with it (the control), or for a claim being deleted, not', async () => {
    const source = disk(ADOPTED);
    await staticClaim('src', source);
    const copyFor = async (claim: string) => {
      const uid = claimObject(claim, { dataSource: { kind: 'PersistentVolumeClaim', name: 'src' } }).metadata.uid;
      await send({ Action: 'CopyVolumes', SourceVolumeId: source, 'TagSpecification.1.ResourceType': 'volume', 'TagSpecification.1.Tag.1.Key': 'CSIVolumeName', 'TagSpecification.1.Tag.1.Value': `pvc-${uid}` });
    };
    await copyFor('early');
    expect(oracle.unprotectedSource).toEqual([expect.stringMatching(/^CopyVolumes .*: source claim src lacks provisioner\.storage\.kubernetes\.io\/cloning-protection$/)]);
    const src = world.store.get('persistentvolumeclaims', 'src', 'default')!;
    world.store.update('persistentvolumeclaims', { ...src, metadata: { ...src.metadata, finalizers: [...(src.metadata.finalizers ?? []), CLONE_SOURCE_PROTECTION] } });
    await copyFor('protected');
    expect(oracle.unprotectedSource).toHaveLength(1);
    expect(finalVerdict(world, [], oracle, []).counts).toMatchObject({ unprotectedSource: 1 });
  });

  it('a source protection nothing needs: a claim keeping cloning-protection (or a VolumeSnapshot its own) with no Pending claim made from it is a problem; with one Pending (the control), not', async () => {
    const source = disk(ADOPTED);
    await staticClaim('src', source);
    const src = world.store.get('persistentvolumeclaims', 'src', 'default')!;
    world.store.update('persistentvolumeclaims', { ...src, metadata: { ...src.metadata, finalizers: [...(src.metadata.finalizers ?? []), CLONE_SOURCE_PROTECTION] } });
    world.store.create('volumesnapshots', {
      apiVersion: 'snapshot.storage.k8s.io/v1',
      kind: 'VolumeSnapshot',
      metadata: { name: 'nightly', namespace: 'default', finalizers: [SNAPSHOT_SOURCE_PROTECTION] },
      spec: { source: { persistentVolumeClaimName: 'src' } },
    } as never);
    expect(sourceProtectionProblems(snapshot(world))).toEqual([
      `VolumeSnapshot nightly keeps ${SNAPSHOT_SOURCE_PROTECTION}, though no claim is being restored from it`,
      `claim src keeps ${CLONE_SOURCE_PROTECTION}, though no claim is being cloned from it`,
    ]);
    claimObject('copy', { dataSource: { kind: 'PersistentVolumeClaim', name: 'src' } });
    claimObject('restore', { dataSource: { apiGroup: 'snapshot.storage.k8s.io', kind: 'VolumeSnapshot', name: 'nightly' } });
    expect(sourceProtectionProblems(snapshot(world))).toEqual([]);
  });

  it("touched not adopted: another cluster's disk the run put into EC2 must be as it was at the end; a change to it is counted, whoever made it", async () => {
    const foreign = disk(FOREIGN);
    oracle.foreign.set(foreign, world.sim.volume(foreign)!);
    world.clock.advance(60_000);
    expect(finalVerdict(world, [], oracle, []).counts.touchedNotAdopted).toBe(0);
    await world.sim.call({ Action: 'CreateTags', 'ResourceId.1': foreign, 'Tag.1.Key': 'Name', 'Tag.1.Value': 'mine now' });
    const verdict = finalVerdict(world, [], oracle, []);
    expect(verdict.counts.touchedNotAdopted).toBe(1);
    expect(verdict.findings).toEqual([expect.stringMatching(new RegExp(`another cluster's disk ${foreign} is not as it was put into EC2: tags .*Name=mine now`))]);
  });

  it("not converged, narrowed: a clone of a claim on another cluster's disk must stay Pending with a Warning ProvisioningFailed naming the disk; a clone of an adopted disk's claim Pending is not converged", async () => {
    const foreign = disk(FOREIGN);
    await staticClaim('f0', foreign);
    expect(world.store.get('persistentvolumeclaims', 'f0', 'default')?.status).toMatchObject({ phase: 'Bound' });
    claimObject('kf0', { dataSource: { kind: 'PersistentVolumeClaim', name: 'f0' } });
    await world.settle();
    const tracked: TrackedClaim[] = [{ name: 'kf0', class: immediate, deleted: false }];
    expect(unsettled(world, tracked, false)).toEqual([`claim kf0 (immediate-retain) is Pending with no Warning ProvisioningFailed naming its source's disk ${foreign} (another cluster's disk (kubernetes.io/cluster/other=owned))`]);
    warning('PersistentVolumeClaim', 'kf0', 'ProvisioningFailed', `volume ${foreign} of the source claim PersistentVolumeClaim "f0" is not owned by cluster "crash"`);
    expect(unsettled(world, tracked, false)).toEqual([]);

    // The control: the same clone of an adopted disk's claim must be provisioned.
    await staticClaim('a0', disk(ADOPTED));
    claimObject('ka0', { dataSource: { kind: 'PersistentVolumeClaim', name: 'a0' } });
    await world.settle();
    warning('PersistentVolumeClaim', 'ka0', 'ProvisioningFailed', 'anything');
    expect(unsettled(world, [{ name: 'ka0', class: immediate, deleted: false }], false)).toEqual(['claim ka0 (immediate-retain) is Pending, not Bound']);
  });

  it('not converged, narrowed: a pod on a disk of the cluster not adopted waits, its VolumeAttachment unattached with an attachError and a Warning on the PV naming `npm run cluster -- adopt`; once adopted, it must attach', async () => {
    const volumeId = disk(UNADOPTED);
    await staticClaim('u0', volumeId);
    world.store.create('pods', {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'u0-pod0', namespace: 'default' },
      spec: { containers: [{ name: 'app', image: 'busybox:1.36' }], volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'u0' } }] },
    });
    await world.settle();
    const [va] = world.store.list('volumeattachments').items;
    expect(va?.spec).toMatchObject({ nodeName: world.nodes[0]!.name, source: { persistentVolumeName: 'static-u0' } });
    const tracked: TrackedClaim[] = [{ name: 'u0', class: immediate, deleted: false }];
    const who = `VolumeAttachment of u0 on ${world.nodes[0]!.name}`;
    const why = `its disk ${volumeId} is cluster "crash"'s disk, not adopted (no ebs.csi.aws.com/cluster=true)`;
    expect(unsettled(world, tracked, false)).toEqual([`${who}: ${why}, and its attachError does not name \`npm run cluster -- adopt\` (none)`]);
    const fix = `volume ${volumeId} is cluster "crash"'s but not adopted; adopt it with \`npm run cluster -- adopt crash --apply\``;
    world.store.updateStatus('volumeattachments', { ...va!, status: { attached: false, attachError: { message: fix } } });
    expect(unsettled(world, tracked, false)).toEqual([`${who}: ${why}, and no Warning FailedAttachVolume on PV static-u0 names \`npm run cluster -- adopt\``]);
    warning('PersistentVolume', 'static-u0', 'FailedAttachVolume', fix);
    expect(unsettled(world, tracked, false)).toEqual([]);

    // The control: adopted, the same VolumeAttachment unattached and its pod waiting are not converged.
    await world.sim.call({ Action: 'CreateTags', 'ResourceId.1': volumeId, 'Tag.1.Key': 'ebs.csi.aws.com/cluster', 'Tag.1.Value': 'true', 'Tag.2.Key': 'volhook.io/cluster', 'Tag.2.Value': 'crash' });
    expect(unsettled(world, tracked, false)).toEqual([
      `pod u0-pod0 on ${world.nodes[0]!.name} is Pending, not Running`,
      `${who} is not attached`,
      `${who}: its disk ${volumeId} is not attached there in EC2 (no attachment)`,
    ]);
  });
});

function tagsOf(name: string): Record<string, string> {
  return { 'TagSpecification.1.Tag.1.Key': 'CSIVolumeName', 'TagSpecification.1.Tag.1.Value': name };
}
