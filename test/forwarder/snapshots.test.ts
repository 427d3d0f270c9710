import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../lib/forwarder/config.js';
import { ABSENT_MAX_FACTOR } from '../../lib/forwarder/informers.js';
import type { KubernetesObject } from '@kubernetes/client-node';
import { ItemSchema, itemKey } from '../../lib/contract/index.js';
import { snapshotContentNews } from '../../lib/forwarder/changes.js';
import { Dependents } from '../../lib/forwarder/dependents.js';
import { buildClaimItem, buildSnapshotContentItem, parseItemKey, type SnapshotClassObject, type SnapshotContentObject, type VolumeSnapshotObject } from '../../lib/forwarder/items.js';
import { WATCHES, type Resource, type Watch, type WatchContext, type WatchedObjects } from '../../lib/forwarder/watches.js';
import { DRIVER, claim, storageClass, viewOf, volume } from './objects.js';

const ownership = { provisioner: DRIVER, driver: DRIVER };

const content = (name: string, extra: Partial<SnapshotContentObject> = {}): SnapshotContentObject => ({
  apiVersion: 'snapshot.storage.k8s.io/v1',
  kind: 'VolumeSnapshotContent',
  metadata: { name, uid: `${name}-uid` },
  spec: { driver: DRIVER, deletionPolicy: 'Delete', source: { volumeHandle: 'vol-0123456789abcdef0' }, volumeSnapshotClassName: 'ebs', volumeSnapshotRef: { namespace: 'default', name: 'nightly', uid: 'vs-uid' } },
  ...extra,
});
const snapshotClass: SnapshotClassObject = { apiVersion: 'snapshot.storage.k8s.io/v1', kind: 'VolumeSnapshotClass', metadata: { name: 'ebs' }, driver: DRIVER, deletionPolicy: 'Delete', parameters: { tagSpecification_1: 'a=b' } };
const volumeSnapshot: VolumeSnapshotObject = {
  apiVersion: 'snapshot.storage.k8s.io/v1',
  kind: 'VolumeSnapshot',
  metadata: { name: 'nightly', namespace: 'default', uid: 'vs-uid' },
  spec: { source: { persistentVolumeClaimName: 'data' }, volumeSnapshotClassName: 'ebs' },
  status: { boundVolumeSnapshotContentName: 'snapcontent-1', readyToUse: true },
};
const restoring = () => {
  const pvc = claim('restored');
  pvc.spec!.dataSource = { kind: 'VolumeSnapshot', name: 'nightly', apiGroup: 'snapshot.storage.k8s.io' };
  return pvc;
};
const cloning = () => {
  const pvc = claim('copy');
  pvc.spec!.dataSource = { kind: 'PersistentVolumeClaim', name: 'data' };
  return pvc;
};

function contextOf(objects: Partial<{ [R in Resource]: WatchedObjects[R][] }>): WatchContext {
  const cache = <T extends KubernetesObject>(list: T[] = []) => ({
    get: (name: string, namespace?: string) => list.find((o) => o.metadata?.name === name && (namespace === undefined || o.metadata?.namespace === namespace)),
    list: () => list,
  });
  return {
    ownership,
    dependents: new Dependents({ claims: () => objects.persistentvolumeclaims ?? [], attachments: () => [] }),
    ready: () => true,
    caches: Object.fromEntries(
      (Object.keys(WATCHES) as Resource[]).map((r) => [r, cache(objects[r] as KubernetesObject[] | undefined)]),
    ) as unknown as WatchContext['caches'],
  };
}
const keysOf = <R extends Resource>(resource: R, object: WatchedObjects[R], ctx: WatchContext) =>
  [...(WATCHES[resource] as Watch<WatchedObjects[R]>).keys('update', object, ctx)].map((o) => o.key);

describe('snapshot items', () => {
  it('a content of ours -> its item with its class, valid against the contract, keyed VolumeSnapshotContent/<name>', () => {
    const item = buildSnapshotContentItem(content('snapcontent-1'), viewOf({ snapshotClasses: [snapshotClass] }));
    expect(ItemSchema.parse(item)).toMatchObject({ kind: 'VolumeSnapshotContent', content: { metadata: { name: 'snapcontent-1' } }, snapshotClass: { parameters: { tagSpecification_1: 'a=b' } } });
    expect(itemKey(item)).toBe('VolumeSnapshotContent/snapcontent-1');
    expect(parseItemKey('VolumeSnapshotContent/snapcontent-1')).toEqual({ kind: 'VolumeSnapshotContent', name: 'snapcontent-1' });
  });

  it('a restore claim -> its VolumeSnapshot and the bound content as source context', () => {
    const view = viewOf({ classes: [storageClass('gp3', 'Immediate')], snapshots: [volumeSnapshot], contents: [content('snapcontent-1')] });
    const item = ItemSchema.parse(buildClaimItem(restoring(), view, DRIVER));
    expect(item).toMatchObject({ source: { kind: 'VolumeSnapshot', snapshot: { metadata: { name: 'nightly' } }, content: { metadata: { name: 'snapcontent-1' } } } });
  });

  it('a clone claim -> the source claim and its PV; a missing source -> nulls', () => {
    const source = claim('data', { volumeName: 'pvc-src' });
    const view = viewOf({ classes: [storageClass('gp3', 'Immediate')], claims: [source], volumes: [volume('pvc-src')] });
    expect(ItemSchema.parse(buildClaimItem(cloning(), view, DRIVER))).toMatchObject({ source: { kind: 'PersistentVolumeClaim', claim: { metadata: { name: 'data' } }, pv: { metadata: { name: 'pvc-src' } } } });
    expect(ItemSchema.parse(buildClaimItem(cloning(), viewOf({}), DRIVER))).toMatchObject({ source: { kind: 'PersistentVolumeClaim', claim: null, pv: null } });
  });
});

