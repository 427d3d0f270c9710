/**
 * The group content's sidecar decisions (lib/reconcile/group-snapshot-content.ts) and its
 * contract (lib/contract/group-snapshots.ts): refuse before any EC2 call, write before act, find
 * the group again by its name, record as the sidecar does, delete only the cluster's.
 */
import { describe, expect, it } from 'vitest';
import {
  GroupSnapshotAnnotations,
  GroupSnapshotFinalizers,
  isGroupContentBeingDeleted,
  VolumeGroupSnapshotContentSchema,
  type VolumeGroupSnapshotClass,
  type VolumeGroupSnapshotContent,
} from '../../lib/contract/group-snapshots.js';
import { TagKeys } from '../../lib/contract/tags.js';
import type { Disk, Instance, Snapshot } from '../../lib/ec2/types.js';
import {
  decideGroupContent,
  decideGroupCreate,
  decideGroupDelete,
  recordedSnapshotIds,
  type GroupCreateObserved,
  type NodeObserved,
} from '../../lib/reconcile/group-snapshot-content.js';
import type { GroupMember } from '../../lib/reconcile/group-snapshot.js';
import { CLUSTER, DRIVER } from './fixtures.js';

const NAMES = { clusterId: CLUSTER, driver: DRIVER };
const OWNED = { [TagKeys.cluster(CLUSTER)]: 'owned', [TagKeys.ebsCluster]: 'true', [TagKeys.volhookCluster]: CLUSTER };
const NAME = 'groupsnapcontent-7d1c';

function content(override: { annotations?: Record<string, string>; status?: VolumeGroupSnapshotContent['status']; source?: VolumeGroupSnapshotContent['spec']['source']; deletionPolicy?: 'Delete' | 'Retain'; deletion?: boolean; finalizers?: string[] } = {}): VolumeGroupSnapshotContent {
  return VolumeGroupSnapshotContentSchema.parse({
    apiVersion: 'groupsnapshot.storage.k8s.io/v1',
    kind: 'VolumeGroupSnapshotContent',
    metadata: {
      name: NAME,
      uid: 'u-group',
      annotations: override.annotations ?? {},
      finalizers: override.finalizers ?? [GroupSnapshotFinalizers.contentBound],
      ...(override.deletion ? { deletionTimestamp: '2025-03-01T12:00:00Z' } : {}),
    },
    spec: {
      driver: DRIVER,
      deletionPolicy: override.deletionPolicy ?? 'Delete',
      volumeGroupSnapshotClassName: 'group',
      volumeGroupSnapshotRef: { namespace: 'shop', name: 'nightly', uid: 'u-vgs' },
      source: override.source ?? { volumeHandles: ['vol-a', 'vol-b', 'vol-c'] },
    },
    ...(override.status ? { status: override.status } : {}),
  });
}
const groupClass = (parameters: Record<string, string> = {}, driver = DRIVER): VolumeGroupSnapshotClass => ({ metadata: { name: 'group' }, driver, deletionPolicy: 'Delete', parameters });

const members: GroupMember[] = [
  { claim: 'shop/a', volumeId: 'vol-a' },
  { claim: 'shop/b', volumeId: 'vol-b' },
  { claim: 'shop/c', volumeId: 'vol-c' },
];

function disk(volumeId: string, instanceId: string | undefined): Disk {
  return {
    volumeId,
    zone: 'us-east-1a',
    sizeGiB: 4,
    state: instanceId ? 'in-use' : 'available',
    type: 'gp3',
    encrypted: false,
    multiAttach: false,
    tags: OWNED,
    attachments: instanceId ? [{ instanceId, device: '/dev/xvdb', state: 'attached' as const }] : [],
  };
}
const disks = (placement: Record<string, string | undefined>) => new Map(Object.entries(placement).map(([id, node]) => [id, disk(id, node)]));
const onOneNode = disks({ 'vol-a': 'i-1', 'vol-b': 'i-1', 'vol-c': 'i-1' });
const instance: Instance = { instanceId: 'i-1', zone: 'us-east-1a', state: 'running', tags: { [TagKeys.cluster(CLUSTER)]: 'owned' }, devicesInUse: [] };
const node: NodeObserved = { instanceId: 'i-1', instance, attached: [...onOneNode.values(), disk('vol-other', 'i-1'), disk('vol-root', 'i-1')], rootVolumeId: 'vol-root' };

