/**
 * The explorer is only as good as its judges: each is shown the situation it must catch, and
 * the nearest one it must let pass, on a world built as a run builds it.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { finalVerdict, unsettled, type TrackedClaim } from './checks.js';
import { CrashController } from './crashes.js';
import type { Ec2Call } from './ec2-transport.js';
import { Oracle } from './oracle.js';
import { CLASSES, createWorld, type World } from './world.js';

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
});

function tagsOf(name: string): Record<string, string> {
  return { 'TagSpecification.1.Tag.1.Key': 'CSIVolumeName', 'TagSpecification.1.Tag.1.Value': name };
}
