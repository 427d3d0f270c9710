/**
 * The controllers together over the real local store, as `npm start` runs them. The test
 * plays the external provisioner and attacher (volhook's part) by hand.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { attachmentName, startControllers } from '../../../lib/local/controllers/index.js';
import type { PersistentVolume, PersistentVolumeClaim, Pod, RunningController } from '../../../lib/local/controllers/index.js';
import { createObjectStore } from '../../../lib/local/kube/index.js';
import type { KubeObject, LocalObjectStore } from '../../../lib/local/kube/index.js';
import { claim, forCreate, node, pod, storageClass, volume } from './fixtures.js';

const DRIVER = 'ebs.csi.aws.com';
const SELECTED = 'volume.kubernetes.io/selected-node';

let store: LocalObjectStore;
let controllers: RunningController;
let errors: unknown[];

beforeEach(() => {
  store = createObjectStore();
  errors = [];
  controllers = startControllers(store, { resyncIntervalMs: 50, onError: (error) => errors.push(error) });
});

afterEach(async () => {
  await controllers.stop();
  expect(errors).toEqual([]);
});

/** Polls until `read` returns something truthy (the controllers run on timers). */
async function until<T>(read: () => T | undefined | null | false, what: string, timeoutMs = 3000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = read();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const getClaim = (name: string) => store.get('persistentvolumeclaims', name, 'default') as PersistentVolumeClaim | undefined;
const getVolume = (name: string) => store.get('persistentvolumes', name) as PersistentVolume | undefined;
const getPod = (name: string) => store.get('pods', name, 'default') as Pod | undefined;
const eventsFor = (object: KubeObject, reason: string) =>
  store.list('events').items.filter(
    (e) => (e.involvedObject as { uid?: string }).uid === object.metadata.uid && e.reason === reason,
  );

/** What volhook's backend writes for a claim: PV `pvc-<uid>`, pre-bound, in `zone` when given. */
function provision(c: PersistentVolumeClaim, zone?: string): PersistentVolume {
  const v = volume(`pvc-${c.metadata.uid}`, {
    className: c.spec.storageClassName ?? '',
    storage: '10Gi',
    claimRef: { name: c.metadata.name, uid: c.metadata.uid },
    reclaimPolicy: 'Delete',
    annotations: { 'pv.kubernetes.io/provisioned-by': DRIVER },
    zone,
    volumeHandle: 'vol-0123456789abcdef0',
  });
  return store.create('persistentvolumes', forCreate(v)) as PersistentVolume;
}

describe('PV controller over the store', () => {
  it('static PV and a claim that fits -> bound both ways, protection finalizers on both', async () => {
    store.create('persistentvolumes', forCreate(volume('pv1', { className: 'manual', storage: '20Gi' })));
    store.create('persistentvolumeclaims', forCreate(claim('data', { className: 'manual', storage: '5Gi' })));

    const bound = await until(() => getClaim('data')?.status?.phase === 'Bound' && getClaim('data'), 'claim Bound');
    expect(bound.spec.volumeName).toBe('pv1');
    expect(bound.metadata.finalizers).toEqual(['kubernetes.io/pvc-protection']);
    const pv = await until(() => getVolume('pv1')?.status?.phase === 'Bound' && getVolume('pv1'), 'PV Bound');
    expect(pv.spec.claimRef).toMatchObject({ name: 'data', uid: bound.metadata.uid });
    expect(pv.metadata.finalizers).toEqual(['kubernetes.io/pv-protection']);
  });

  it('class with a provisioner -> annotated, one ExternalProvisioning event across resyncs, then the provisioned PV binds', async () => {
    store.create('storageclasses', forCreate(storageClass('gp3')));
    const created = store.create('persistentvolumeclaims', forCreate(claim('data', { className: 'gp3' }))) as PersistentVolumeClaim;

    await until(() => getClaim('data')?.metadata.annotations?.['volume.kubernetes.io/storage-provisioner'] === DRIVER, 'provisioner annotation');
    await sleep(250);
    expect(eventsFor(created, 'ExternalProvisioning')).toHaveLength(1);

    provision(getClaim('data')!);
    const bound = await until(() => getClaim('data')?.status?.phase === 'Bound' && getClaim('data'), 'claim Bound');
    expect(bound.spec.volumeName).toBe(`pvc-${created.metadata.uid}`);
    expect(getVolume(bound.spec.volumeName!)?.metadata.annotations?.['pv.kubernetes.io/bound-by-controller']).toBeUndefined();
  });

  it('claim deleted -> its Delete PV provisioned by volhook is Released and left for the provisioner', async () => {
    store.create('storageclasses', forCreate(storageClass('gp3')));
    const c = store.create('persistentvolumeclaims', forCreate(claim('data', { className: 'gp3' }))) as PersistentVolumeClaim;
    const pv = provision(c);
    await until(() => getClaim('data')?.status?.phase === 'Bound', 'claim Bound');

    store.delete('persistentvolumeclaims', 'data', 'default');
    await until(() => !getClaim('data'), 'claim gone (pvc-protection released, no pod uses it)');
    await until(() => getVolume(pv.metadata.name)?.status?.phase === 'Released', 'PV Released');
    await sleep(150);
    expect(getVolume(pv.metadata.name)?.status?.phase).toBe('Released');
  });

  it('claim without class created before the default class -> the default is filled in later', async () => {
    store.create('persistentvolumeclaims', forCreate(claim('data')));
    await sleep(60);
    expect(getClaim('data')?.spec.storageClassName).toBeUndefined();
    store.create('storageclasses', forCreate(storageClass('standard', { isDefault: true })));
    await until(() => getClaim('data')?.spec.storageClassName === 'standard', 'default class assigned');
  });

  it('bound PV removed behind the controller’s back -> claim Lost with a ClaimLost warning', async () => {
    store.create('persistentvolumes', forCreate(volume('pv1', { className: 'manual' })));
    const c = store.create('persistentvolumeclaims', forCreate(claim('data', { className: 'manual' })));
    await until(() => getVolume('pv1')?.status?.phase === 'Bound' && getVolume('pv1')?.metadata.finalizers?.length, 'PV Bound');

    const pv = getVolume('pv1')!;
    store.update('persistentvolumes', { ...pv, metadata: { ...pv.metadata, finalizers: [] } });
    store.delete('persistentvolumes', 'pv1');
    await until(() => getClaim('data')?.status?.phase === 'Lost', 'claim Lost');
    expect(eventsFor(c, 'ClaimLost')).toHaveLength(1);
  });

  it('claim deleted while a running pod mounts it -> kept until the pod is gone', async () => {
    store.create('nodes', forCreate(node('node-a')));
    store.create('persistentvolumes', forCreate(volume('pv1', { className: 'manual', driver: 'other.csi' })));
    store.create('persistentvolumeclaims', forCreate(claim('data', { className: 'manual' })));
    store.create('pods', forCreate(pod('app', { claims: ['data'] })));
    await until(() => getPod('app')?.status?.phase === 'Running', 'pod Running');

    store.delete('persistentvolumeclaims', 'data', 'default');
    await sleep(150);
    expect(getClaim('data')?.metadata.deletionTimestamp).toBeDefined();
    store.delete('pods', 'app', 'default');
    await until(() => !getClaim('data'), 'claim gone');
  });
});

describe('scheduler, attach/detach controller and kubelet over the store', () => {
  beforeEach(() => {
    store.create('nodes', forCreate(node('node-a', { zone: 'us-east-1a' })));
    store.create('nodes', forCreate(node('node-b', { zone: 'us-east-1b' })));
    store.create('nodes', forCreate(node('node-c', { zone: 'us-east-1b' })));
    store.create('storageclasses', forCreate(storageClass('wffc', { waitForFirstConsumer: true, zones: ['us-east-1b'] })));
  });

  it('WaitForFirstConsumer pod -> node selected in the allowed zone, provisioned, placed, attached, Running; deleted -> detach requested', async () => {
    store.create('persistentvolumeclaims', forCreate(claim('data', { className: 'wffc' })));
    store.create('pods', forCreate(pod('app', { claims: ['data'] })));

    const selected = await until(() => getClaim('data')?.metadata.annotations?.[SELECTED], 'selected-node');
    expect(['node-b', 'node-c']).toContain(selected);
    await until(() => getClaim('data')?.metadata.annotations?.['volume.kubernetes.io/storage-provisioner'], 'provisioning requested');
    expect(getPod('app')?.spec?.nodeName).toBeUndefined();

    const pv = provision(getClaim('data')!, 'us-east-1b');
    const placed = await until(() => getPod('app')?.spec?.nodeName, 'pod placed');
    expect(placed).toBe(selected);

    const vaName = attachmentName('vol-0123456789abcdef0', DRIVER, selected);
    const va = await until(() => store.get('volumeattachments', vaName), 'VolumeAttachment created');
    expect(va.spec).toEqual({ attacher: DRIVER, nodeName: selected, source: { persistentVolumeName: pv.metadata.name } });
    await sleep(100);
    expect(getPod('app')?.status?.phase).toBe('Pending');

    // The attacher's part: finalizer, then attached.
    const withFinalizer = store.update('volumeattachments', {
      ...va,
      metadata: { ...va.metadata, finalizers: ['external-attacher/ebs-csi-aws-com'] },
    });
    store.updateStatus('volumeattachments', { ...withFinalizer, status: { attached: true } });
    await until(() => getPod('app')?.status?.phase === 'Running', 'pod Running');
    // Each component's writes are recorded under the manager its User-Agent names in a real
    // cluster; the test's own writes name none (`unknown`).
    const managers = (o: KubeObject | undefined) => [...new Set(((o?.metadata.managedFields ?? []) as Array<{ manager: string }>).map((m) => m.manager))].sort();
    expect(managers(store.get('volumeattachments', vaName))).toEqual(['kube-controller-manager', 'unknown']);
    expect(managers(getPod('app'))).toEqual(['kube-scheduler', 'kubelet', 'unknown']);
    // The scheduler writes the selected-node annotation, as kube-scheduler does.
    expect(managers(getClaim('data'))).toEqual(['kube-controller-manager', 'kube-scheduler', 'unknown']);

    store.delete('pods', 'app', 'default');
    await until(() => store.get('volumeattachments', vaName)?.metadata.deletionTimestamp, 'VolumeAttachment deleted');
  });

  it('selected-node removed by the provisioner after the node was cordoned -> another node in the zone is selected', async () => {
    store.create('persistentvolumeclaims', forCreate(claim('data', { className: 'wffc' })));
    store.create('pods', forCreate(pod('app', { claims: ['data'] })));
    const first = await until(() => getClaim('data')?.metadata.annotations?.[SELECTED], 'selected-node');

    const cordoned = store.get('nodes', first)!;
    store.update('nodes', { ...cordoned, spec: { ...(cordoned.spec as object), unschedulable: true } });
    const c = getClaim('data')!;
    const annotations = { ...c.metadata.annotations };
    delete annotations[SELECTED];
    store.update('persistentvolumeclaims', { ...c, metadata: { ...c.metadata, annotations } });

    const second = await until(() => getClaim('data')?.metadata.annotations?.[SELECTED], 'selected-node again');
    expect(second).not.toBe(first);
    expect(['node-b', 'node-c']).toContain(second);
  });

  it('a burst of WaitForFirstConsumer pods -> spread over the nodes, none past its CSINode volume limit', async () => {
    for (const name of ['node-b', 'node-c']) {
      store.create('csinodes', {
        apiVersion: 'storage.k8s.io/v1',
        kind: 'CSINode',
        metadata: { name },
        spec: { drivers: [{ name: DRIVER, nodeID: `i-${name}`, allocatable: { count: 3 } }] },
      });
    }
    const names = Array.from({ length: 6 }, (_, i) => `data-${i}`);
    for (const name of names) {
      store.create('persistentvolumeclaims', forCreate(claim(name, { className: 'wffc' })));
      store.create('pods', forCreate(pod(`app-${name}`, { claims: [name] })));
    }
    const selected = await until(() => {
      const all = names.map((n) => getClaim(n)?.metadata.annotations?.[SELECTED]);
      return all.every(Boolean) && all;
    }, 'every claim given a node');
    expect(selected.filter((n) => n === 'node-b')).toHaveLength(3);
    expect(selected.filter((n) => n === 'node-c')).toHaveLength(3);
  });

  it('no node in the allowed zone -> one FailedScheduling warning, pod stays unplaced', async () => {
    store.create('storageclasses', forCreate(storageClass('zone-z', { waitForFirstConsumer: true, zones: ['us-east-1z'] })));
    store.create('persistentvolumeclaims', forCreate(claim('data', { className: 'zone-z' })));
    const p = store.create('pods', forCreate(pod('app', { claims: ['data'] })));
    await until(() => eventsFor(p, 'FailedScheduling').length > 0, 'FailedScheduling');
    await sleep(150);
    expect(eventsFor(p, 'FailedScheduling')).toHaveLength(1);
    expect(getPod('app')?.spec?.nodeName).toBeUndefined();
  });
});

describe('startControllers', () => {
  it('stopped -> no more writes', async () => {
    await controllers.stop();
    store.create('persistentvolumeclaims', forCreate(claim('late', { className: '' })));
    await sleep(100);
    expect(getClaim('late')?.metadata.finalizers).toBeUndefined();
  });
});
