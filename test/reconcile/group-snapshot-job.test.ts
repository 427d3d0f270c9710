/**
 * A VolumeGroupSnapshotContent item reconciled end to end against the fake EC2
 * (lib/reconcile/group-snapshot-job.ts): one CreateSnapshots for claims on one node, a refusal
 * with no EC2 mutation for claims on two, the lost answer found again by the group's name, and
 * deletion by the content's policy.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BackendFeatures, GroupSnapshotAnnotations, GroupSnapshotFinalizers, SnapshotAnnotations, TagKeys, type ItemInput, type Result, type VolumeGroupSnapshotContentStatus, type Write } from '../../lib/contract/index.js';
import { Ec2Error, type CreateSnapshotsRequest, type Snapshot } from '../../lib/ec2/types.js';
import { EventReasons } from '../../lib/reconcile/events.js';
import { MAX_EXCLUDED_DATA_VOLUMES } from '../../lib/reconcile/group-snapshot.js';
import { FakeGateway } from './fake-gateway.js';
import { CLUSTER, DRIVER, reconcileOne, setup } from './fixtures.js';

const NAME = 'groupsnapcontent-3f6a9b2c-1d4e-4f5a-8b6c-7d8e9f0a1b2c';
const MARK = GroupSnapshotAnnotations.beingCreated;
const VOLUMES = ['vol-0000000000000000a', 'vol-0000000000000000b', 'vol-0000000000000000c'];
const NODE = 'i-0aaaaaaaaaaaaaaa1';
const OTHER_NODE = 'i-0bbbbbbbbbbbbbbb2';
const ROOT = 'vol-0000000000000root';
const STRANGER = 'vol-00000000000000other';

type Override = { annotations?: Record<string, string>; status?: VolumeGroupSnapshotContentStatus | undefined; deletion?: boolean; deletionPolicy?: 'Delete' | 'Retain'; className?: string | null };

function item(override: Override = {}, members = VOLUMES): ItemInput {
  return {
    kind: 'VolumeGroupSnapshotContent',
    content: {
      apiVersion: 'groupsnapshot.storage.k8s.io/v1',
      kind: 'VolumeGroupSnapshotContent',
      metadata: {
        name: NAME,
        uid: 'group-content-uid',
        annotations: override.annotations ?? { [MARK]: 'yes' },
        finalizers: [GroupSnapshotFinalizers.contentBound],
        ...(override.deletion && { deletionTimestamp: '2025-03-01T12:00:00Z' }),
      },
      spec: {
        driver: DRIVER,
        deletionPolicy: override.deletionPolicy ?? 'Delete',
        volumeGroupSnapshotClassName: override.className === undefined ? 'group' : override.className,
        volumeGroupSnapshotRef: { namespace: 'shop', name: 'nightly', uid: 'vgs-uid' },
        source: { volumeHandles: members },
      },
      ...(override.status && { status: override.status }),
    },
    groupSnapshotClass: { metadata: { name: 'group' }, driver: DRIVER, deletionPolicy: 'Delete' },
    members: members.map((volumeHandle, i) => ({ volumeHandle, persistentVolume: `pv-${i}`, claim: { namespace: 'shop', name: `data-${i}` } })),
  };
}

/** Three member volumes on `placement`'s nodes, the node's root, and another data volume on NODE. */
function world(ec2: FakeGateway, placement: string[] = [NODE, NODE, NODE]) {
  const mapped = (volumeIds: string[]) => volumeIds.map((volumeId) => ({ volumeId, state: 'attached' as const }));
  ec2.addInstance({ instanceId: NODE, rootVolumeId: ROOT, mappings: mapped([ROOT, ...VOLUMES.filter((_, i) => placement[i] === NODE), STRANGER]) });
  ec2.addInstance({ instanceId: OTHER_NODE, mappings: mapped(VOLUMES.filter((_, i) => placement[i] === OTHER_NODE)) });
  const on = (instanceId: string) => ({ state: 'in-use' as const, attachments: [{ instanceId, device: '/dev/xvdb', state: 'attached' as const }] });
  ec2.addVolume({ volumeId: ROOT, ...on(NODE) });
  ec2.addVolume({ volumeId: STRANGER, ...on(NODE) });
  VOLUMES.forEach((volumeId, i) => ec2.addVolume({ volumeId, sizeGiB: 4, ...on(placement[i]!) }));
}

const statusOf = (result: Result) =>
  result.writes.find((w): w is Extract<Write, { op: 'updateVolumeGroupSnapshotContentStatus' }> => w.op === 'updateVolumeGroupSnapshotContentStatus')?.status;
const events = (result: Result) => result.writes.flatMap((w) => (w.op === 'createEvent' ? [`${w.type} ${w.reason}: ${w.message}`] : []));

