/**
 * The local snapshot controller's group part (lib/local/controllers/group-snapshot-sync.ts), as
 * pure steps: the group content from the selected claims' PVs, the members once the sidecar
 * recorded the group, the group's status; what it does not do, refused with a message.
 */
import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../lib/local/kube/types.js';
import {
  ANN_GROUP_BEING_DELETED,
  GROUP_BOUND_FINALIZER,
  GROUP_CONTENT_BOUND_FINALIZER,
  GROUP_HANDLE_ANNOTATION,
  memberContentName,
  memberSnapshotName,
  SNAPSHOT_IN_GROUP_FINALIZER,
  syncGroupSnapshot,
  type GroupWorld,
  type VolumeGroupSnapshot,
  type VolumeGroupSnapshotContent,
} from '../../../lib/local/controllers/group-snapshot-sync.js';
import type { PersistentVolume, PersistentVolumeClaim } from '../../../lib/local/controllers/objects.js';
import type { VolumeSnapshot, VolumeSnapshotContent } from '../../../lib/local/controllers/snapshot-objects.js';
import { syncSnapshot } from '../../../lib/local/controllers/snapshot-sync.js';

const DRIVER = 'ebs.csi.aws.com';
const meta = (name: string, namespace?: string, extra: object = {}) => ({ name, uid: `${name}-uid`, resourceVersion: '1', creationTimestamp: '2026-01-01T00:00:00Z', ...(namespace && { namespace }), ...extra }) as KubeObject['metadata'];

const claim = (name: string, app: string, bound = true): PersistentVolumeClaim =>
  ({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: meta(name, 'shop', { labels: { app } }), spec: { volumeName: `pv-${name}` }, status: { phase: bound ? 'Bound' : 'Pending' } }) as PersistentVolumeClaim;
const pv = (claimName: string, driver = DRIVER): PersistentVolume =>
  ({ apiVersion: 'v1', kind: 'PersistentVolume', metadata: meta(`pv-${claimName}`), spec: { csi: { driver, volumeHandle: `vol-${claimName}` }, claimRef: { namespace: 'shop', name: claimName } } }) as PersistentVolume;
const group = (extra: Partial<VolumeGroupSnapshot['spec']> = {}, metaExtra: object = { finalizers: [GROUP_BOUND_FINALIZER] }): VolumeGroupSnapshot =>
  ({ apiVersion: 'groupsnapshot.storage.k8s.io/v1', kind: 'VolumeGroupSnapshot', metadata: meta('nightly', 'shop', metaExtra), spec: { volumeGroupSnapshotClassName: 'group', source: { selector: { matchLabels: { app: 'db' } } }, ...extra } }) as VolumeGroupSnapshot;

function world(objects: { claims?: PersistentVolumeClaim[]; pvs?: PersistentVolume[]; content?: VolumeGroupSnapshotContent; snapshots?: VolumeSnapshot[]; contents?: VolumeSnapshotContent[] } = {}): GroupWorld {
  return {
    groupClass: (name) => (name === 'group' ? ({ apiVersion: 'groupsnapshot.storage.k8s.io/v1', kind: 'VolumeGroupSnapshotClass', metadata: meta('group'), driver: DRIVER, deletionPolicy: 'Delete' } as never) : undefined),
    groupContent: (name) => (objects.content?.metadata.name === name ? objects.content : undefined),
    claims: () => objects.claims ?? [],
    volume: (name) => objects.pvs?.find((v) => v.metadata.name === name),
    volumes: () => objects.pvs ?? [],
    snapshot: (_ns, name) => objects.snapshots?.find((s) => s.metadata.name === name),
    snapshots: () => objects.snapshots ?? [],
    content: (name) => objects.contents?.find((c) => c.metadata.name === name),
    now: () => '2026-01-01T00:00:00Z',
  };
}

const claims = [claim('data-b', 'db'), claim('data-a', 'db'), claim('web', 'web')];
const pvs = claims.map((c) => pv(c.metadata.name));

