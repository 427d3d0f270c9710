import { describe, expect, it } from 'vitest';
import type { Result, Write } from '../../lib/contract/index.js';
import { Ec2Error, type CreateSnapshotRequest, type Snapshot } from '../../lib/ec2/types.js';
import { decideCreate } from '../../lib/reconcile/snapshot-content.js';
import { FakeGateway, throttled } from './fake-gateway.js';
import { CLUSTER, NOW, reconcileOne, setup } from './fixtures.js';
import { BEING_CREATED, BEING_DELETED, BOUND_FINALIZER, CONTENT_NAME, SOURCE_VOLUME, content, contentItem, snapshotClass } from './snapshot-fixtures.js';

const ops = (result: Result) => result.writes.map((w) => w.op);
const statusOf = (result: Result) => result.writes.find((w): w is Extract<Write, { op: 'updateVolumeSnapshotContentStatus' }> => w.op === 'updateVolumeSnapshotContentStatus')?.status;
const events = (result: Result) => result.writes.flatMap((w) => (w.op === 'createEvent' ? [`${w.type} ${w.reason}: ${w.message}`] : []));

function withSourceVolume(ec2: FakeGateway, tags?: Record<string, string>) {
  return ec2.addVolume({ volumeId: SOURCE_VOLUME, sizeGiB: 10, ...(tags && { tags }) });
}

/** A gateway whose CreateSnapshot acts in EC2 and then loses its answer, once. */
class LostCreate extends FakeGateway {
  lost = 1;
  override async createSnapshot(request: CreateSnapshotRequest): Promise<Snapshot> {
    const made = await super.createSnapshot(request);
    if (this.lost-- > 0) throw new Ec2Error('transient', 'ECONNRESET', 'EC2 CreateSnapshot: ECONNRESET: socket hang up', 'CreateSnapshot');
    return made;
  }
}

