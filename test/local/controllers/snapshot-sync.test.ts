/** The common snapshot controller's decisions, one step at a time, over plain objects. */
import { describe, expect, it } from 'vitest';
import {
  ANN_SNAPSHOT_BEING_DELETED,
  CONTENT_BOUND_FINALIZER,
  PVC_AS_SOURCE_FINALIZER,
  SNAPSHOT_AS_SOURCE_FINALIZER,
  SNAPSHOT_BOUND_FINALIZER,
  binaryQuantity,
  nanosToTime,
  syncContent,
  syncSnapshot,
  type PersistentVolume,
  type PersistentVolumeClaim,
  type SnapshotStep,
  type SnapshotWorld,
  type VolumeSnapshot,
  type VolumeSnapshotClass,
  type VolumeSnapshotContent,
} from '../../../lib/local/controllers/index.js';

const NOW = '2025-01-01T00:00:00Z';

function vs(name: string, o: { claim?: string; content?: string; className?: string | null; finalizers?: string[]; status?: VolumeSnapshot['status']; deleting?: boolean } = {}): VolumeSnapshot {
  const source = o.content ? { volumeSnapshotContentName: o.content } : { persistentVolumeClaimName: o.claim ?? 'data' };
  return {
    apiVersion: 'snapshot.storage.k8s.io/v1',
    kind: 'VolumeSnapshot',
    metadata: {
      name,
      namespace: 'default',
      uid: `uid-${name}`,
      resourceVersion: '7',
      creationTimestamp: NOW,
      ...(o.finalizers ? { finalizers: o.finalizers } : {}),
      ...(o.deleting ? { deletionTimestamp: NOW } : {}),
    },
    spec: { source, ...(o.className === null ? {} : { volumeSnapshotClassName: o.className ?? 'ebs' }) },
    ...(o.status ? { status: o.status } : {}),
  };
}

function vsc(name: string, o: { snapshot?: string; uid?: string | null; policy?: 'Delete' | 'Retain'; handle?: 'volume' | 'snapshot'; status?: VolumeSnapshotContent['status']; finalizers?: string[]; annotations?: Record<string, string>; className?: string } = {}): VolumeSnapshotContent {
  const snapshot = o.snapshot ?? 'snap';
  return {
    apiVersion: 'snapshot.storage.k8s.io/v1',
    kind: 'VolumeSnapshotContent',
    metadata: {
      name,
      uid: `uid-${name}`,
      resourceVersion: '3',
      creationTimestamp: NOW,
      ...(o.finalizers ? { finalizers: o.finalizers } : {}),
      ...(o.annotations ? { annotations: o.annotations } : {}),
    },
    spec: {
      deletionPolicy: o.policy ?? 'Delete',
      driver: 'ebs.csi.aws.com',
      source: o.handle === 'snapshot' ? { snapshotHandle: 'snap-0123456789abcdef0' } : { volumeHandle: 'vol-0123456789abcdef0' },
      volumeSnapshotRef: { kind: 'VolumeSnapshot', namespace: 'default', name: snapshot, ...(o.uid === null ? {} : { uid: o.uid ?? `uid-${snapshot}` }) },
      ...(o.className ? { volumeSnapshotClassName: o.className } : {}),
    },
    ...(o.status ? { status: o.status } : {}),
  };
}

const vsclass = (name: string, o: { policy?: 'Delete' | 'Retain'; isDefault?: boolean; driver?: string } = {}): VolumeSnapshotClass => ({
  apiVersion: 'snapshot.storage.k8s.io/v1',
  kind: 'VolumeSnapshotClass',
  metadata: { name, uid: `uid-${name}`, resourceVersion: '1', creationTimestamp: NOW, ...(o.isDefault ? { annotations: { 'snapshot.storage.kubernetes.io/is-default-class': 'true' } } : {}) },
  driver: o.driver ?? 'ebs.csi.aws.com',
  deletionPolicy: o.policy ?? 'Delete',
});