describe('local group snapshot controller', () => {
  it('a group of the selected claims -> its content, the bound finalizer, the volume handles in claim order, the class policy', () => {
    const step = syncGroupSnapshot(world({ claims, pvs }), group());
    expect(step.writes).toHaveLength(1);
    expect(step.writes[0]).toMatchObject({
      op: 'create',
      resource: 'volumegroupsnapshotcontents',
      object: {
        metadata: { name: 'groupsnapcontent-nightly-uid', finalizers: [GROUP_CONTENT_BOUND_FINALIZER] },
        spec: { driver: DRIVER, deletionPolicy: 'Delete', volumeGroupSnapshotClassName: 'group', volumeGroupSnapshotRef: { namespace: 'shop', name: 'nightly', uid: 'nightly-uid' }, source: { volumeHandles: ['vol-data-a', 'vol-data-b'] } },
      },
    });
  });

  it('a selected claim not bound, a PV of another driver, no claim selected, a pre-provisioned group -> an error status with a Warning, no content', () => {
    const cases: [GroupWorld, VolumeGroupSnapshot, string][] = [
      [world({ claims: [claim('data-a', 'db', false)], pvs }), group(), 'is not bound'],
      [world({ claims: [claim('data-a', 'db')], pvs: [pv('data-a', 'other.csi.example.com')] }), group(), 'not a volume of driver ebs.csi.aws.com'],
      [world({ claims: [claim('web', 'web')], pvs }), group(), 'selects no PersistentVolumeClaim'],
      [world({ claims, pvs }), group({ source: { volumeGroupSnapshotContentName: 'x' } }), 'pre-provisioned VolumeGroupSnapshot'],
    ];
    for (const [w, g, message] of cases) {
      const step = syncGroupSnapshot(w, g);
      expect(step.writes.map((x) => [x.op, x.resource])).toEqual([['update', 'volumegroupsnapshots']]);
      expect(step.events[0]?.message).toContain(message);
    }
  });

  it('the sidecar recorded the group -> per member a content with the group handle annotation and a VolumeSnapshot owned by the group; then bound with the recorded handle', () => {
    const content = {
      apiVersion: 'groupsnapshot.storage.k8s.io/v1',
      kind: 'VolumeGroupSnapshotContent',
      metadata: meta('groupsnapcontent-nightly-uid'),
      spec: { driver: DRIVER, deletionPolicy: 'Delete', volumeGroupSnapshotRef: { namespace: 'shop', name: 'nightly' }, source: { volumeHandles: ['vol-data-a'] } },
      status: { volumeGroupSnapshotHandle: 'groupsnapcontent-nightly-uid', readyToUse: true, volumeSnapshotInfoList: [{ volumeHandle: 'vol-data-a', snapshotHandle: 'snap-a', readyToUse: true, restoreSize: 2 ** 30, creationTime: 1_767_225_600_000_000_000 }] },
    } as VolumeGroupSnapshotContent;
    const g = group();
    const first = syncGroupSnapshot(world({ claims, pvs, content }), g);
    const created = first.writes.filter((w) => w.op === 'create');
    expect(created.map((w) => [w.resource, (w as { object: KubeObject }).object.metadata.name])).toEqual([
      ['volumesnapshotcontents', memberContentName(g, 'vol-data-a')],
      ['volumesnapshots', memberSnapshotName(g, 'vol-data-a')],
    ]);
    const [memberContent, memberSnapshot] = created.map((w) => (w as { object: KubeObject }).object) as [VolumeSnapshotContent, VolumeSnapshot];
    expect(memberContent.metadata.annotations).toEqual({ [GROUP_HANDLE_ANNOTATION]: 'groupsnapcontent-nightly-uid' });
    expect(memberSnapshot).toMatchObject({ metadata: { finalizers: [SNAPSHOT_IN_GROUP_FINALIZER], ownerReferences: [{ kind: 'VolumeGroupSnapshot', name: 'nightly' }] }, spec: { source: { persistentVolumeClaimName: 'data-a' } } });
    // The group is not ready while its members are not.
    expect(first.writes.find((w) => w.resource === 'volumegroupsnapshots')).toMatchObject({ desired: { status: { readyToUse: false, boundVolumeGroupSnapshotContentName: 'groupsnapcontent-nightly-uid' } } });

    const stored = (o: KubeObject, uid: string) => ({ ...o, metadata: { ...o.metadata, uid } });
    const second = syncGroupSnapshot(world({ claims, pvs, content, contents: [stored(memberContent, 'mc-uid') as VolumeSnapshotContent], snapshots: [stored(memberSnapshot, 'ms-uid') as VolumeSnapshot] }), g);
    const bound = second.writes.find((w) => w.resource === 'volumesnapshotcontents') as unknown as { desired: VolumeSnapshotContent };
    expect(bound.desired.spec.volumeSnapshotRef.uid).toBe('ms-uid');
    expect(bound.desired.status).toMatchObject({ snapshotHandle: 'snap-a', volumeGroupSnapshotHandle: 'groupsnapcontent-nightly-uid', readyToUse: true, restoreSize: 2 ** 30 });
  });

  it('a bound group without its finalizer -> the finalizer first', () => {
    const content = { apiVersion: 'groupsnapshot.storage.k8s.io/v1', kind: 'VolumeGroupSnapshotContent', metadata: meta('groupsnapcontent-nightly-uid'), spec: { driver: DRIVER, deletionPolicy: 'Delete', volumeGroupSnapshotRef: { namespace: 'shop', name: 'nightly', uid: 'nightly-uid' }, source: { volumeHandles: ['vol-data-a'] } } } as VolumeGroupSnapshotContent;
    const step = syncGroupSnapshot(world({ claims, pvs, content }), group({}, {}));
    expect(step.writes).toMatchObject([{ op: 'update', resource: 'volumegroupsnapshots', desired: { metadata: { finalizers: [GROUP_BOUND_FINALIZER] } } }]);
  });

  it('a group deleted (Delete) -> its content marked and deleted, each member content marked and deleted, each member let go and deleted; the finalizer only once all are gone', () => {
    const content = { apiVersion: 'groupsnapshot.storage.k8s.io/v1', kind: 'VolumeGroupSnapshotContent', metadata: meta('groupsnapcontent-nightly-uid'), spec: { driver: DRIVER, deletionPolicy: 'Delete', volumeGroupSnapshotRef: { namespace: 'shop', name: 'nightly', uid: 'nightly-uid' }, source: { volumeHandles: ['vol-data-a'] } } } as VolumeGroupSnapshotContent;
    const memberContent = { apiVersion: 'snapshot.storage.k8s.io/v1', kind: 'VolumeSnapshotContent', metadata: meta('snapcontent-m'), spec: { deletionPolicy: 'Delete', driver: DRIVER, source: { volumeHandle: 'vol-data-a' }, volumeSnapshotRef: { namespace: 'shop', name: 'snapshot-m' } } } as VolumeSnapshotContent;
    const member = { apiVersion: 'snapshot.storage.k8s.io/v1', kind: 'VolumeSnapshot', metadata: meta('snapshot-m', 'shop', { finalizers: [SNAPSHOT_IN_GROUP_FINALIZER], ownerReferences: [{ kind: 'VolumeGroupSnapshot', name: 'nightly', uid: 'nightly-uid' }] }), spec: { source: { persistentVolumeClaimName: 'data-a' } }, status: { boundVolumeSnapshotContentName: 'snapcontent-m' } } as VolumeSnapshot;
    const deleted = group({}, { finalizers: [GROUP_BOUND_FINALIZER], deletionTimestamp: '2026-01-02T00:00:00Z' });
    const step = syncGroupSnapshot(world({ content, contents: [memberContent], snapshots: [member] }), deleted);
    expect(step.writes.map((w) => [w.op, w.resource])).toEqual([
      ['update', 'volumesnapshotcontents'],
      ['delete', 'volumesnapshotcontents'],
      ['update', 'volumesnapshots'],
      ['delete', 'volumesnapshots'],
      ['update', 'volumegroupsnapshotcontents'],
      ['delete', 'volumegroupsnapshotcontents'],
    ]);
    expect((step.writes[4] as { desired: KubeObject }).desired.metadata.annotations).toEqual({ [ANN_GROUP_BEING_DELETED]: 'yes' });
    // Content still there (being deleted by the sidecar): the group keeps its finalizer.
    const going = { ...content, metadata: { ...content.metadata, deletionTimestamp: '2026-01-02T00:00:00Z', annotations: { [ANN_GROUP_BEING_DELETED]: 'yes' } } } as VolumeGroupSnapshotContent;
    expect(syncGroupSnapshot(world({ content: going }), deleted).writes).toEqual([]);
    // All gone: the finalizer goes.
    expect(syncGroupSnapshot(world({}), deleted).writes).toMatchObject([{ op: 'update', resource: 'volumegroupsnapshots', desired: { metadata: { finalizers: [] } } }]);
  });

  it('a group deleted while a claim is restored from a member -> nothing deleted, a Warning naming the member; the restore bound (the control) -> the deletion goes on', () => {
    const content = { apiVersion: 'groupsnapshot.storage.k8s.io/v1', kind: 'VolumeGroupSnapshotContent', metadata: meta('groupsnapcontent-nightly-uid'), spec: { driver: DRIVER, deletionPolicy: 'Delete', volumeGroupSnapshotRef: { namespace: 'shop', name: 'nightly', uid: 'nightly-uid' }, source: { volumeHandles: ['vol-data-a'] } } } as VolumeGroupSnapshotContent;
    const memberContent = { apiVersion: 'snapshot.storage.k8s.io/v1', kind: 'VolumeSnapshotContent', metadata: meta('snapcontent-m'), spec: { deletionPolicy: 'Delete', driver: DRIVER, source: { volumeHandle: 'vol-data-a' }, volumeSnapshotRef: { namespace: 'shop', name: 'snapshot-m' } } } as VolumeSnapshotContent;
    const member = { apiVersion: 'snapshot.storage.k8s.io/v1', kind: 'VolumeSnapshot', metadata: meta('snapshot-m', 'shop', { finalizers: [SNAPSHOT_IN_GROUP_FINALIZER], ownerReferences: [{ kind: 'VolumeGroupSnapshot', name: 'nightly', uid: 'nightly-uid' }] }), spec: { source: { persistentVolumeClaimName: 'data-a' } }, status: { boundVolumeSnapshotContentName: 'snapcontent-m' } } as VolumeSnapshot;
    const restore = (phase: string) =>
      ({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: meta('restored', 'shop'), spec: { dataSource: { apiGroup: 'snapshot.storage.k8s.io', kind: 'VolumeSnapshot', name: 'snapshot-m' } }, status: { phase } }) as PersistentVolumeClaim;
    const deleted = group({}, { finalizers: [GROUP_BOUND_FINALIZER], deletionTimestamp: '2026-01-02T00:00:00Z' });
    const waiting = syncGroupSnapshot(world({ content, contents: [memberContent], snapshots: [member], claims: [restore('Pending')] }), deleted);
    expect(waiting.writes).toEqual([]);
    expect(waiting.events).toMatchObject([{ type: 'Warning', reason: 'GroupSnapshotDeletePending', message: expect.stringContaining('snapshot-m is being used to restore a PVC') }]);
    const after = syncGroupSnapshot(world({ content, contents: [memberContent], snapshots: [member], claims: [restore('Bound')] }), deleted);
    expect(after.writes.map((w) => [w.op, w.resource])).toContainEqual(['delete', 'volumegroupsnapshotcontents']);
  });

  it('a group deleted while a claim is restored from a member not ready yet -> the member still gets its recorded snapshot and status (else the restore and the deletion wait for each other), nothing deleted', () => {
    const deleted = group({}, { finalizers: [GROUP_BOUND_FINALIZER], deletionTimestamp: '2026-01-02T00:00:00Z' });
    const name = memberSnapshotName(deleted, 'vol-data-a');
    const contentName = memberContentName(deleted, 'vol-data-a');
    const content = {
      apiVersion: 'groupsnapshot.storage.k8s.io/v1',
      kind: 'VolumeGroupSnapshotContent',
      metadata: meta('groupsnapcontent-nightly-uid'),
      spec: { driver: DRIVER, deletionPolicy: 'Delete', volumeGroupSnapshotRef: { namespace: 'shop', name: 'nightly', uid: 'nightly-uid' }, source: { volumeHandles: ['vol-data-a'] } },
      status: { volumeGroupSnapshotHandle: 'groupsnapcontent-nightly-uid', readyToUse: true, volumeSnapshotInfoList: [{ volumeHandle: 'vol-data-a', snapshotHandle: 'snap-a', readyToUse: true }] },
    } as VolumeGroupSnapshotContent;
    const memberContent = { apiVersion: 'snapshot.storage.k8s.io/v1', kind: 'VolumeSnapshotContent', metadata: meta(contentName, undefined, { annotations: { [GROUP_HANDLE_ANNOTATION]: 'groupsnapcontent-nightly-uid' } }), spec: { deletionPolicy: 'Delete', driver: DRIVER, source: { volumeHandle: 'vol-data-a' }, volumeSnapshotRef: { namespace: 'shop', name } } } as VolumeSnapshotContent;
    const member = { apiVersion: 'snapshot.storage.k8s.io/v1', kind: 'VolumeSnapshot', metadata: meta(name, 'shop', { finalizers: [SNAPSHOT_IN_GROUP_FINALIZER], ownerReferences: [{ kind: 'VolumeGroupSnapshot', name: 'nightly', uid: 'nightly-uid' }] }), spec: { source: { persistentVolumeClaimName: 'data-a' } } } as VolumeSnapshot;
    const restore = { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: meta('restored', 'shop'), spec: { dataSource: { apiGroup: 'snapshot.storage.k8s.io', kind: 'VolumeSnapshot', name } }, status: { phase: 'Pending' } } as PersistentVolumeClaim;
    const step = syncGroupSnapshot(world({ content, contents: [memberContent], snapshots: [member], claims: [restore] }), deleted);
    expect(step.writes.map((w) => [w.op, w.resource])).toEqual([
      ['update', 'volumesnapshotcontents'],
      ['update', 'volumesnapshots'],
    ]);
    expect((step.writes[0] as unknown as { desired: VolumeSnapshotContent }).desired.status).toMatchObject({ snapshotHandle: 'snap-a', readyToUse: true });
    expect(step.events).toMatchObject([{ reason: 'GroupSnapshotDeletePending' }]);
  });

  it('a member VolumeSnapshot is the group part\'s: the single-snapshot sync leaves it alone (no default class, no content of its own)', () => {
    const member = { apiVersion: 'snapshot.storage.k8s.io/v1', kind: 'VolumeSnapshot', metadata: meta('snapshot-x', 'shop', { finalizers: [SNAPSHOT_IN_GROUP_FINALIZER] }), spec: { source: { persistentVolumeClaimName: 'data-a' } } } as VolumeSnapshot;
    expect(syncSnapshot({} as never, member)).toMatchObject({ writes: [], events: [] });
  });
});