function snapshot(snapshotId: string, volumeId: string, startTime: string, state: Snapshot['state'] = 'completed', tags: Record<string, string> = OWNED): Snapshot {
  return { snapshotId, volumeId, sizeGiB: 4, state, startTime, encrypted: false, tags: { ...tags, [TagKeys.csiVolumeSnapshotName]: NAME } };
}
const T1 = '2025-03-01T12:00:01.000Z';
const T2 = '2025-03-01T12:00:02.000Z';
const set1 = [snapshot('snap-a1', 'vol-a', T1), snapshot('snap-b1', 'vol-b', T1), snapshot('snap-c1', 'vol-c', T1)];
const set2 = [snapshot('snap-a2', 'vol-a', T2), snapshot('snap-b2', 'vol-b', T2), snapshot('snap-c2', 'vol-c', T2)];
const observed = (o: Partial<GroupCreateObserved>): GroupCreateObserved => ({ snapshots: [], disks: onOneNode, ...o });
const TAGS = { team: 'shop' };
const MARKED = { [GroupSnapshotAnnotations.beingCreated]: 'yes' };

describe('group content: whether the sidecar acts, and with which class', () => {
  it('a dynamic content whose class is known and has no parameters -> proceed with its volume handles (the control)', () => {
    expect(decideGroupContent(content(), groupClass(), NAMES)).toEqual({ kind: 'proceed', volumeHandles: ['vol-a', 'vol-b', 'vol-c'] });
  });

  it('a class parameter -> refused naming it; the csi.storage.k8s.io/ ones the sidecar strips are not parameters', () => {
    const plan = decideGroupContent(content(), groupClass({ tagSpecification_1: 'a=b', 'csi.storage.k8s.io/group-snapshotter-secret-name': 's' }), NAMES);
    expect(plan).toMatchObject({ kind: 'refuse', reason: 'InvalidParameter' });
    if (plan.kind === 'refuse') {
      expect(plan.message).toContain('"tagSpecification_1"');
      expect(plan.message).not.toContain('csi.storage.k8s.io');
    }
  });

  it('a pre-provisioned group content -> refused NotImplemented, naming spec.source.groupSnapshotHandles', () => {
    const plan = decideGroupContent(content({ source: { groupSnapshotHandles: { volumeGroupSnapshotHandle: 'g', volumeSnapshotHandles: ['snap-1'] } } }), groupClass(), NAMES);
    expect(plan).toMatchObject({ kind: 'refuse', reason: 'NotImplemented' });
    if (plan.kind === 'refuse') expect(plan.message).toContain('spec.source.groupSnapshotHandles');
  });

  it("the class not known yet -> wait; another driver's class -> refused; another driver's content -> none", () => {
    expect(decideGroupContent(content(), null, NAMES)).toMatchObject({ kind: 'wait' });
    expect(decideGroupContent(content(), groupClass({}, 'other.csi.example'), NAMES)).toMatchObject({ kind: 'refuse', reason: 'InvalidGroupSnapshotClass' });
    expect(decideGroupContent(content(), groupClass(), { ...NAMES, driver: 'other.csi.example' })).toEqual({ kind: 'none' });
  });

  it('ready -> none; ready with the mark left (its removal lost) -> proceed, so the mark goes', () => {
    const ready = { volumeGroupSnapshotHandle: NAME, readyToUse: true };
    expect(decideGroupContent(content({ status: ready }), groupClass(), NAMES)).toEqual({ kind: 'none' });
    expect(decideGroupContent(content({ status: ready, annotations: MARKED }), groupClass(), NAMES)).toMatchObject({ kind: 'proceed' });
  });

  it('a final error recorded -> refused again as it is, not tried (as the sidecar)', () => {
    const plan = decideGroupContent(content({ status: { readyToUse: false, error: { message: 'the claims of the group are attached to different nodes' } } }), groupClass(), NAMES);
    expect(plan).toEqual({ kind: 'refuse', reason: 'GroupSnapshotCreationFailed', message: 'the claims of the group are attached to different nodes' });
  });
});