function pvc(name: string, o: { phase?: string; volume?: string; finalizers?: string[]; dataSource?: object; deleting?: boolean } = {}): PersistentVolumeClaim {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name, namespace: 'default', uid: `uid-${name}`, resourceVersion: '5', creationTimestamp: NOW, ...(o.finalizers ? { finalizers: o.finalizers } : {}), ...(o.deleting ? { deletionTimestamp: NOW } : {}) },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '4Gi' } }, ...(o.volume ? { volumeName: o.volume } : {}), ...(o.dataSource ? { dataSource: o.dataSource } : {}) },
    status: { phase: o.phase ?? 'Bound' },
  };
}

const pv = (name: string, claimName = 'data', csi = true): PersistentVolume => ({
  apiVersion: 'v1',
  kind: 'PersistentVolume',
  metadata: { name, uid: `uid-${name}`, resourceVersion: '4', creationTimestamp: NOW },
  spec: {
    claimRef: { namespace: 'default', name: claimName, uid: `uid-${claimName}` },
    volumeMode: 'Filesystem',
    ...(csi ? { csi: { driver: 'ebs.csi.aws.com', volumeHandle: 'vol-0aaaaaaaaaaaaaaaa' } } : {}),
  },
  status: { phase: 'Bound' },
});

function world(o: { contents?: VolumeSnapshotContent[]; classes?: VolumeSnapshotClass[]; claims?: PersistentVolumeClaim[]; snapshots?: VolumeSnapshot[]; volumes?: PersistentVolume[] } = {}): SnapshotWorld {
  const classes = o.classes ?? [vsclass('ebs')];
  const claims = o.claims ?? [pvc('data', { volume: 'pvc-1' })];
  return {
    content: (name) => o.contents?.find((c) => c.metadata.name === name),
    snapshotClass: (name) => classes.find((c) => c.metadata.name === name),
    classes: () => classes,
    claim: (ns, name) => claims.find((c) => c.metadata.namespace === ns && c.metadata.name === name),
    claims: (ns) => claims.filter((c) => c.metadata.namespace === ns),
    snapshots: () => o.snapshots ?? [],
    volume: (name) => (o.volumes ?? [pv('pvc-1')]).find((v) => v.metadata.name === name),
    now: () => NOW,
  };
}

/** The writes of a step, summarised: `update <kind>/<name>`, `create …`, `delete …`. */
const summary = (step: SnapshotStep) =>
  step.writes.map((w) => (w.op === 'create' ? `create ${w.object.metadata.name}` : w.op === 'delete' ? `delete ${w.name}` : `update ${w.resource}/${w.current.metadata.name}`));
const desiredOf = <T,>(step: SnapshotStep, resource: string): T => (step.writes.find((w) => w.op === 'update' && w.resource === resource) as unknown as { desired: T }).desired;
const reasons = (step: SnapshotStep) => step.events.map((e) => `${e.type} ${e.reason}`);

