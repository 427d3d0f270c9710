/**
 * The forwarder's own API calls (lib/forwarder/kube/clients.ts over node:http) against the
 * local Kubernetes API: every write of the contract applied through them leaves the cluster
 * exactly as client-node's calls leave it (the same writes, two stores, compared), and API
 * errors carry what `isApiError` reads.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Annotations, Finalizers, SnapshotAnnotations, SnapshotFinalizers, SourceFinalizers, type Write } from '../../lib/contract/index.js';
import { accessFromKubeConfig } from '../../lib/forwarder/kube/access.js';
import { restClients, restLeaseApi } from '../../lib/forwarder/kube/clients.js';
import { kubeRest, KubeApiError } from '../../lib/forwarder/kube/rest.js';
import { VOLHOOK_VERSION } from '../../lib/contract/version.js';
import { applyWrites, EventCorrelator, isApiError, type KubeClients } from '../../lib/kube/index.js';
import { startKube, type KubeHarness } from '../kube/harness.js';
import type { KubeObject } from '../../lib/local/kube/index.js';
import { createPv, pvcObject, snapshotContentObject, vaObject } from '../kube/fixtures.js';

let lean: KubeHarness;
let reference: KubeHarness;

beforeAll(async () => {
  [lean, reference] = await Promise.all([startKube(), startKube()]);
});
afterAll(async () => {
  await Promise.all([lean?.close(), reference?.close()]);
});

const restFor = (kube: KubeHarness) => kubeRest(accessFromKubeConfig(kube.kubeConfig));

/** Every write kind, through every call the writes make, in one cluster. */
async function applyEveryWrite(kube: KubeHarness, clients: KubeClients): Promise<void> {
  const correlator = new EventCorrelator();
  await applyWrites(clients, [createPv('pvc-w')], { eventCorrelator: correlator });
  const pv = kube.store.get('persistentvolumes', 'pvc-w')!;
  const pvc = kube.store.create('persistentvolumeclaims', pvcObject('w', 'default', { [Annotations.selectedNode]: 'n1', keep: 'me' }));
  const va = kube.store.create('volumeattachments', vaObject('csi-w', 'pvc-w'));
  const event: Write = {
    op: 'createEvent',
    involvedObject: { kind: 'PersistentVolumeClaim', apiVersion: 'v1', name: 'w', namespace: 'default', uid: pvc.metadata.uid },
    type: 'Warning',
    reason: 'ProvisioningFailed',
    message: 'failed to provision volume',
  };
  await applyWrites(
    clients,
    [
      { op: 'addFinalizer', target: { kind: 'PersistentVolume', name: 'pvc-w' }, finalizer: Finalizers.provisioner },
      { op: 'addFinalizer', target: { kind: 'PersistentVolumeClaim', name: 'w', namespace: 'default' }, finalizer: 'example.com/x' },
      { op: 'addFinalizer', target: { kind: 'VolumeAttachment', name: 'csi-w' }, finalizer: Finalizers.attacher('ebs.csi.aws.com') },
      { op: 'updateVolumeAttachmentStatus', name: 'csi-w', uid: va.metadata.uid, status: { attached: false, attachError: { message: 'no', time: '2026-12-01T00:00:00Z' } } },
      // A merge patch: null clears the error, the rest stays.
      { op: 'updateVolumeAttachmentStatus', name: 'csi-w', uid: va.metadata.uid, status: { attached: true, attachError: null } },
      { op: 'removePvcAnnotation', namespace: 'default', name: 'w', uid: pvc.metadata.uid, annotation: Annotations.selectedNode },
      { op: 'setAnnotation', target: { kind: 'PersistentVolume', name: 'pvc-w', uid: pv.metadata.uid }, key: 'example.com/set', value: 'v' },
      // The second bumps the count of the first (a merge patch of the Event).
      event,
      event,
      { op: 'patchPersistentVolume', name: 'pvc-w', uid: pv.metadata.uid, capacity: '40Gi', volumeAttributesClassName: 'fast' },
      { op: 'removeFinalizer', target: { kind: 'PersistentVolume', name: 'pvc-w' }, finalizer: Finalizers.provisioner },
    ],
    { eventCorrelator: correlator },
  );
  await applyWrites(clients, [
    {
      op: 'patchPersistentVolumeClaimStatus',
      name: 'w',
      namespace: 'default',
      uid: pvc.metadata.uid,
      resourceVersion: kube.store.get('persistentvolumeclaims', 'w', 'default')!.metadata.resourceVersion!,
      status: { allocatedResources: { storage: '40Gi' }, allocatedResourceStatuses: { storage: 'ControllerResizeInProgress' } },
    },
  ]);
  const content = kube.store.create('volumesnapshotcontents' as never, snapshotContentObject('snapcontent-w', 'w') as never) as { metadata: { uid: string } };
  const contentRef = { kind: 'VolumeSnapshotContent' as const, name: 'snapcontent-w', uid: content.metadata.uid };
  await applyWrites(clients, [
    { op: 'setAnnotation', target: contentRef, key: SnapshotAnnotations.beingCreated, value: 'yes' },
    { op: 'addFinalizer', target: contentRef, finalizer: SnapshotFinalizers.contentBound },
    { op: 'updateVolumeSnapshotContentStatus', name: 'snapcontent-w', uid: content.metadata.uid, status: { snapshotHandle: 'snap-0123456789abcdef0', readyToUse: true, restoreSize: 2 ** 30 } },
    { op: 'removeAnnotation', target: contentRef, key: SnapshotAnnotations.beingCreated },
  ]);
  // A restore's source protection on its VolumeSnapshot (namespaced): added, and one other finalizer kept.
  const snapshot = kube.store.create('volumesnapshots' as never, {
    apiVersion: 'snapshot.storage.k8s.io/v1',
    kind: 'VolumeSnapshot',
    metadata: { name: 'snap-w', namespace: 'default', finalizers: ['example.com/keep'] },
    spec: { source: { persistentVolumeClaimName: 'w' } },
  } as never) as { metadata: { uid: string } };
  const snapshotRef = { kind: 'VolumeSnapshot' as const, name: 'snap-w', namespace: 'default', uid: snapshot.metadata.uid };
  await applyWrites(clients, [
    { op: 'addFinalizer', target: snapshotRef, finalizer: SourceFinalizers.snapshot },
    { op: 'addFinalizer', target: snapshotRef, finalizer: 'example.com/other' },
    { op: 'removeFinalizer', target: snapshotRef, finalizer: 'example.com/other' },
  ]);
  // A PV of ours, and its deletion guarded by uid.
  await applyWrites(clients, [createPv('pvc-gone')]);
  const gone = kube.store.get('persistentvolumes', 'pvc-gone')!;
  await applyWrites(clients, [{ op: 'deletePersistentVolume', name: 'pvc-gone', uid: gone.metadata.uid! }]);
}