describe('snapshot content: dynamic', () => {
  it('a new content without the being-created mark -> the mark is written first, requeue at once, zero EC2 calls', async () => {
    const { ec2, ctx } = setup();
    const result = await reconcileOne(ctx, contentItem({ content: { metadata: { annotations: undefined } } }));
    expect(result).toMatchObject({ outcome: 'requeue', requeueAfterSeconds: 0 });
    expect(result.writes).toEqual([{ op: 'setAnnotation', target: { kind: 'VolumeSnapshotContent', name: CONTENT_NAME, uid: 'content-uid-1' }, key: BEING_CREATED, value: 'yes' }]);
    expect(ec2.calls).toEqual([]);
  });

  it('marked content -> CreateSnapshot once, tagged for the cluster, the class and the registration; status as the sidecar writes it; mark removed', async () => {
    const { ec2, ctx } = setup({ extraTags: { costcenter: '42', 'kubernetes.io/cluster/other': 'owned' } });
    withSourceVolume(ec2);
    const item = contentItem({ snapshotClass: snapshotClass({ parameters: { tagSpecification_1: 'origin={{ .VolumeSnapshotNamespace }}/{{ .VolumeSnapshotName }}' } }) });
    const result = await reconcileOne(ctx, item);
    expect(ec2.callsOf('createSnapshot')).toHaveLength(1);
    const [snapshot] = [...ec2.snapshots.values()];
    expect(snapshot!.tags).toEqual({
      CSIVolumeSnapshotName: CONTENT_NAME,
      'ebs.csi.aws.com/cluster': 'true',
      [`kubernetes.io/cluster/${CLUSTER}`]: 'owned',
      'volhook.io/cluster': CLUSTER,
      'ebs.csi.aws.com/cluster-name': CLUSTER,
      origin: 'shop/nightly',
      costcenter: '42',
    });
    expect(statusOf(result)).toEqual({
      snapshotHandle: snapshot!.snapshotId,
      creationTime: Math.floor(Date.parse(snapshot!.startTime) / 1000) * 1e9,
      restoreSize: 10 * 2 ** 30,
      readyToUse: false,
    });
    expect(ops(result)).toEqual(['updateVolumeSnapshotContentStatus', 'removeAnnotation']);
    expect(result).toMatchObject({ outcome: 'requeue' });
  });

  it('pending snapshot, then completed -> readyToUse true, done; a ready content is not looked at again', async () => {
    const { ec2, ctx } = setup();
    withSourceVolume(ec2);
    const first = await reconcileOne(ctx, contentItem());
    const pending = statusOf(first)!;
    ec2.settle();
    const second = await reconcileOne(ctx, contentItem({ content: { status: pending } }));
    expect(statusOf(second)).toMatchObject({ snapshotHandle: pending.snapshotHandle, readyToUse: true });
    expect(second).toMatchObject({ outcome: 'done' });
    ec2.calls.length = 0;
    const third = await reconcileOne(ctx, contentItem({ content: { metadata: { annotations: { [BEING_CREATED]: undefined } }, status: { ...pending, readyToUse: true } } }));
    expect(third).toMatchObject({ outcome: 'done', writes: [] });
    expect(ec2.calls).toEqual([]);
    expect(ec2.callsOf('createSnapshot')).toHaveLength(0);
    expect(ec2.snapshots.size).toBe(1);
  });

  it('lost answer after CreateSnapshot -> the replay finds it by its name tag: exactly one snapshot', async () => {
    const { ctx } = setup();
    const ec2 = new LostCreate(CLUSTER);
    withSourceVolume(ec2);
    const lost = await reconcileOne({ ...ctx, ec2 }, contentItem());
    expect(lost).toMatchObject({ outcome: 'requeue', writes: [] });
    expect(ec2.snapshots.size).toBe(1);
    const replay = await reconcileOne({ ...ctx, ec2 }, contentItem());
    expect(ec2.snapshots.size).toBe(1);
    expect(statusOf(replay)?.snapshotHandle).toBe([...ec2.snapshots.keys()][0]);
  });

  it('the same content twice at once in one process -> one CreateSnapshot; the other answered "in progress"', async () => {
    class Held extends FakeGateway {
      release!: () => void;
      readonly held = new Promise<void>((resolve) => (this.release = resolve));
      override async findSnapshotsByName(name: string): Promise<Snapshot[]> {
        const found = await super.findSnapshotsByName(name);
        await this.held;
        return found;
      }
    }
    const { ctx } = setup();
    const ec2 = new Held(CLUSTER);
    withSourceVolume(ec2);
    const both = Promise.all([reconcileOne({ ...ctx, ec2 }, contentItem()), reconcileOne({ ...ctx, ec2 }, contentItem())]);
    await new Promise((resolve) => setTimeout(resolve, 10));
    ec2.release();
    const results = await both;
    expect(ec2.callsOf('createSnapshot')).toHaveLength(1);
    expect(ec2.snapshots.size).toBe(1);
    expect(results.map((r) => r.message)).toContainEqual(expect.stringContaining('already in progress'));
  });

  it('throttled CreateSnapshot -> requeue, no status, the mark stays (a snapshot may yet land)', async () => {
    const { ec2, ctx } = setup();
    withSourceVolume(ec2);
    ec2.fail('createSnapshot', throttled());
    const result = await reconcileOne(ctx, contentItem());
    expect(result).toMatchObject({ outcome: 'requeue', writes: [] });
  });

  it('two requests created at once (both looked before either created) -> the one that made the younger deletes it; the oldest is recorded', () => {
    const older: Snapshot = { snapshotId: 'snap-00000000000000001', volumeId: SOURCE_VOLUME, sizeGiB: 10, state: 'pending', startTime: '2026-01-01T00:00:01.000Z', encrypted: false,
      // As the look-up by name finds them: tagged for the cluster.
      tags: { CSIVolumeSnapshotName: CONTENT_NAME, 'ebs.csi.aws.com/cluster': 'true', [`kubernetes.io/cluster/${CLUSTER}`]: 'owned', 'volhook.io/cluster': CLUSTER } };
    const younger: Snapshot = { ...older, snapshotId: 'snap-00000000000000002', startTime: '2026-01-01T00:00:02.000Z' };
    const request = { name: CONTENT_NAME, volumeId: SOURCE_VOLUME, tags: {} };
    const spec = { tags: {}, fastSnapshotRestoreZones: [] };
    const names = { clusterId: CLUSTER, now: NOW };
    const c = content();
    expect(decideCreate(c as never, spec, request, { snapshots: [older, younger], volume: undefined, created: younger.snapshotId }, names)).toMatchObject({
      action: { verb: 'deleteSnapshot', snapshotId: younger.snapshotId },
    });
    const kept = decideCreate(c as never, spec, request, { snapshots: [older, younger], volume: undefined, created: older.snapshotId }, names);
    expect(kept).toMatchObject({ verdict: { outcome: 'requeue' } });
    expect(kept.writes[0]).toMatchObject({ op: 'updateVolumeSnapshotContentStatus', status: { snapshotHandle: older.snapshotId } });
  });

  it('fastSnapshotRestoreAvailabilityZones -> EnableFastSnapshotRestores in those zones once the snapshot exists', async () => {
    const { ec2, ctx } = setup();
    withSourceVolume(ec2);
    const result = await reconcileOne(ctx, contentItem({ snapshotClass: snapshotClass({ parameters: { fastSnapshotRestoreAvailabilityZones: 'us-east-1a, us-east-1b' } }) }));
    const [id] = [...ec2.snapshots.keys()];
    expect(ec2.callsOf('enableFastSnapshotRestores')).toEqual([{ verb: 'enableFastSnapshotRestores', args: [id, ['us-east-1a', 'us-east-1b']] }]);
    expect(statusOf(result)?.snapshotHandle).toBe(id);
  });

  it.each([
    ['a zone the Region does not have for fast snapshot restore', { fastSnapshotRestoreAvailabilityZones: 'us-east-1z' }, 'Availability zone us-east-1z is not supported for fast snapshot restore'],
    ['outpostArn', { outpostArn: 'arn:aws:outposts:us-east-1:123456789012:outpost/op-0123' }, 'outpostArn: snapshots on AWS Outposts are not supported'],
    ['a lock parameter', { lockMode: 'governance' }, 'lockMode: snapshot locks are not supported'],
    ['the other spelling of a lock parameter', { snapshotLockDuration: '7' }, 'snapshotLockDuration: snapshot locks are not supported'],
    ['an unknown key', { colour: 'blue' }, 'colour: is not a VolumeSnapshotClass parameter'],
    ['a reserved tag key', { tagSpecification_1: 'CSIVolumeSnapshotName=forged' }, 'tagSpecification_1: tag key "CSIVolumeSnapshotName" is reserved'],
  ])('class with %s -> refused naming it: status error, Warning SnapshotCreationFailed, no CreateSnapshot', async (_name, parameters, named) => {
    const { ec2, ctx } = setup();
    withSourceVolume(ec2);
    const result = await reconcileOne(ctx, contentItem({ snapshotClass: snapshotClass({ parameters }) }));
    expect(result).toMatchObject({ outcome: 'failed' });
    expect(statusOf(result)).toMatchObject({ readyToUse: false, error: { time: '2025-03-01T12:00:00Z', message: expect.stringContaining(named) } });
    expect(events(result)).toEqual([expect.stringContaining(`Warning SnapshotCreationFailed: `)]);
    expect(ec2.mutations).toEqual([]);
    expect(ops(result)).toContain('removeAnnotation');
  });

  it("a content naming another cluster's volume -> refused, no CreateSnapshot", async () => {
    const { ec2, ctx } = setup();
    withSourceVolume(ec2, { 'kubernetes.io/cluster/other': 'owned', 'ebs.csi.aws.com/cluster': 'true' });
    const result = await reconcileOne(ctx, contentItem());
    expect(result).toMatchObject({ outcome: 'failed', reason: 'NotOwned' });
    expect(ec2.mutations).toEqual([]);
  });

  it('a recorded error with the being-created mark left (its removal lost) -> the mark goes, still no EC2 call', async () => {
    const { ec2, ctx } = setup();
    const result = await reconcileOne(ctx, contentItem({ content: { status: { error: { message: 'boom', time: '2025-03-01T12:00:00Z' }, readyToUse: false } } }));
    expect(result).toMatchObject({ outcome: 'failed' });
    expect(ops(result)).toEqual(['removeAnnotation']);
    expect(ec2.calls).toEqual([]);
  });

  it('a recorded error -> not tried again (as the sidecar), zero EC2 calls', async () => {
    const { ec2, ctx } = setup();
    const result = await reconcileOne(ctx, contentItem({ content: { metadata: { annotations: { [BEING_CREATED]: undefined } }, status: { error: { message: 'boom', time: '2025-03-01T12:00:00Z' }, readyToUse: false } } }));
    expect(result).toMatchObject({ outcome: 'failed' });
    expect(ec2.calls).toEqual([]);
  });

  it('the class is not known yet -> requeue, zero EC2 calls; a content of another driver -> done, zero calls', async () => {
    const { ec2, ctx } = setup();
    expect(await reconcileOne(ctx, contentItem({ snapshotClass: null }))).toMatchObject({ outcome: 'requeue' });
    expect(await reconcileOne(ctx, contentItem({ content: { spec: { driver: 'other.csi.example.com' } } }))).toMatchObject({ outcome: 'done', writes: [] });
    expect(ec2.calls).toEqual([]);
  });
});