describe('group content: create', () => {
  it('three claims on one node: observe the node, then the mark, and only when marked one CreateSnapshots of the members (the root and the other volume left out)', () => {
    expect(decideGroupCreate(content(), members, false, TAGS, observed({}), NAMES)).toEqual({ kind: 'observeNode', instanceId: 'i-1' });
    expect(decideGroupCreate(content(), members, false, TAGS, observed({ node }), NAMES)).toEqual({ kind: 'mark' });
    expect(decideGroupCreate(content({ annotations: MARKED }), members, true, TAGS, observed({ node }), NAMES)).toEqual({
      kind: 'createSnapshots',
      request: { name: NAME, instanceId: 'i-1', excludeDataVolumeIds: ['vol-other'], tags: TAGS },
    });
  });

  it('claims on two nodes -> refused with a message naming the nodes, marked or not: no CreateSnapshots, no mark', () => {
    const twoNodes = disks({ 'vol-a': 'i-1', 'vol-b': 'i-2', 'vol-c': 'i-1' });
    for (const marked of [false, true]) {
      const step = decideGroupCreate(content(), members, marked, TAGS, observed({ disks: twoNodes, node }), NAMES);
      expect(step).toMatchObject({ kind: 'refuse', reason: 'NotOneNode' });
      if (step.kind === 'refuse') expect(step.message).toContain('i-2 (claim shop/b)');
    }
  });

  it('the node observed is not where the members are now -> observe that one, never a CreateSnapshots on the stale one', () => {
    const moved = disks({ 'vol-a': 'i-3', 'vol-b': 'i-3', 'vol-c': 'i-3' });
    expect(decideGroupCreate(content(), members, true, TAGS, observed({ disks: moved, node }), NAMES)).toEqual({ kind: 'observeNode', instanceId: 'i-3' });
  });

  it('a lost answer: the group found by its name -> recorded, no second CreateSnapshots (marked or not)', () => {
    for (const marked of [false, true]) {
      expect(decideGroupCreate(content(), members, marked, TAGS, observed({ snapshots: set1, node }), NAMES)).toMatchObject({ kind: 'record', ready: true });
    }
  });
});

describe('group content: record', () => {
  it('the status as the sidecar writes it: the handle, the group time, each member in order with its snapshot, ready once all are completed', () => {
    const step = decideGroupCreate(content(), members, true, TAGS, observed({ snapshots: [set1[2]!, set1[0]!, set1[1]!] }), NAMES);
    expect(step).toEqual({
      kind: 'record',
      changed: true,
      ready: true,
      status: {
        volumeGroupSnapshotHandle: NAME,
        creationTime: '2025-03-01T12:00:01Z',
        readyToUse: true,
        volumeSnapshotInfoList: ['a', 'b', 'c'].map((m) => ({
          volumeHandle: `vol-${m}`,
          snapshotHandle: `snap-${m}1`,
          creationTime: Date.parse(T1) * 1e6,
          readyToUse: true,
          restoreSize: 4 * 2 ** 30,
        })),
      },
    });
    if (step.kind !== 'record') return;
    // Recorded already: nothing to write again.
    expect(decideGroupCreate(content({ status: { ...step.status } }), members, true, TAGS, observed({ snapshots: set1 }), NAMES)).toMatchObject({ kind: 'record', changed: false, ready: true });
  });

  it('one member still pending -> not ready (the group is ready only when every snapshot is)', () => {
    const pending = [set1[0]!, snapshot('snap-b1', 'vol-b', T1, 'pending'), set1[2]!];
    const step = decideGroupCreate(content(), members, true, TAGS, observed({ snapshots: pending }), NAMES);
    expect(step).toMatchObject({ kind: 'record', ready: false });
    if (step.kind === 'record') expect(step.status.volumeSnapshotInfoList.map((i) => i.readyToUse)).toEqual([true, false, true]);
  });

  it('two sets (two requests created at once): the one that made the younger deletes it, one at a time; the one that made the older records it', () => {
    const both = [...set1, ...set2];
    expect(decideGroupCreate(content(), members, true, TAGS, observed({ snapshots: both, created: set2.map((s) => s.snapshotId) }), NAMES)).toMatchObject({ kind: 'deleteSnapshot', snapshotId: 'snap-a2' });
    const older = decideGroupCreate(content(), members, true, TAGS, observed({ snapshots: both, created: set1.map((s) => s.snapshotId) }), NAMES);
    expect(older).toMatchObject({ kind: 'record' });
    if (older.kind === 'record') expect(older.status.volumeSnapshotInfoList.map((i) => i.snapshotHandle)).toEqual(['snap-a1', 'snap-b1', 'snap-c1']);
  });

  it('a snapshot of a volume not in the group (attached between look and act) -> deleted, then the members recorded', () => {
    const extra = [...set1, snapshot('snap-x1', 'vol-new', T1)];
    expect(decideGroupCreate(content(), members, true, TAGS, observed({ snapshots: extra }), NAMES)).toMatchObject({ kind: 'deleteSnapshot', snapshotId: 'snap-x1' });
  });

  it("a snapshot with the group's name another cluster owns -> refused, never recorded", () => {
    const other = { [TagKeys.cluster('beta')]: 'owned', [TagKeys.ebsCluster]: 'true', [TagKeys.volhookCluster]: 'beta' };
    expect(decideGroupCreate(content(), members, true, TAGS, observed({ snapshots: [set1[0]!, snapshot('snap-b9', 'vol-b', T1, 'completed', other), set1[2]!] }), NAMES)).toMatchObject({ kind: 'refuse', reason: 'NotOwned' });
  });

  it('a member without a snapshot in the set found, or a failed one -> refused, not recorded as a group', () => {
    expect(decideGroupCreate(content(), members, true, TAGS, observed({ snapshots: set1.slice(0, 2) }), NAMES)).toMatchObject({ kind: 'refuse', reason: 'IncompleteGroup' });
    expect(decideGroupCreate(content(), members, true, TAGS, observed({ snapshots: [set1[0]!, snapshot('snap-b1', 'vol-b', T1, 'error'), set1[2]!] }), NAMES)).toMatchObject({ kind: 'refuse', reason: 'SnapshotFailed' });
  });
});