describe('group snapshot content: create', () => {
  it('an unmarked content on one node -> the being-created mark first, no EC2 mutation', async () => {
    const { ec2, ctx } = setup();
    world(ec2);
    const result = await reconcileOne(ctx, item({ annotations: {} }));
    expect(result).toMatchObject({ outcome: 'requeue', requeueAfterSeconds: 0 });
    expect(result.writes).toEqual([{ op: 'setAnnotation', target: { kind: 'VolumeGroupSnapshotContent', name: NAME, uid: 'group-content-uid' }, key: MARK, value: 'yes' }]);
    expect(ec2.mutations).toEqual([]);
  });

  it('three claims on one node -> one CreateSnapshots (root and the non-member excluded), three snapshots recorded; ready once completed', async () => {
    const { ec2, ctx } = setup({ extraTags: { team: 'shop' } });
    world(ec2);
    const first = await reconcileOne(ctx, item());
    expect(ec2.mutations.map((c) => c.verb)).toEqual(['createSnapshots']);
    expect(ec2.callsOf('createSnapshots')[0]!.args[0]).toEqual({ name: NAME, instanceId: NODE, excludeDataVolumeIds: [STRANGER], tags: { team: 'shop' } });
    const snapshots = [...ec2.snapshots.values()];
    expect(snapshots.map((s) => s.volumeId).sort()).toEqual(VOLUMES);
    for (const s of snapshots) expect(s.tags).toMatchObject({ [TagKeys.csiVolumeSnapshotName]: NAME, [TagKeys.cluster(CLUSTER)]: 'owned', team: 'shop' });
    const pending = statusOf(first)!;
    expect(pending).toMatchObject({ volumeGroupSnapshotHandle: NAME, readyToUse: false });
    expect(pending.volumeSnapshotInfoList!.map((i) => [i.volumeHandle, i.restoreSize, i.readyToUse])).toEqual(VOLUMES.map((v) => [v, 4 * 2 ** 30, false]));
    expect(first.writes.map((w) => w.op)).toEqual(['updateVolumeGroupSnapshotContentStatus', 'removeAnnotation']);
    expect(first).toMatchObject({ outcome: 'requeue' });

    ec2.settle();
    const second = await reconcileOne(ctx, item({ annotations: {}, status: pending }));
    expect(statusOf(second)).toMatchObject({ volumeGroupSnapshotHandle: NAME, readyToUse: true });
    expect(statusOf(second)!.volumeSnapshotInfoList!.every((i) => i.readyToUse)).toBe(true);
    expect(second).toMatchObject({ outcome: 'done' });
    expect(ec2.callsOf('createSnapshots')).toHaveLength(1);
  });

  it('claims on two nodes -> refused with a message naming both nodes, a Warning, no EC2 mutation', async () => {
    const { ec2, ctx } = setup();
    world(ec2, [NODE, NODE, OTHER_NODE]);
    const result = await reconcileOne(ctx, item());
    expect(result).toMatchObject({ outcome: 'failed', reason: 'NotOneNode' });
    expect(ec2.mutations).toEqual([]);
    const [event] = events(result);
    expect(event).toMatch(/^Warning GroupSnapshotCreationFailed: the claims of the group are attached to different nodes/);
    expect(event).toContain(`${NODE} (claim shop/data-0 and claim shop/data-1)`);
    expect(event).toContain(`${OTHER_NODE} (claim shop/data-2)`);
    expect(statusOf(result)).toMatchObject({ readyToUse: false, error: { message: expect.stringContaining('no snapshot was taken') } });
    // The mark goes with the final answer.
    expect(result.writes.some((w) => w.op === 'removeAnnotation' && w.key === MARK)).toBe(true);
  });

  it('a refused content seen again -> no second Event, still no EC2 mutation', async () => {
    const { ec2, ctx } = setup();
    world(ec2, [NODE, OTHER_NODE, OTHER_NODE]);
    const first = await reconcileOne(ctx, item());
    const again = await reconcileOne(ctx, item({ annotations: {}, status: statusOf(first) }));
    expect(again).toMatchObject({ outcome: 'failed' });
    expect(events(again)).toEqual([]);
    expect(ec2.mutations).toEqual([]);
  });

  it('CreateSnapshots acts and its answer is lost -> the replay finds the group by its name: one set of snapshots', async () => {
    class LostAnswer extends FakeGateway {
      lost = 1;
      override async createSnapshots(request: CreateSnapshotsRequest): Promise<Snapshot[]> {
        const made = await super.createSnapshots(request);
        if (this.lost-- > 0) throw new Ec2Error('transient', 'ECONNRESET', 'EC2 CreateSnapshots: ECONNRESET', 'CreateSnapshots');
        return made;
      }
    }
    const { ctx } = setup();
    const ec2 = new LostAnswer(CLUSTER);
    world(ec2);
    const lost = await reconcileOne({ ...ctx, ec2 }, item());
    expect(lost).toMatchObject({ outcome: 'requeue' });
    const replay = await reconcileOne({ ...ctx, ec2 }, item());
    expect(ec2.callsOf('createSnapshots')).toHaveLength(1);
    expect(ec2.snapshots.size).toBe(3);
    expect(statusOf(replay)!.volumeSnapshotInfoList).toHaveLength(3);
  });

  it('CreateSnapshots denied -> the content fails with the permission named, as its final error', async () => {
    const { ec2, ctx } = setup();
    world(ec2);
    ec2.fail('createSnapshots', new Ec2Error('unauthorized', 'UnauthorizedOperation', 'You are not authorized to perform this operation.', 'CreateSnapshots'));
    const result = await reconcileOne(ctx, item());
    expect(result).toMatchObject({ outcome: 'failed', reason: 'UnauthorizedOperation' });
    expect(statusOf(result)!.error!.message).toContain('ec2:CreateSnapshots');
    expect(ec2.snapshots.size).toBe(0);
  });

  it('another driver\'s content -> nothing, no EC2 call', async () => {
    const { ec2, ctx } = setup();
    world(ec2);
    const other = item();
    (other as { content: { spec: { driver: string } } }).content.spec.driver = 'other.csi.example.com';
    expect(await reconcileOne(ctx, other)).toMatchObject({ outcome: 'done', writes: [] });
    expect(ec2.calls).toEqual([]);
  });
});