describe('syncSnapshot: creating', () => {
  it('new dynamic snapshot -> the as-source finalizer first, nothing else', () => {
    const step = syncSnapshot(world(), vs('snap'));
    expect(summary(step)).toEqual(['update volumesnapshots/snap']);
    expect(desiredOf<VolumeSnapshot>(step, 'volumesnapshots').metadata.finalizers).toEqual([SNAPSHOT_AS_SOURCE_FINALIZER]);
  });

  it('with the finalizer, source claim bound -> claim finalizer, snapcontent-<uid> from the PV and class, status bound and not ready', () => {
    const snap = vs('snap', { finalizers: [SNAPSHOT_AS_SOURCE_FINALIZER] });
    const step = syncSnapshot(world({ classes: [vsclass('ebs', { policy: 'Retain' })] }), snap);
    expect(summary(step)).toEqual(['update persistentvolumeclaims/data', 'create snapcontent-uid-snap', 'update volumesnapshots/snap']);
    expect(desiredOf<PersistentVolumeClaim>(step, 'persistentvolumeclaims').metadata.finalizers).toEqual([PVC_AS_SOURCE_FINALIZER]);
    const created = (step.writes[1] as { object: VolumeSnapshotContent }).object;
    expect(created.spec).toEqual({
      volumeSnapshotRef: { kind: 'VolumeSnapshot', namespace: 'default', name: 'snap', uid: 'uid-snap', apiVersion: 'snapshot.storage.k8s.io/v1', resourceVersion: '7' },
      source: { volumeHandle: 'vol-0aaaaaaaaaaaaaaaa' },
      volumeSnapshotClassName: 'ebs',
      deletionPolicy: 'Retain',
      driver: 'ebs.csi.aws.com',
      sourceVolumeMode: 'Filesystem',
    });
    expect(desiredOf<VolumeSnapshot>(step, 'volumesnapshots').status).toEqual({ boundVolumeSnapshotContentName: 'snapcontent-uid-snap', readyToUse: false });
    expect(reasons(step)).toEqual(['Normal CreatingSnapshot']);
    expect(step.events[0]?.message).toBe('Waiting for a snapshot default/snap to be created by the CSI driver.');
  });

  it.each([
    ['claim missing', { claims: [] }, 'Failed to create snapshot content with error snapshot controller failed to update snap on API server: cannot get claim from snapshot'],
    ['claim pending', { claims: [pvc('data', { phase: 'Pending' })] }, 'the PVC data is not yet bound to a PV, will not attempt to take a snapshot'],
    ['PV bound to another claim', { volumes: [pv('pvc-1', 'other')] }, 'claim in dataSource not bound or invalid'],
    ['PV not CSI', { volumes: [pv('pvc-1', 'data', false)] }, 'cannot find CSI PersistentVolumeSource for volume pvc-1'],
  ])('%s -> error status with readyToUse false and a Warning, no content', (_name, w, message) => {
    const snap = vs('snap', { finalizers: [SNAPSHOT_AS_SOURCE_FINALIZER] });
    const step = syncSnapshot(world(w as Parameters<typeof world>[0]), snap);
    expect(summary(step).filter((s) => s.startsWith('create'))).toEqual([]);
    const status = desiredOf<VolumeSnapshot>(step, 'volumesnapshots').status;
    expect(status?.readyToUse).toBe(false);
    expect(status?.error?.message).toContain(message);
    expect(reasons(step)).toEqual(['Warning SnapshotContentCreationFailed']);
  });

  it('same error already in status -> no write, no repeated event', () => {
    const message = 'Failed to create snapshot content with error snapshot controller failed to update snap on API server: cannot get claim from snapshot';
    const snap = vs('snap', { finalizers: [SNAPSHOT_AS_SOURCE_FINALIZER], status: { readyToUse: false, error: { time: NOW, message } } });
    expect(syncSnapshot(world({ claims: [] }), snap)).toEqual({ writes: [], events: [] });
  });

  it('unknown class -> GetSnapshotClassFailed, readyToUse untouched', () => {
    const step = syncSnapshot(world({ classes: [] }), vs('snap'));
    const status = desiredOf<VolumeSnapshot>(step, 'volumesnapshots').status;
    expect(status).toEqual({ error: { time: NOW, message: 'Failed to get snapshot class with error volumesnapshotclass.snapshot.storage.k8s.io "ebs" not found' } });
    expect(reasons(step)).toEqual(['Warning GetSnapshotClassFailed']);
  });

  it('no class named -> the single default class of the PV driver is written into the spec', () => {
    const classes = [vsclass('other', { isDefault: true, driver: 'other.csi' }), vsclass('ebs-default', { isDefault: true }), vsclass('plain')];
    const step = syncSnapshot(world({ classes }), vs('snap', { className: null }));
    expect(desiredOf<VolumeSnapshot>(step, 'volumesnapshots').spec.volumeSnapshotClassName).toBe('ebs-default');
  });

  it.each([
    ['none', [vsclass('plain')], 'cannot find default snapshot class'],
    ['two', [vsclass('a', { isDefault: true }), vsclass('b', { isDefault: true })], '2 default snapshot classes were found'],
  ])('no class named, %s default -> SetDefaultSnapshotClassFailed', (_n, classes, why) => {
    const step = syncSnapshot(world({ classes }), vs('snap', { className: null }));
    expect(desiredOf<VolumeSnapshot>(step, 'volumesnapshots').status?.error?.message).toBe(`Failed to set default snapshot class with error ${why}`);
  });

  it('content status ready with size and time -> copied: readyToUse, restoreSize 4Gi, creationTime; SnapshotCreated and SnapshotReady', () => {
    const created = Date.UTC(2025, 0, 1, 12, 0, 0) * 1e6;
    const content = vsc('snapcontent-uid-snap', { finalizers: [CONTENT_BOUND_FINALIZER], status: { snapshotHandle: 'snap-1', readyToUse: true, restoreSize: 4 * 2 ** 30, creationTime: created } });
    const snap = vs('snap', { finalizers: [SNAPSHOT_AS_SOURCE_FINALIZER, SNAPSHOT_BOUND_FINALIZER], status: { boundVolumeSnapshotContentName: 'snapcontent-uid-snap', readyToUse: false } });
    const step = syncSnapshot(world({ contents: [content] }), snap);
    expect(desiredOf<VolumeSnapshot>(step, 'volumesnapshots').status).toEqual({
      boundVolumeSnapshotContentName: 'snapcontent-uid-snap',
      readyToUse: true,
      restoreSize: '4Gi',
      creationTime: '2025-01-01T12:00:00Z',
    });
    expect(reasons(step)).toEqual(['Normal SnapshotCreated', 'Normal SnapshotReady']);
  });

  it('content error -> copied to the snapshot; bound finalizer added first once bound with policy Delete', () => {
    const content = vsc('snapcontent-uid-snap', { status: { readyToUse: false, error: { time: NOW, message: 'Failed to check and update snapshot content: CreateSnapshot failed' } } });
    const unbound = vs('snap', { finalizers: [SNAPSHOT_AS_SOURCE_FINALIZER], status: { boundVolumeSnapshotContentName: 'snapcontent-uid-snap', readyToUse: false } });
    const first = syncSnapshot(world({ contents: [content] }), unbound);
    expect(desiredOf<VolumeSnapshot>(first, 'volumesnapshots').metadata.finalizers).toEqual([SNAPSHOT_AS_SOURCE_FINALIZER, SNAPSHOT_BOUND_FINALIZER]);
    const bound = vs('snap', { finalizers: [SNAPSHOT_AS_SOURCE_FINALIZER, SNAPSHOT_BOUND_FINALIZER], status: unbound.status });
    const second = syncSnapshot(world({ contents: [content] }), bound);
    expect(desiredOf<VolumeSnapshot>(second, 'volumesnapshots').status?.error).toEqual(content.status?.error);
  });

  it('ready snapshot whose source claim still has the finalizer, no other snapshot cutting -> claim finalizer removed', () => {
    const content = vsc('snapcontent-uid-snap', { status: { readyToUse: true } });
    const snap = vs('snap', { finalizers: [SNAPSHOT_AS_SOURCE_FINALIZER, SNAPSHOT_BOUND_FINALIZER], status: { boundVolumeSnapshotContentName: 'snapcontent-uid-snap', readyToUse: true } });
    const claims = [pvc('data', { volume: 'pvc-1', finalizers: [PVC_AS_SOURCE_FINALIZER] })];
    const free = syncSnapshot(world({ contents: [content], claims, snapshots: [snap] }), snap);
    expect(summary(free)).toEqual(['update persistentvolumeclaims/data']);
    expect(desiredOf<PersistentVolumeClaim>(free, 'persistentvolumeclaims').metadata.finalizers).toEqual([]);
    const busy = syncSnapshot(world({ contents: [content], claims, snapshots: [snap, vs('other')] }), snap);
    expect(busy.writes).toEqual([]);
  });

  it('dynamic content bound to another uid -> SnapshotContentMisbound', () => {
    const content = vsc('snapcontent-uid-snap', { uid: 'uid-older' });
    const step = syncSnapshot(world({ contents: [content] }), vs('snap', { finalizers: [SNAPSHOT_AS_SOURCE_FINALIZER] }));
    expect(reasons(step)).toEqual(['Warning SnapshotContentMisbound']);
  });

  it('pre-provisioned content without uid -> content bound (uid and class), status copied', () => {
    const content = vsc('pre', { handle: 'snapshot', uid: null, status: { snapshotHandle: 'snap-0123456789abcdef0', readyToUse: true, restoreSize: 2 ** 30 } });
    const snap = vs('snap', { content: 'pre', finalizers: [SNAPSHOT_AS_SOURCE_FINALIZER] });
    const step = syncSnapshot(world({ contents: [content] }), snap);
    expect(summary(step)).toEqual(['update volumesnapshotcontents/pre', 'update volumesnapshots/snap']);
    const bound = desiredOf<VolumeSnapshotContent>(step, 'volumesnapshotcontents');
    expect(bound.spec.volumeSnapshotRef.uid).toBe('uid-snap');
    expect(bound.spec.volumeSnapshotClassName).toBe('ebs');
    expect(desiredOf<VolumeSnapshot>(step, 'volumesnapshots').status).toEqual({ boundVolumeSnapshotContentName: 'pre', readyToUse: true, restoreSize: '1Gi' });
  });

  it('pre-provisioned content missing -> SnapshotContentMissing; dynamic one named -> SnapshotContentMismatch', () => {
    const missing = syncSnapshot(world(), vs('snap', { content: 'pre', finalizers: [SNAPSHOT_AS_SOURCE_FINALIZER] }));
    expect(reasons(missing)).toEqual(['Warning SnapshotContentMissing']);
    const mismatch = syncSnapshot(world({ contents: [vsc('pre')] }), vs('snap', { content: 'pre', finalizers: [SNAPSHOT_AS_SOURCE_FINALIZER] }));
    expect(reasons(mismatch)).toEqual(['Warning SnapshotContentMismatch']);
  });
});