describe('snapshot content: pre-provisioned', () => {
  const preProvisioned = (snapshotId: string) => contentItem({ content: { metadata: { annotations: { [BEING_CREATED]: undefined } }, spec: { source: { volumeHandle: undefined, snapshotHandle: snapshotId }, volumeSnapshotClassName: undefined } }, snapshotClass: null });

  it("a snapshot of this cluster's -> status filled from EC2, no mutation", async () => {
    const { ec2, ctx } = setup();
    ec2.addSnapshot({ snapshotId: 'snap-0aaaaaaaaaaaaaaa1', sizeGiB: 30 });
    const result = await reconcileOne(ctx, preProvisioned('snap-0aaaaaaaaaaaaaaa1'));
    expect(result).toMatchObject({ outcome: 'done' });
    expect(statusOf(result)).toMatchObject({ snapshotHandle: 'snap-0aaaaaaaaaaaaaaa1', readyToUse: true, restoreSize: 30 * 2 ** 30 });
    expect(ec2.mutations).toEqual([]);
  });

  it.each([
    ["another cluster's snapshot", { 'kubernetes.io/cluster/other': 'owned' }, 'is not owned by cluster "alpha"'],
    ['an untagged snapshot', {}, 'is not owned by cluster "alpha"'],
  ])('%s -> refused with the reason, no snapshot handle recorded', async (_name, tags, named) => {
    const { ec2, ctx } = setup();
    ec2.addSnapshot({ snapshotId: 'snap-0bbbbbbbbbbbbbbb1', tags });
    const result = await reconcileOne(ctx, preProvisioned('snap-0bbbbbbbbbbbbbbb1'));
    expect(result).toMatchObject({ outcome: 'failed', reason: 'NotOwned', message: expect.stringContaining(named) });
    expect(statusOf(result)?.snapshotHandle).toBeUndefined();
    expect(events(result)).toEqual([expect.stringContaining('Warning SnapshotContentCheckandUpdateFailed')]);
  });

  it("the cluster's snapshot without ebs.csi.aws.com/cluster=true (made elsewhere; IAM would refuse restoring from it) -> refused NotAdopted naming the tag to add; with it (the control) -> ready", async () => {
    const { ec2, ctx } = setup();
    ec2.addSnapshot({ snapshotId: 'snap-0bbbbbbbbbbbbbbb2', tags: { [`kubernetes.io/cluster/${CLUSTER}`]: 'owned' } });
    const result = await reconcileOne(ctx, preProvisioned('snap-0bbbbbbbbbbbbbbb2'));
    expect(result).toMatchObject({ outcome: 'failed', reason: 'NotAdopted', message: expect.stringContaining('--tags Key=ebs.csi.aws.com/cluster,Value=true') });
    expect(statusOf(result)?.snapshotHandle).toBeUndefined();
    ec2.snapshots.get('snap-0bbbbbbbbbbbbbbb2')!.tags['ebs.csi.aws.com/cluster'] = 'true';
    ec2.snapshots.get('snap-0bbbbbbbbbbbbbbb2')!.tags['volhook.io/cluster'] = CLUSTER;
    expect(await reconcileOne(ctx, preProvisioned('snap-0bbbbbbbbbbbbbbb2'))).toMatchObject({ outcome: 'done' });
    expect(ec2.mutations).toEqual([]);
  });

  it('a snapshot EC2 does not have -> refused naming it', async () => {
    const { ctx } = setup();
    const result = await reconcileOne(ctx, preProvisioned('snap-0ccccccccccccccc1'));
    expect(result).toMatchObject({ outcome: 'failed', reason: 'SnapshotNotFound', message: 'snapshot snap-0ccccccccccccccc1 does not exist' });
  });
});

