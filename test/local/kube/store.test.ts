import { describe, expect, it } from 'vitest';
import { createObjectStore, isConflict, isInvalid, isNotFound, type KubeObject, type WatchEvent } from '../../../lib/local/kube/index.js';
import { pvc } from './helpers.js';

const claim = (name: string, labels?: Record<string, string>) => pvc(name, labels ? { labels } : {}) as unknown as KubeObject;

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  throw new Error('expected a throw');
}

describe('object store (in process)', () => {
  it('update that changes nothing -> same resourceVersion and no watch event', () => {
    const store = createObjectStore();
    const created = store.create('persistentvolumeclaims', claim('same'));
    const events: WatchEvent[] = [];
    store.watch('persistentvolumeclaims', { resourceVersion: created.metadata.resourceVersion }, (e) => events.push(e));
    const updated = store.update('persistentvolumeclaims', created);
    expect(updated.metadata.resourceVersion).toBe(created.metadata.resourceVersion);
    expect(events).toEqual([]);
  });

  it('watch with a label selector -> object entering the selection is ADDED, leaving it is DELETED', () => {
    const store = createObjectStore();
    store.create('persistentvolumeclaims', claim('moving', { tier: 'web' }));
    const events: string[] = [];
    store.watch('persistentvolumeclaims', { namespace: 'default', labelSelector: 'tier=db', resourceVersion: store.resourceVersion }, (e) => events.push(e.type));
    store.patch('persistentvolumeclaims', 'moving', 'default', 'merge', { metadata: { labels: { tier: 'db' } } });
    store.patch('persistentvolumeclaims', 'moving', 'default', 'merge', { metadata: { annotations: { a: 'b' } } });
    store.patch('persistentvolumeclaims', 'moving', 'default', 'merge', { metadata: { labels: { tier: 'web' } } });
    expect(events).toEqual(['ADDED', 'MODIFIED', 'DELETED']);
  });

  it('watch from an old resourceVersion within the history -> replays the missed changes in order', () => {
    const store = createObjectStore();
    const from = store.resourceVersion;
    store.create('persistentvolumeclaims', claim('a'));
    store.create('persistentvolumeclaims', claim('b'));
    store.delete('persistentvolumeclaims', 'a', 'default');
    const events: string[] = [];
    store.watch('persistentvolumeclaims', { resourceVersion: from }, (e) => events.push(`${e.type}:${e.object.metadata.name}`));
    expect(events).toEqual(['ADDED:a', 'ADDED:b', 'DELETED:a']);
  });

  it('listener that writes to the store -> every watcher still sees changes in resourceVersion order', () => {
    const store = createObjectStore();
    const seenByA: string[] = [];
    const seenByB: string[] = [];
    store.watch('persistentvolumeclaims', { resourceVersion: store.resourceVersion }, (e) => {
      seenByA.push(e.object.metadata.resourceVersion);
      if (e.type === 'ADDED') store.patch('persistentvolumeclaims', e.object.metadata.name, 'default', 'merge', { metadata: { labels: { seen: 'yes' } } });
    });
    store.watch('persistentvolumeclaims', { resourceVersion: store.resourceVersion }, (e) => seenByB.push(e.object.metadata.resourceVersion));
    store.create('persistentvolumeclaims', claim('x'));
    expect(seenByA).toHaveLength(2);
    expect(seenByB).toEqual(seenByA);
    expect(Number(seenByB[0])).toBeLessThan(Number(seenByB[1]));
  });

  it('create without storageClassName while a default class exists -> the newest default class is filled in', () => {
    const store = createObjectStore();
    const sc = (name: string) => ({
      apiVersion: 'storage.k8s.io/v1',
      kind: 'StorageClass',
      metadata: { name, annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } },
      provisioner: 'ebs.csi.aws.com',
    });
    store.create('storageclasses', sc('gp3'));
    const withoutClass = { ...claim('defaulted'), spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } };
    expect((store.create('persistentvolumeclaims', withoutClass).spec as { storageClassName?: string }).storageClassName).toBe('gp3');
    const explicitNone = { ...claim('none'), spec: { ...withoutClass.spec, storageClassName: '' } };
    expect((store.create('persistentvolumeclaims', explicitNone).spec as { storageClassName?: string }).storageClassName).toBe('');
  });

  it('terminating namespace -> refuses new objects, and disappears once its last finalizer is removed', () => {
    const store = createObjectStore();
    store.create('namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team' } });
    store.create('persistentvolumeclaims', { ...claim('held'), metadata: { name: 'held', namespace: 'team', finalizers: ['example.com/x'] } });
    store.create('persistentvolumeclaims', { ...claim('free'), metadata: { name: 'free', namespace: 'team' } });
    store.delete('namespaces', 'team');
    expect((store.get('namespaces', 'team')?.status as { phase: string }).phase).toBe('Terminating');
    expect(store.get('persistentvolumeclaims', 'free', 'team')).toBeUndefined();
    expect(store.get('persistentvolumeclaims', 'held', 'team')?.metadata.deletionTimestamp).toBeDefined();
    expect(thrown(() => store.create('persistentvolumeclaims', { ...claim('late'), metadata: { name: 'late', namespace: 'team' } }))).toMatchObject({ code: 403 });

    store.patch('persistentvolumeclaims', 'held', 'team', 'json', [{ op: 'remove', path: '/metadata/finalizers' }]);
    expect(store.get('namespaces', 'team')).toBeUndefined();
  });

  it('create in a missing namespace -> NotFound; update of a missing object -> NotFound', () => {
    const store = createObjectStore();
    expect(isNotFound(thrown(() => store.create('persistentvolumeclaims', { ...claim('x'), metadata: { name: 'x', namespace: 'nope' } })))).toBe(true);
    const ghost = { ...claim('ghost'), metadata: { name: 'ghost', namespace: 'default', uid: 'u', resourceVersion: '1', creationTimestamp: '' } } as KubeObject;
    expect(isNotFound(thrown(() => store.update('persistentvolumeclaims', ghost)))).toBe(true);
  });

  it('changing immutable fields (StorageClass parameters, VolumeAttachment spec, PV source) -> Invalid', () => {
    const store = createObjectStore();
    const sc = store.create('storageclasses', { apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name: 'sc' }, provisioner: 'p', parameters: { type: 'gp3' } });
    expect(isInvalid(thrown(() => store.update('storageclasses', { ...sc, parameters: { type: 'io2' } })))).toBe(true);
    store.create('volumeattachments', {
      apiVersion: 'storage.k8s.io/v1',
      kind: 'VolumeAttachment',
      metadata: { name: 'va' },
      spec: { attacher: 'a', nodeName: 'n1', source: { persistentVolumeName: 'pv' } },
    });
    expect(isInvalid(thrown(() => store.patch('volumeattachments', 'va', undefined, 'merge', { spec: { nodeName: 'n2' } })))).toBe(true);
    store.create('persistentvolumes', {
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: { name: 'pv' },
      spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], csi: { driver: 'd', volumeHandle: 'vol-1' } },
    });
    expect(isInvalid(thrown(() => store.patch('persistentvolumes', 'pv', undefined, 'merge', { spec: { csi: { volumeHandle: 'vol-2' } } })))).toBe(true);
    const bound = store.patch('persistentvolumes', 'pv', undefined, 'merge', { spec: { claimRef: { namespace: 'default', name: 'c' } } });
    expect((bound.spec as { claimRef: { name: string } }).claimRef.name).toBe('c');
  });

  it('PVC spec change other than size or first volumeName -> Invalid; binding sets volumeName once', () => {
    const store = createObjectStore();
    store.create('persistentvolumeclaims', claim('bind'));
    // Binding only: growing a claim not yet Bound is refused, as kube-apiserver does (claim-resize.test.ts).
    store.patch('persistentvolumeclaims', 'bind', 'default', 'merge', { spec: { volumeName: 'pv-1' } });
    expect(isInvalid(thrown(() => store.patch('persistentvolumeclaims', 'bind', 'default', 'merge', { spec: { volumeName: 'pv-2' } })))).toBe(true);
    expect(isInvalid(thrown(() => store.patch('persistentvolumeclaims', 'bind', 'default', 'merge', { spec: { accessModes: ['ReadWriteMany'] } })))).toBe(true);
  });

  it('patch that sets a stale resourceVersion -> Conflict (a precondition, as on the server)', () => {
    const store = createObjectStore();
    const created = store.create('persistentvolumeclaims', claim('pre'));
    store.patch('persistentvolumeclaims', 'pre', 'default', 'merge', { metadata: { labels: { a: '1' } } });
    const err = thrown(() => store.patch('persistentvolumeclaims', 'pre', 'default', 'merge', { metadata: { resourceVersion: created.metadata.resourceVersion, labels: { a: '2' } } }));
    expect(isConflict(err)).toBe(true);
  });

  it('storageObjectInUseProtection -> PVCs and PVs get their protection finalizers on create', () => {
    const store = createObjectStore({ storageObjectInUseProtection: true });
    expect(store.create('persistentvolumeclaims', claim('p')).metadata.finalizers).toEqual(['kubernetes.io/pvc-protection']);
  });
});

describe('object store inputs', () => {
  it('in-process object with Date values and undefined fields -> stored as it would arrive over HTTP', () => {
    const store = createObjectStore();
    const created = store.create('events', {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: 'e1', namespace: 'default', labels: undefined },
      involvedObject: { kind: 'PersistentVolumeClaim', name: 'c', namespace: 'default' },
      reason: 'R',
      message: 'm',
      type: 'Normal',
      firstTimestamp: new Date('2024-01-02T03:04:05Z'),
    });
    expect(created.firstTimestamp).toBe('2024-01-02T03:04:05.000Z');
    expect(created.lastTimestamp).toBe('2024-01-02T03:04:05.000Z');
    expect('labels' in created.metadata).toBe(false);
  });
});