describe('syncSnapshot: deleting', () => {
  const boundStatus = { boundVolumeSnapshotContentName: 'snapcontent-uid-snap', readyToUse: true };
  const finalizers = [SNAPSHOT_AS_SOURCE_FINALIZER, SNAPSHOT_BOUND_FINALIZER];

  it('policy Delete -> content marked being-deleted and deleted; only the as-source finalizer goes', () => {
    const content = vsc('snapcontent-uid-snap', { finalizers: [CONTENT_BOUND_FINALIZER] });
    const step = syncSnapshot(world({ contents: [content] }), vs('snap', { deleting: true, finalizers, status: boundStatus }));
    expect(summary(step)).toEqual(['update volumesnapshotcontents/snapcontent-uid-snap', 'delete snapcontent-uid-snap', 'update volumesnapshots/snap']);
    expect(desiredOf<VolumeSnapshotContent>(step, 'volumesnapshotcontents').metadata.annotations).toEqual({ [ANN_SNAPSHOT_BEING_DELETED]: 'yes' });
    expect(desiredOf<VolumeSnapshot>(step, 'volumesnapshots').metadata.finalizers).toEqual([SNAPSHOT_BOUND_FINALIZER]);
  });

  it("external-provisioner's source protection on it (a restore under way) -> kept: only the controller's own finalizers go, so it stays Terminating", () => {
    const provisioners = 'provisioner.storage.kubernetes.io/volumesnapshot-as-source-protection';
    const content = vsc('snapcontent-uid-snap', { policy: 'Retain', finalizers: [CONTENT_BOUND_FINALIZER] });
    const step = syncSnapshot(world({ contents: [content] }), vs('snap', { deleting: true, finalizers: [...finalizers, provisioners], status: boundStatus }));
    expect(desiredOf<VolumeSnapshot>(step, 'volumesnapshots').metadata.finalizers).toEqual([provisioners]);
  });

  it('content gone -> the bound finalizer goes too', () => {
    const step = syncSnapshot(world(), vs('snap', { deleting: true, finalizers: [SNAPSHOT_BOUND_FINALIZER], status: boundStatus }));
    expect(desiredOf<VolumeSnapshot>(step, 'volumesnapshots').metadata.finalizers).toEqual([]);
  });

  it('policy Retain -> content marked, kept; both finalizers go', () => {
    const content = vsc('snapcontent-uid-snap', { policy: 'Retain', finalizers: [CONTENT_BOUND_FINALIZER] });
    const step = syncSnapshot(world({ contents: [content] }), vs('snap', { deleting: true, finalizers: [SNAPSHOT_AS_SOURCE_FINALIZER], status: boundStatus }));
    expect(summary(step)).toEqual(['update volumesnapshotcontents/snapcontent-uid-snap', 'update volumesnapshots/snap']);
    expect(desiredOf<VolumeSnapshot>(step, 'volumesnapshots').metadata.finalizers).toEqual([]);
  });

  it('a Pending claim restores from it -> SnapshotDeletePending, nothing deleted', () => {
    const content = vsc('snapcontent-uid-snap');
    const restoring = pvc('restore', { phase: 'Pending', dataSource: { apiGroup: 'snapshot.storage.k8s.io', kind: 'VolumeSnapshot', name: 'snap' } });
    const step = syncSnapshot(world({ contents: [content], claims: [pvc('data'), restoring] }), vs('snap', { deleting: true, finalizers, status: boundStatus }));
    expect(step.writes).toEqual([]);
    expect(reasons(step)).toEqual(['Warning SnapshotDeletePending']);
  });

  it('content of the same name bound to another snapshot uid -> left alone, finalizers removed', () => {
    const content = vsc('snapcontent-uid-snap', { uid: 'uid-other' });
    const step = syncSnapshot(world({ contents: [content] }), vs('snap', { deleting: true, finalizers, status: boundStatus }));
    expect(summary(step)).toEqual(['update volumesnapshots/snap']);
  });
});