describe('snapshot content: deletion', () => {
  const deleting = (override: object = {}) =>
    contentItem({ content: { metadata: { deletionTimestamp: '2025-03-01T11:59:00Z', annotations: { [BEING_CREATED]: undefined, [BEING_DELETED]: 'yes' } }, ...override } });

  it('Delete policy -> DeleteSnapshot once, then the status cleared and the bound finalizer removed, in that order', async () => {
    const { ec2, ctx } = setup();
    ec2.addSnapshot({ snapshotId: 'snap-0ddddddddddddddd1', tags: { CSIVolumeSnapshotName: CONTENT_NAME, [`kubernetes.io/cluster/${CLUSTER}`]: 'owned', 'ebs.csi.aws.com/cluster': 'true', 'volhook.io/cluster': CLUSTER } });
    const result = await reconcileOne(ctx, deleting({ status: { snapshotHandle: 'snap-0ddddddddddddddd1', readyToUse: true } }));
    expect(ec2.callsOf('deleteSnapshot')).toEqual([{ verb: 'deleteSnapshot', args: ['snap-0ddddddddddddddd1'] }]);
    expect(ec2.snapshots.size).toBe(0);
    expect(ops(result)).toEqual(['updateVolumeSnapshotContentStatus', 'removeFinalizer']);
    expect(statusOf(result)).toEqual({ snapshotHandle: null, readyToUse: null, creationTime: null, restoreSize: null });
    expect(result.writes[1]).toMatchObject({ finalizer: BOUND_FINALIZER });
  });

  it("Delete policy, the cluster's snapshot without ebs.csi.aws.com/cluster=true -> refused NotAdopted, Warning, no DeleteSnapshot (IAM would refuse it); tagged -> deleted", async () => {
    const { ec2, ctx } = setup();
    ec2.addSnapshot({ snapshotId: 'snap-0ddddddddddddddd2', tags: { [`kubernetes.io/cluster/${CLUSTER}`]: 'owned' } });
    const item = deleting({ status: { snapshotHandle: 'snap-0ddddddddddddddd2', readyToUse: true } });
    const refused = await reconcileOne(ctx, item);
    expect(refused).toMatchObject({ outcome: 'failed', reason: 'NotAdopted' });
    expect(ops(refused)).toEqual(['createEvent']);
    expect(ec2.callsOf('deleteSnapshot')).toEqual([]);
    ec2.snapshots.get('snap-0ddddddddddddddd2')!.tags['ebs.csi.aws.com/cluster'] = 'true';
    ec2.snapshots.get('snap-0ddddddddddddddd2')!.tags['volhook.io/cluster'] = CLUSTER;
    await reconcileOne(ctx, item);
    expect(ec2.callsOf('deleteSnapshot')).toEqual([{ verb: 'deleteSnapshot', args: ['snap-0ddddddddddddddd2'] }]);
  });

  it('Delete policy, the snapshot never recorded (lost answer) -> found by its name tag and deleted: nothing leaks', async () => {
    const { ec2, ctx } = setup();
    ec2.addSnapshot({ snapshotId: 'snap-0eeeeeeeeeeeeeee1', tags: { CSIVolumeSnapshotName: CONTENT_NAME, [`kubernetes.io/cluster/${CLUSTER}`]: 'owned', 'ebs.csi.aws.com/cluster': 'true', 'volhook.io/cluster': CLUSTER } });
    await reconcileOne(ctx, deleting());
    expect(ec2.snapshots.size).toBe(0);
  });

  it('Retain -> the finalizer goes, EC2 untouched', async () => {
    const { ec2, ctx } = setup();
    ec2.addSnapshot({ snapshotId: 'snap-0fffffffffffffff1' });
    const result = await reconcileOne(ctx, deleting({ spec: { deletionPolicy: 'Retain' }, status: { snapshotHandle: 'snap-0fffffffffffffff1' } }));
    expect(result.writes).toEqual([{ op: 'removeFinalizer', target: { kind: 'VolumeSnapshotContent', name: CONTENT_NAME, uid: 'content-uid-1' }, finalizer: BOUND_FINALIZER }]);
    expect(ec2.calls).toEqual([]);
    expect(ec2.snapshots.size).toBe(1);
  });

  it("a content naming another cluster's snapshot -> refused, Warning, no DeleteSnapshot; the finalizer stays", async () => {
    const { ec2, ctx } = setup();
    ec2.addSnapshot({ snapshotId: 'snap-0123456789abcdef1', tags: { 'kubernetes.io/cluster/other': 'owned', 'ebs.csi.aws.com/cluster': 'true' } });
    const result = await reconcileOne(ctx, deleting({ status: { snapshotHandle: 'snap-0123456789abcdef1', readyToUse: true } }));
    expect(result).toMatchObject({ outcome: 'failed', reason: 'NotOwned' });
    expect(ec2.callsOf('deleteSnapshot')).toEqual([]);
    expect(ec2.snapshots.size).toBe(1);
    expect(ops(result)).toEqual(['createEvent']);
  });

  it('being deleted while a CreateSnapshot may still land -> not deleted: the snapshot is found and recorded first', async () => {
    const { ec2, ctx } = setup();
    withSourceVolume(ec2);
    ec2.addSnapshot({ snapshotId: 'snap-0aaaaaaaaaaaaaa22', volumeId: SOURCE_VOLUME, tags: { CSIVolumeSnapshotName: CONTENT_NAME, [`kubernetes.io/cluster/${CLUSTER}`]: 'owned', 'ebs.csi.aws.com/cluster': 'true', 'volhook.io/cluster': CLUSTER } });
    const result = await reconcileOne(ctx, contentItem({ content: { metadata: { deletionTimestamp: '2025-03-01T11:59:00Z', annotations: { [BEING_CREATED]: 'yes', [BEING_DELETED]: 'yes' } } } }));
    expect(ec2.callsOf('deleteSnapshot')).toEqual([]);
    expect(statusOf(result)?.snapshotHandle).toBe('snap-0aaaaaaaaaaaaaa22');
    expect(ops(result)).toContain('removeAnnotation');
  });

  it('deleted without the common controller mark -> nothing (the common controller decides), zero calls', async () => {
    const { ec2, ctx } = setup();
    const result = await reconcileOne(ctx, contentItem({ content: { metadata: { deletionTimestamp: '2025-03-01T11:59:00Z', annotations: { [BEING_CREATED]: undefined } } } }));
    expect(result).toMatchObject({ outcome: 'done', writes: [] });
    expect(ec2.calls).toEqual([]);
  });
});

