/** applyWrites' resize writes (lib/kube/resize-writes.ts) against the local Kubernetes API. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Write } from '../../lib/contract/index.js';
import { applyWrites } from '../../lib/kube/index.js';
import { startKube, type KubeHarness } from './harness.js';
import { createPv, pvcObject } from './fixtures.js';

let kube: KubeHarness;
beforeAll(async () => {
  kube = await startKube();
});
afterAll(async () => {
  await kube.close();
});

type Pv = { metadata: { uid: string; resourceVersion: string }; spec: { capacity: { storage: string }; volumeAttributesClassName?: string } };
type Pvc = { metadata: { uid: string; resourceVersion: string }; status?: Record<string, unknown> };
const pv = (name: string) => kube.store.get('persistentvolumes', name) as unknown as Pv;
const pvc = (name: string) => kube.store.get('persistentvolumeclaims', name, 'default') as unknown as Pvc;

describe('patchPersistentVolume', () => {
  it('grows the capacity and sets the class; applied again -> unchanged; a smaller capacity -> not applied', async () => {
    await applyWrites(kube.clients, [createPv('pvc-grow')]);
    const { uid } = pv('pvc-grow').metadata;
    const grow: Write = { op: 'patchPersistentVolume', name: 'pvc-grow', uid, capacity: '40Gi', volumeAttributesClassName: 'fast' };
    await applyWrites(kube.clients, [grow]);
    const rv = pv('pvc-grow').metadata.resourceVersion;
    await applyWrites(kube.clients, [grow]);
    expect(pv('pvc-grow').metadata.resourceVersion).toBe(rv);
    expect(pv('pvc-grow').spec).toMatchObject({ capacity: { storage: '40Gi' }, volumeAttributesClassName: 'fast' });
    await applyWrites(kube.clients, [{ op: 'patchPersistentVolume', name: 'pvc-grow', uid, capacity: '20Gi' }]);
    expect(pv('pvc-grow').spec.capacity.storage).toBe('40Gi');
  });

  it('a namesake (other uid) -> untouched', async () => {
    await applyWrites(kube.clients, [createPv('pvc-namesake')]);
    await applyWrites(kube.clients, [{ op: 'patchPersistentVolume', name: 'pvc-namesake', uid: 'another-incarnation', capacity: '99Gi' }]);
    expect(pv('pvc-namesake').spec.capacity.storage).toBe('20Gi');
  });
});

describe('patchPersistentVolumeClaimStatus', () => {
  it('the version it was decided from -> fields set, null removes one; through /status only', async () => {
    kube.store.create('persistentvolumeclaims', pvcObject('status-ok'));
    const claim = pvc('status-ok');
    await applyWrites(kube.clients, [
      {
        op: 'patchPersistentVolumeClaimStatus',
        name: 'status-ok',
        namespace: 'default',
        uid: claim.metadata.uid,
        resourceVersion: claim.metadata.resourceVersion,
        status: { allocatedResources: { storage: '40Gi' }, allocatedResourceStatuses: { storage: 'ControllerResizeInProgress' } },
      },
    ]);
    const after = pvc('status-ok');
    expect(after.status).toMatchObject({ allocatedResources: { storage: '40Gi' }, allocatedResourceStatuses: { storage: 'ControllerResizeInProgress' } });
    await applyWrites(kube.clients, [
      { op: 'patchPersistentVolumeClaimStatus', name: 'status-ok', namespace: 'default', uid: after.metadata.uid, resourceVersion: after.metadata.resourceVersion, status: { allocatedResourceStatuses: null } },
    ]);
    expect(pvc('status-ok').status?.allocatedResourceStatuses).toBeUndefined();
    expect(kube.requests.some((r) => r.method === 'PATCH' && r.url.includes('/persistentvolumeclaims/status-ok/status'))).toBe(true);
  });

  it('the claim changed since the decision (another resourceVersion) -> left as it is, no error', async () => {
    kube.store.create('persistentvolumeclaims', pvcObject('status-stale'));
    const stale = pvc('status-stale');
    const current = kube.store.get('persistentvolumeclaims', 'status-stale', 'default')!;
    kube.store.update('persistentvolumeclaims', { ...current, metadata: { ...current.metadata, labels: { changed: 'yes' } } });
    await applyWrites(kube.clients, [
      {
        op: 'patchPersistentVolumeClaimStatus',
        name: 'status-stale',
        namespace: 'default',
        uid: stale.metadata.uid,
        resourceVersion: stale.metadata.resourceVersion,
        status: { allocatedResourceStatuses: { storage: 'NodeResizePending' } },
      },
    ]);
    expect(pvc('status-stale').status?.allocatedResourceStatuses).toBeUndefined();
  });
});