describe('syncContent', () => {
  const get = (s?: VolumeSnapshot) => ({ snapshot: () => s });

  it('bound content without the finalizer -> finalizer added', () => {
    const step = syncContent(get(), vsc('c1'));
    expect(desiredOf<VolumeSnapshotContent>(step, 'volumesnapshotcontents').metadata.finalizers).toEqual([CONTENT_BOUND_FINALIZER]);
  });

  it('pre-bound content (no uid) -> nothing until the snapshot binds it', () => {
    expect(syncContent(get(), vsc('c1', { uid: null }))).toEqual({ writes: [], events: [] });
  });

  it('its snapshot deleting with finalizers -> being-deleted annotation; snapshot gone or another uid -> nothing', () => {
    const content = vsc('c1', { finalizers: [CONTENT_BOUND_FINALIZER] });
    const deleting = vs('snap', { deleting: true, finalizers: [SNAPSHOT_BOUND_FINALIZER] });
    const step = syncContent(get(deleting), content);
    expect(desiredOf<VolumeSnapshotContent>(step, 'volumesnapshotcontents').metadata.annotations).toEqual({ [ANN_SNAPSHOT_BEING_DELETED]: 'yes' });
    expect(syncContent(get(undefined), content).writes).toEqual([]);
    expect(syncContent(get({ ...deleting, metadata: { ...deleting.metadata, uid: 'new' } }), content).writes).toEqual([]);
  });

  it('both handles -> ContentValidationError', () => {
    const bad = vsc('c1');
    bad.spec.source = { volumeHandle: 'v', snapshotHandle: 's' };
    expect(reasons(syncContent(get(), bad))).toEqual(['Warning ContentValidationError']);
  });
});

describe('quantities and times', () => {
  it.each([
    [4 * 2 ** 30, '4Gi'],
    [2 ** 40, '1Ti'],
    [1536, '1536'],
    [1024, '1Ki'],
    [0, '0'],
  ])('%d bytes -> %s', (bytes, text) => expect(binaryQuantity(bytes)).toBe(text));

  it('nanoseconds -> RFC 3339 at whole seconds', () => expect(nanosToTime(1_735_732_800_123_456_789)).toBe('2025-01-01T12:00:00Z'));
});
