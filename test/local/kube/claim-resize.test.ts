/**
 * What kube-apiserver v1.36 refuses of a claim's size and defaults in a VolumeAttachment, as the
 * simulated API now does too (found by the e2e scenarios on the real plane, docs/divergences.md).
 */
import { describe, expect, it } from 'vitest';
import { createObjectStore, isInvalid, reasonOf } from '../../../lib/local/kube/index.js';

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  throw new Error('expected a throw');
}

function storeWithBoundClaim(allowVolumeExpansion: boolean | undefined) {
  const store = createObjectStore();
  store.create('namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'apps' } });
  store.create('storageclasses', {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: { name: 'sc' },
    provisioner: 'ebs.csi.aws.com',
    ...(allowVolumeExpansion !== undefined && { allowVolumeExpansion }),
  });
  store.create('persistentvolumeclaims', {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name: 'data', namespace: 'apps' },
    spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'sc', resources: { requests: { storage: '4Gi' } } },
  });
  return store;
}

const bind = (store: ReturnType<typeof createObjectStore>) => {
  store.patch('persistentvolumeclaims', 'data', 'apps', 'merge', { spec: { volumeName: 'pv-data' } });
  store.patch('persistentvolumeclaims', 'data', 'apps', 'merge', { status: { phase: 'Bound', capacity: { storage: '4Gi' } } }, { subresource: 'status' });
};
const resize = (store: ReturnType<typeof createObjectStore>, storage: string) =>
  store.patch('persistentvolumeclaims', 'data', 'apps', 'merge', { spec: { resources: { requests: { storage } } } });

describe('a claim resized through the simulated API, as kube-apiserver judges it', () => {
  it('shrunk below status.capacity -> Invalid naming spec.resources.requests.storage; grown (the class allows it) -> stored', () => {
    const store = storeWithBoundClaim(true);
    bind(store);
    const err = thrown(() => resize(store, '2Gi'));
    expect(isInvalid(err)).toBe(true);
    expect(String((err as Error).message)).toContain('spec.resources.requests.storage: Forbidden: field can not be less than status.capacity');
    expect(resize(store, '8Gi').spec).toMatchObject({ resources: { requests: { storage: '8Gi' } } });
    // Recovering from a failed expansion: down again, not below the capacity.
    expect(resize(store, '6Gi').spec).toMatchObject({ resources: { requests: { storage: '6Gi' } } });
  });

  it('grown on a class without allowVolumeExpansion -> Forbidden by the resize admission; false alike; the same on a class with it -> stored', () => {
    for (const allow of [undefined, false]) {
      const store = storeWithBoundClaim(allow);
      bind(store);
      const err = thrown(() => resize(store, '8Gi'));
      expect(reasonOf(err)).toBe('Forbidden');
      expect(String((err as Error).message)).toBe('persistentvolumeclaims "data" is forbidden: only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize');
    }
    const store = storeWithBoundClaim(true);
    bind(store);
    expect(resize(store, '8Gi').spec).toMatchObject({ resources: { requests: { storage: '8Gi' } } });
  });

  it('grown while Pending -> Invalid (validation, before the admission): spec immutable but for bound claims', () => {
    const store = storeWithBoundClaim(true);
    const err = thrown(() => resize(store, '8Gi'));
    expect(isInvalid(err)).toBe(true);
    expect(String((err as Error).message)).toContain('except resources.requests and volumeAttributesClassName for bound claims');
  });
});

describe('VolumeAttachment defaults', () => {
  it("an inline volume's PersistentVolumeSpec -> volumeMode Filesystem; a PV source -> untouched", () => {
    const store = createObjectStore();
    const inline = store.create('volumeattachments', {
      apiVersion: 'storage.k8s.io/v1',
      kind: 'VolumeAttachment',
      metadata: { name: 'inline' },
      spec: { attacher: 'ebs.csi.aws.com', nodeName: 'n1', source: { inlineVolumeSpec: { csi: { driver: 'ebs.csi.aws.com', volumeHandle: 'vol-1' }, accessModes: ['ReadWriteOnce'] } } },
    });
    expect((inline.spec as { source: { inlineVolumeSpec: { volumeMode?: string } } }).source.inlineVolumeSpec.volumeMode).toBe('Filesystem');
    const fromPv = store.create('volumeattachments', {
      apiVersion: 'storage.k8s.io/v1',
      kind: 'VolumeAttachment',
      metadata: { name: 'pv' },
      spec: { attacher: 'ebs.csi.aws.com', nodeName: 'n1', source: { persistentVolumeName: 'pv-1' } },
    });
    expect(fromPv.spec).toEqual({ attacher: 'ebs.csi.aws.com', nodeName: 'n1', source: { persistentVolumeName: 'pv-1' } });
  });
});