describe('group snapshot content: delete', () => {
  async function made() {
    const { ec2, ctx } = setup();
    world(ec2);
    const first = await reconcileOne(ctx, item());
    ec2.settle();
    const ready = statusOf(await reconcileOne(ctx, item({ annotations: {}, status: statusOf(first) })))!;
    ec2.calls.length = 0;
    return { ec2, ctx, ready };
  }

  it('Delete policy, the group being deleted -> every snapshot deleted, status cleared, finalizer removed', async () => {
    const { ec2, ctx, ready } = await made();
    const result = await reconcileOne(ctx, item({ deletion: true, annotations: { [GroupSnapshotAnnotations.beingDeleted]: 'yes' }, status: ready }));
    expect(ec2.callsOf('deleteSnapshot')).toHaveLength(3);
    expect(ec2.snapshots.size).toBe(0);
    expect(result.writes.map((w) => w.op)).toEqual(['updateVolumeGroupSnapshotContentStatus', 'removeFinalizer']);
    expect(statusOf(result)).toEqual({ volumeGroupSnapshotHandle: null, creationTime: null, readyToUse: null, volumeSnapshotInfoList: null });
    expect(result).toMatchObject({ outcome: 'done' });
  });

  it('Retain policy -> the finalizer only, EC2 untouched', async () => {
    const { ec2, ctx, ready } = await made();
    const result = await reconcileOne(ctx, item({ deletion: true, deletionPolicy: 'Retain', annotations: { [GroupSnapshotAnnotations.beingDeleted]: 'yes' }, status: ready }));
    expect(result.writes.map((w) => w.op)).toEqual(['removeFinalizer']);
    expect(ec2.mutations).toEqual([]);
    expect(ec2.snapshots.size).toBe(3);
  });

  it('deleted without the common controller\'s mark -> not the sidecar\'s to act on: nothing deleted', async () => {
    const { ec2, ctx, ready } = await made();
    const result = await reconcileOne(ctx, item({ deletion: true, annotations: {}, status: ready }));
    expect(result).toMatchObject({ outcome: 'done', writes: [] });
    expect(ec2.mutations).toEqual([]);
  });
});

describe('docs/snapshots.md on group snapshots', () => {
  const doc = readFileSync(new URL('../../docs/snapshots.md', import.meta.url), 'utf8').replace(/\s+/g, ' ');
  it('states the bound, the Warning, the names and the feature as the code has them', () => {
    expect(doc).toContain(`(\`ExcludeDataVolumeIds\`, at most ${MAX_EXCLUDED_DATA_VOLUMES})`);
    expect(doc).toContain(`with a \`${EventReasons.groupSnapshotCreationFailed}\` Warning`);
    expect(doc).toContain(`\`${TagKeys.csiVolumeSnapshotName}=<the group content's name>\``);
    expect(doc).toContain(`\`${SnapshotAnnotations.groupSnapshotHandle}\``);
    expect(doc).toContain(`(\`serves: [${BackendFeatures.groupSnapshots}]\`, docs/upgrade.md)`);
  });
});