describe('group content: delete', () => {
  const recorded = { volumeGroupSnapshotHandle: NAME, readyToUse: true, creationTime: '2025-03-01T12:00:01Z', volumeSnapshotInfoList: set1.map((s) => ({ volumeHandle: s.volumeId, snapshotHandle: s.snapshotId })) };

  it('as the sidecar decides it: the being-deleted mark on a deleted content; never while the being-created mark is on', () => {
    expect(isGroupContentBeingDeleted(content({ deletion: true, annotations: { [GroupSnapshotAnnotations.beingDeleted]: 'yes' } }))).toBe(true);
    expect(isGroupContentBeingDeleted(content({ deletion: true, annotations: { [GroupSnapshotAnnotations.beingDeleted]: 'yes', ...MARKED } }))).toBe(false);
    expect(isGroupContentBeingDeleted(content({ annotations: { [GroupSnapshotAnnotations.beingDeleted]: 'yes' } }))).toBe(false);
  });

  it('Delete -> every snapshot of the group, one at a time, then the status cleared and the finalizer dropped', () => {
    const c = content({ deletion: true, status: recorded });
    expect(recordedSnapshotIds(c)).toEqual(['snap-a1', 'snap-b1', 'snap-c1']);
    expect(decideGroupDelete(c, { owned: set1, foreign: undefined }, NAMES)).toEqual({ kind: 'deleteSnapshot', snapshotId: 'snap-a1' });
    expect(decideGroupDelete(c, { owned: set1.slice(1), foreign: undefined }, NAMES)).toEqual({ kind: 'deleteSnapshot', snapshotId: 'snap-b1' });
    expect(decideGroupDelete(c, { owned: [], foreign: undefined }, NAMES)).toEqual({ kind: 'release', clearStatus: true, dropFinalizer: true });
  });

  it("Retain -> the finalizer only, no DeleteSnapshot; another cluster's snapshot -> refused, not deleted", () => {
    expect(decideGroupDelete(content({ deletion: true, deletionPolicy: 'Retain', status: recorded }), { owned: set1, foreign: undefined }, NAMES)).toEqual({ kind: 'release', clearStatus: false, dropFinalizer: true });
    const foreign = snapshot('snap-z', 'vol-z', T1, 'completed', { [TagKeys.cluster('beta')]: 'owned' });
    expect(decideGroupDelete(content({ deletion: true, status: recorded }), { owned: set1, foreign }, NAMES)).toMatchObject({ kind: 'refuse', reason: 'NotOwned' });
  });
});

describe('group content: contract', () => {
  it('parses a v1 group content as snapshot-controller and the sidecar write it; refuses one without spec.driver', () => {
    const parsed = VolumeGroupSnapshotContentSchema.safeParse({
      metadata: { name: NAME, uid: 'u' },
      spec: { driver: DRIVER, deletionPolicy: 'Delete', volumeGroupSnapshotRef: { name: 'nightly', namespace: 'shop', uid: 'u-vgs' }, source: { volumeHandles: ['vol-a'] } },
      status: { volumeGroupSnapshotHandle: NAME, creationTime: '2025-03-01T12:00:01Z', readyToUse: true, volumeSnapshotInfoList: [{ volumeHandle: 'vol-a', snapshotHandle: 'snap-a1', creationTime: 1740830401000000000, readyToUse: true, restoreSize: 4294967296 }] },
    });
    expect(parsed.success).toBe(true);
    expect(VolumeGroupSnapshotContentSchema.safeParse({ metadata: { name: NAME, uid: 'u' }, spec: { deletionPolicy: 'Delete', volumeGroupSnapshotRef: {}, source: {} } }).success).toBe(false);
  });
});