describe('snapshot watches', () => {
  it('a content of ours -> its key; of another driver -> nothing; either way the claims restoring from its VolumeSnapshot', () => {
    const ctx = contextOf({ persistentvolumeclaims: [restoring(), claim('plain')] });
    expect(keysOf('volumesnapshotcontents', content('snapcontent-1'), ctx)).toEqual(['VolumeSnapshotContent/snapcontent-1', 'PersistentVolumeClaim/default/restored']);
    const other = content('snapcontent-2', {});
    other.spec!.driver = 'other.csi.example.com';
    expect(keysOf('volumesnapshotcontents', other, ctx)).toEqual(['PersistentVolumeClaim/default/restored']);
  });

  it('a content of ours added -> the volume report too (it may name an old snapshot); of another driver -> not', () => {
    const ctx = contextOf({});
    const watch = WATCHES.volumesnapshotcontents as Watch<WatchedObjects['volumesnapshotcontents']>;
    expect([...watch.keys('add', content('snapcontent-1'), ctx)].map((o) => o.key)).toEqual(['VolumeSnapshotContent/snapcontent-1', 'VolumeReport/cluster']);
    const other = content('snapcontent-2', {});
    other.spec!.driver = 'other.csi.example.com';
    expect([...watch.keys('add', other, ctx)].map((o) => o.key)).toEqual([]);
  });

  it('a VolumeSnapshot -> the claims restoring from it; a source claim or its PV -> the claims cloning it', () => {
    const ctx = contextOf({ persistentvolumeclaims: [restoring(), cloning()] });
    expect(keysOf('volumesnapshots', volumeSnapshot, ctx)).toEqual(['PersistentVolumeClaim/default/restored']);
    const pv = volume('pvc-src');
    pv.spec!.claimRef = { namespace: 'default', name: 'data' };
    expect(keysOf('persistentvolumes', pv, ctx)).toContain('PersistentVolumeClaim/default/copy');
  });

  it('a class change -> its unsettled contents; a ready one is settled', () => {
    const ready = content('snapcontent-ready', { status: { readyToUse: true } });
    const ctx = contextOf({ volumesnapshotcontents: [content('snapcontent-1'), ready] });
    expect(keysOf('volumesnapshotclasses', snapshotClass, ctx)).toEqual(['VolumeSnapshotContent/snapcontent-1']);
  });

  it('the echo of the sidecar writes (status, being-created mark) -> not news; a deletion timestamp -> news', () => {
    const before = content('snapcontent-1');
    const echo = { ...before, metadata: { ...before.metadata, resourceVersion: '9', annotations: { 'snapshot.storage.kubernetes.io/volumesnapshot-being-created': 'yes' } }, status: { snapshotHandle: 'snap-1', readyToUse: false } };
    expect(snapshotContentNews(echo, ownership)).toEqual(snapshotContentNews(before, ownership));
    const deleted = { ...before, metadata: { ...before.metadata, deletionTimestamp: new Date() } };
    expect(snapshotContentNews(deleted, ownership)).not.toEqual(snapshotContentNews(before, ownership));
  });
});

describe('a cluster without the snapshot CRDs', () => {
  it('the snapshot resources (and VolumeAttributesClasses) are optional: a 404 list is none (informers.test.ts shows the informer then syncs empty)', () => {
    for (const resource of ['volumesnapshotcontents', 'volumesnapshotclasses', 'volumesnapshots'] as const) {
      expect(WATCHES[resource].optional?.whileAbsent).toBe('snapshots are off until the snapshot CRDs (snapshot.storage.k8s.io/v1) are installed');
    }
    expect(WATCHES.volumeattributesclasses.optional?.whileAbsent).toMatch(/^VolumeAttributesClasses are off until/);
    // docs/snapshots.md says how long until CRDs installed later are picked up: as the informer does it.
    const restartMs = parseConfig({ apiUrl: 'http://127.0.0.1:1', clusterId: 'c', secret: 'test-secret-0123456789abcdef' }).informerRestartMs;
    const doc = readFileSync(new URL('../../docs/snapshots.md', import.meta.url), 'utf8').replace(/\s+/g, ' ');
    expect(doc).toContain(`up to ${ABSENT_MAX_FACTOR} times it (${(ABSENT_MAX_FACTOR * restartMs) / 60_000} minutes at the default ${restartMs / 1000} s)`);
    for (const resource of ['persistentvolumeclaims', 'persistentvolumes', 'volumeattachments', 'nodes', 'csinodes', 'storageclasses'] as const) {
      expect(WATCHES[resource].optional).toBeUndefined();
    }
  });
});