describe('snapshot content: member of a group snapshot', () => {
  const GROUP_HANDLE = 'groupsnapshot.storage.k8s.io/volumeGroupSnapshotHandle';
  const GROUP = 'groupsnapcontent-1';
  const members = ['vol-0aaaaaaaaaaaaaaa1', 'vol-0aaaaaaaaaaaaaaa2', 'vol-0aaaaaaaaaaaaaaa3'];

  /** Three volumes on node i-1 and the group's snapshots, as one CreateSnapshots made them. */
  async function group(ec2: FakeGateway): Promise<Snapshot[]> {
    ec2.snapshotState = 'completed';
    ec2.addInstance({ instanceId: 'i-1' });
    for (const volumeId of members) ec2.addVolume({ volumeId, state: 'in-use', attachments: [{ instanceId: 'i-1', device: '/dev/xvdba', state: 'attached' }] });
    return ec2.createSnapshots({ name: GROUP, instanceId: 'i-1', excludeDataVolumeIds: [], tags: {} });
  }
  /** A member content as the common controller makes it: the volume as its source, no class, the group's handle. */
  const member = (volumeId: string, status?: object, override: object = {}) =>
    contentItem({
      content: {
        metadata: { name: `snapcontent-${volumeId}`, annotations: { [BEING_CREATED]: undefined, [GROUP_HANDLE]: GROUP } },
        spec: { source: { volumeHandle: volumeId }, volumeSnapshotClassName: undefined },
        ...(status && { status }),
        ...override,
      },
      snapshotClass: null,
    });

  it('each of three members with its handle recorded -> checked and ready, no CreateSnapshot; without the group annotation the same content is refused for its missing class (the control)', async () => {
    const { ec2, ctx } = setup();
    const snapshots = await group(ec2);
    expect(ec2.callsOf('createSnapshots')).toHaveLength(1);
    for (const s of snapshots) {
      const result = await reconcileOne(ctx, member(s.volumeId, { snapshotHandle: s.snapshotId, readyToUse: false }));
      expect(result).toMatchObject({ outcome: 'done' });
      expect(statusOf(result)).toMatchObject({ snapshotHandle: s.snapshotId, readyToUse: true, restoreSize: 10 * 2 ** 30 });
    }
    expect(ec2.callsOf('createSnapshot')).toEqual([]);
    expect(ec2.mutations.map((c) => c.verb)).toEqual(['createSnapshots']);
    const plain = contentItem({ content: { metadata: { annotations: { [BEING_CREATED]: undefined } }, spec: { source: { volumeHandle: members[0] }, volumeSnapshotClassName: undefined } }, snapshotClass: null });
    expect(await reconcileOne(ctx, plain)).toMatchObject({ outcome: 'failed', reason: 'NoSnapshotClass' });
  });

  it('a member whose handle the controller has not recorded yet -> requeue, no write, zero EC2 calls', async () => {
    const { ec2, ctx } = setup();
    const result = await reconcileOne(ctx, member(members[0]!));
    expect(result).toMatchObject({ outcome: 'requeue', message: expect.stringContaining(`member of group snapshot ${GROUP}`) });
    expect(result.writes).toEqual([]);
    expect(ec2.calls).toEqual([]);
  });

  it("a member whose recorded snapshot is of another volume -> refused SnapshotMismatch, never ready", async () => {
    const { ec2, ctx } = setup();
    const [first] = await group(ec2);
    const result = await reconcileOne(ctx, member(members[1]!, { snapshotHandle: first!.snapshotId }));
    expect(first!.volumeId).toBe(members[0]);
    expect(result).toMatchObject({ outcome: 'failed', reason: 'SnapshotMismatch' });
    expect(statusOf(result)?.readyToUse).toBe(false);
  });

  it("a member deleted with the Delete policy -> DeleteSnapshot of its own snapshot only, the group's others kept", async () => {
    const { ec2, ctx } = setup();
    const snapshots = await group(ec2);
    const deleting = member(snapshots[0]!.volumeId, { snapshotHandle: snapshots[0]!.snapshotId, readyToUse: true }, {});
    deleting.content.metadata.deletionTimestamp = '2025-03-01T11:59:00Z';
    deleting.content.metadata.annotations = { ...deleting.content.metadata.annotations, [BEING_DELETED]: 'yes' };
    await reconcileOne(ctx, deleting);
    expect(ec2.callsOf('deleteSnapshot')).toEqual([{ verb: 'deleteSnapshot', args: [snapshots[0]!.snapshotId] }]);
    expect([...ec2.snapshots.keys()].sort()).toEqual(snapshots.slice(1).map((s) => s.snapshotId).sort());
  });
});