/**
 * An object as both clusters should hold it: what the server generates (uids, versions, times,
 * names of Events) left out, and managedFields (whose managers are each client's User-Agent:
 * writes of one manager merge into one entry).
 */
function comparable(object: unknown): unknown {
  return JSON.parse(JSON.stringify(object), (key, value: unknown) =>
    key === 'managedFields' ? '*' : ['uid', 'resourceVersion', 'creationTimestamp', 'lastPhaseTransitionTime', 'firstTimestamp', 'lastTimestamp', 'time', 'generation', 'name', 'reportingInstance'].includes(key) && typeof value !== 'object' ? '*' : value,
  );
}

describe('the forwarder’s API calls over node:http', () => {
  it('every write of the contract, applied through them -> the cluster as client-node’s calls leave it', async () => {
    await applyEveryWrite(lean, restClients(restFor(lean)));
    await applyEveryWrite(reference, reference.clients);
    for (const resource of ['persistentvolumes', 'persistentvolumeclaims', 'volumeattachments', 'events', 'volumesnapshotcontents', 'volumesnapshots'] as const) {
      const objects = (kube: KubeHarness) => kube.store.list(resource as never).items.map(comparable);
      expect(objects(lean), resource).toEqual(objects(reference));
    }
    // What the writes did, so that two equal failures could not pass.
    expect(lean.store.get('persistentvolumes', 'pvc-w')!.spec).toMatchObject({ capacity: { storage: '40Gi' }, volumeAttributesClassName: 'fast' });
    expect(lean.store.get('persistentvolumes', 'pvc-gone')).toBeUndefined();
    expect(lean.store.get('volumeattachments', 'csi-w')!.status).toEqual({ attached: true });
    expect(lean.store.list('events' as never).items).toMatchObject([{ reason: 'ProvisioningFailed', count: 2 }]);
    expect(lean.store.get('persistentvolumeclaims', 'w', 'default')!.metadata.annotations).toEqual({ keep: 'me' });
    expect(lean.store.get('volumesnapshots' as never, 'snap-w', 'default')!.metadata.finalizers).toEqual(['example.com/keep', SourceFinalizers.snapshot]);
    // Each patch with its own media type: the server tells JSON patches from merge patches.
    const patches = lean.requests.filter((r) => r.method === 'PATCH');
    expect(patches.length).toBeGreaterThan(8);
    expect(patches.every((r) => r.status === 200)).toBe(true);
  });

  it('their writes name the forwarder (User-Agent volhook-forwarder/<version>): managedFields show manager volhook-forwarder for what it wrote', async () => {
    const kube = await startKube();
    try {
      const clients = restClients(restFor(kube));
      await applyWrites(clients, [createPv('pvc-m')]);
      const pv = kube.store.get('persistentvolumes', 'pvc-m')!;
      // Created by someone else; the forwarder's later patch is recorded under its name.
      const va = kube.store.create('volumeattachments', vaObject('csi-m', 'pvc-m'), { fieldManager: 'kube-controller-manager' });
      await applyWrites(clients, [
        { op: 'setAnnotation', target: { kind: 'PersistentVolume', name: 'pvc-m', uid: pv.metadata.uid }, key: 'example.com/set', value: 'v' },
        { op: 'addFinalizer', target: { kind: 'VolumeAttachment', name: 'csi-m' }, finalizer: Finalizers.attacher('ebs.csi.aws.com') },
        { op: 'updateVolumeAttachmentStatus', name: 'csi-m', uid: va.metadata.uid, status: { attached: true } },
      ]);
      expect(kube.requests.length).toBeGreaterThan(3);
      expect(new Set(kube.requests.map((r) => r.userAgent))).toEqual(new Set([`volhook-forwarder/${VOLHOOK_VERSION}`]));
      const managers = (o: KubeObject) => (((o.metadata as { managedFields?: unknown }).managedFields ?? []) as Array<{ manager: string; subresource?: string }>).map((m) => `${m.manager}${m.subresource ? `/${m.subresource}` : ''}`);
      expect(managers(kube.store.get('persistentvolumes', 'pvc-m')!)).toEqual(['volhook-forwarder']);
      expect(managers(kube.store.get('volumeattachments', 'csi-m')!).sort()).toEqual(['kube-controller-manager', 'volhook-forwarder', 'volhook-forwarder/status']);
    } finally {
      await kube.close();
    }
  });

  it('an API error -> KubeApiError with the status code and the server’s Status, as isApiError reads them', async () => {
    const clients = restClients(restFor(lean));
    const err = await clients.core.readPersistentVolume({ name: 'no-such-pv' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KubeApiError);
    expect(isApiError(err, 404)).toBe(true);
    expect((err as KubeApiError).body).toMatchObject({ kind: 'Status', reason: 'NotFound' });
    expect((err as Error).message).toMatch(/GET \/api\/v1\/persistentvolumes\/no-such-pv: HTTP 404/);
  });

  it('the Lease calls: create, read, a PUT at a stale resourceVersion -> 409', async () => {
    lean.store.create('namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'lease-ns' } });
    const api = restLeaseApi(restFor(lean));
    const created = await api.createNamespacedLease({ namespace: 'lease-ns', body: { metadata: { name: 'l', namespace: 'lease-ns' }, spec: { holderIdentity: 'a', leaseDurationSeconds: 15 } } });
    expect(created.spec?.holderIdentity).toBe('a');
    const read = await api.readNamespacedLease({ name: 'l', namespace: 'lease-ns' });
    await api.replaceNamespacedLease({ name: 'l', namespace: 'lease-ns', body: { ...read, spec: { ...read.spec, holderIdentity: 'b' } } });
    const stale = await api.replaceNamespacedLease({ name: 'l', namespace: 'lease-ns', body: { ...read, spec: { ...read.spec, holderIdentity: 'c' } } }).catch((e: unknown) => e);
    expect(isApiError(stale, 409)).toBe(true);
    expect(lean.store.get('leases', 'l', 'lease-ns')?.spec).toMatchObject({ holderIdentity: 'b' });
  });
});
