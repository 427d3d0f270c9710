import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CoreV1Api } from '@kubernetes/client-node';
import { Annotations, Finalizers, type Write } from '../../lib/contract/index.js';
import { applyWrites, EventCorrelator, isApiError, kubeClientsFromConfig, WriteError, type KubeClients } from '../../lib/kube/index.js';
import { startKube, type KubeHarness } from './harness.js';
import { createPv, pvcObject, vaObject } from './fixtures.js';

let kube: KubeHarness;
beforeAll(async () => {
  kube = await startKube();
});
afterAll(async () => {
  await kube.close();
});

/** Applies `writes` twice: every write must be idempotent. */
async function applyTwice(writes: Write[], clients: KubeClients = kube.clients) {
  await applyWrites(clients, writes);
  await applyWrites(clients, writes);
}

const pv = (name: string) => kube.store.get('persistentvolumes', name);

describe('createPersistentVolume', () => {
  it('PV absent -> created once; applied again -> AlreadyExists is success', async () => {
    await applyTwice([createPv('pvc-create')]);
    const created = pv('pvc-create');
    expect(created?.metadata.annotations?.[Annotations.provisionedBy]).toBe('ebs.csi.aws.com');
    expect((created as unknown as { spec: { csi: { volumeHandle: string } } }).spec.csi.volumeHandle).toBe('vol-0123456789abcdef0');
  });
});

describe('deletePersistentVolume', () => {
  it('uid matches -> deleted; applied again (404) -> success', async () => {
    await applyWrites(kube.clients, [createPv('pvc-delete')]);
    const uid = pv('pvc-delete')!.metadata.uid;
    await applyTwice([{ op: 'deletePersistentVolume', name: 'pvc-delete', uid }]);
    expect(pv('pvc-delete')).toBeUndefined();
  });

  it('uid differs (a namesake) -> the PV is left alone, no error', async () => {
    await applyWrites(kube.clients, [createPv('pvc-namesake')]);
    await applyTwice([{ op: 'deletePersistentVolume', name: 'pvc-namesake', uid: 'some-older-incarnation' }]);
    expect(pv('pvc-namesake')).toBeDefined();
    expect(pv('pvc-namesake')?.metadata.deletionTimestamp).toBeUndefined();
  });
});

describe('addFinalizer / removeFinalizer', () => {
  it('PV, PVC and VolumeAttachment -> finalizer added once, then removed, twice each', async () => {
    await applyWrites(kube.clients, [createPv('pvc-fin')]);
    kube.store.create('persistentvolumeclaims', pvcObject('fin-claim'));
    kube.store.create('volumeattachments', vaObject('csi-fin', 'pvc-fin'));
    const targets = [
      { kind: 'PersistentVolume', name: 'pvc-fin' },
      { kind: 'PersistentVolumeClaim', name: 'fin-claim', namespace: 'default' },
      { kind: 'VolumeAttachment', name: 'csi-fin' },
    ] as const;
    const get = (t: (typeof targets)[number]) =>
      kube.store.get(
        ({ PersistentVolume: 'persistentvolumes', PersistentVolumeClaim: 'persistentvolumeclaims', VolumeAttachment: 'volumeattachments' } as const)[t.kind],
        t.name,
        'namespace' in t ? t.namespace : undefined,
      )!;
    const finalizer = Finalizers.attacher('ebs.csi.aws.com');
    for (const target of targets) {
      await applyTwice([{ op: 'addFinalizer', target: { ...target }, finalizer }]);
      expect(get(target).metadata.finalizers).toEqual([finalizer]);
      await applyTwice([{ op: 'removeFinalizer', target: { ...target }, finalizer }]);
      expect(get(target).metadata.finalizers ?? []).toEqual([]);
    }
  });

  it('other finalizers present -> only ours is added and removed', async () => {
    await applyWrites(kube.clients, [createPv('pvc-fin-others')]);
    kube.store.patch('persistentvolumes', 'pvc-fin-others', undefined, 'merge', { metadata: { finalizers: ['kubernetes.io/pv-protection'] } });
    const target = { kind: 'PersistentVolume', name: 'pvc-fin-others' } as const;
    await applyTwice([{ op: 'addFinalizer', target, finalizer: Finalizers.provisioner }]);
    expect(pv('pvc-fin-others')?.metadata.finalizers).toEqual(['kubernetes.io/pv-protection', Finalizers.provisioner]);
    await applyTwice([{ op: 'removeFinalizer', target, finalizer: Finalizers.provisioner }]);
    expect(pv('pvc-fin-others')?.metadata.finalizers).toEqual(['kubernetes.io/pv-protection']);
  });

  it('target uid differs -> the namesake is not touched', async () => {
    await applyWrites(kube.clients, [createPv('pvc-fin-uid')]);
    await applyWrites(kube.clients, [
      { op: 'addFinalizer', target: { kind: 'PersistentVolume', name: 'pvc-fin-uid', uid: 'not-this-one' }, finalizer: Finalizers.provisioner },
    ]);
    expect(pv('pvc-fin-uid')?.metadata.finalizers).toBeUndefined();
  });

  it('object gone -> add and remove are both success', async () => {
    const target = { kind: 'PersistentVolume', name: 'pvc-never-existed' } as const;
    await expect(
      applyTwice([
        { op: 'addFinalizer', target, finalizer: Finalizers.provisioner },
        { op: 'removeFinalizer', target, finalizer: Finalizers.provisioner },
      ]),
    ).resolves.toBeUndefined();
    // Success means nothing was done: no object was made to carry the finalizer.
    expect(pv('pvc-never-existed')).toBeUndefined();
  });

  it('another writer changes the finalizers between our read and our patch -> test fails, we re-read, both survive', async () => {
    await applyWrites(kube.clients, [createPv('pvc-race')]);
    kube.store.patch('persistentvolumes', 'pvc-race', undefined, 'merge', { metadata: { finalizers: ['kubernetes.io/pv-protection'] } });
    let interfered = 0;
    // The other writer strikes right after each of our first two reads (list present, then absent).
    const core = new Proxy(kube.clients.core, {
      get(target, prop, receiver) {
        if (prop === 'readPersistentVolume') {
          return async (param: { name: string }) => {
            const read = await target.readPersistentVolume(param);
            if (interfered === 0) kube.store.patch('persistentvolumes', 'pvc-race', undefined, 'merge', { metadata: { finalizers: ['kubernetes.io/pv-protection', 'other.example.com/a'] } });
            if (interfered === 1) kube.store.patch('persistentvolumes', 'pvc-race', undefined, 'merge', { metadata: { finalizers: ['kubernetes.io/pv-protection', 'other.example.com/a', 'other.example.com/b'] } });
            interfered++;
            return read;
          };
        }
        return Reflect.get(target, prop, receiver) as unknown;
      },
    }) as CoreV1Api;
    await applyWrites({ ...kube.clients, core }, [
      { op: 'addFinalizer', target: { kind: 'PersistentVolume', name: 'pvc-race' }, finalizer: Finalizers.provisioner },
    ]);
    expect(interfered).toBe(3); // two lost races, then a clean read and patch
    expect(pv('pvc-race')?.metadata.finalizers).toEqual([
      'kubernetes.io/pv-protection',
      'other.example.com/a',
      'other.example.com/b',
      Finalizers.provisioner,
    ]);
  });

  it('ten writers add and remove finalizers on one PV at once -> no update is lost', async () => {
    await applyWrites(kube.clients, [createPv('pvc-many')]);
    kube.store.patch('persistentvolumes', 'pvc-many', undefined, 'merge', { metadata: { finalizers: ['keep.example.com/0', 'drop.example.com/0'] } });
    const target = { kind: 'PersistentVolume', name: 'pvc-many' } as const;
    await Promise.all([
      ...Array.from({ length: 10 }, (_, i) =>
        applyWrites(kube.clients, [{ op: 'addFinalizer', target, finalizer: `added.example.com/${i}` }], { conflictRetries: 20 }),
      ),
      applyWrites(kube.clients, [{ op: 'removeFinalizer', target, finalizer: 'drop.example.com/0' }], { conflictRetries: 20 }),
    ]);
    const finalizers = pv('pvc-many')?.metadata.finalizers ?? [];
    expect([...finalizers].sort()).toEqual(['keep.example.com/0', ...Array.from({ length: 10 }, (_, i) => `added.example.com/${i}`)].sort());
  });
});

describe('updateVolumeAttachmentStatus', () => {
  it('VA present -> status written through /status, twice; a null clears a field', async () => {
    const va = kube.store.create('volumeattachments', vaObject('csi-status', 'pvc-x'));
    kube.store.patch('volumeattachments', 'csi-status', undefined, 'merge', { status: { attached: false, attachError: { time: '2024-01-01T00:00:00Z', message: 'boom' } } }, { subresource: 'status' });
    await applyTwice([
      {
        op: 'updateVolumeAttachmentStatus',
        name: 'csi-status',
        uid: va.metadata.uid,
        status: { attached: true, attachmentMetadata: { devicePath: '/dev/xvdaa' }, attachError: null },
      },
    ]);
    const status = kube.store.get('volumeattachments', 'csi-status')?.status;
    expect(status).toEqual({ attached: true, attachmentMetadata: { devicePath: '/dev/xvdaa' } });
    expect(kube.requests.some((r) => r.method === 'PATCH' && r.url.startsWith('/apis/storage.k8s.io/v1/volumeattachments/csi-status/status'))).toBe(true);
  });

  it('VA gone -> success; uid differs -> the namesake is not touched', async () => {
    await applyTwice([{ op: 'updateVolumeAttachmentStatus', name: 'csi-gone', status: { attached: true } }]);
    kube.store.create('volumeattachments', vaObject('csi-namesake', 'pvc-x'));
    await applyWrites(kube.clients, [{ op: 'updateVolumeAttachmentStatus', name: 'csi-namesake', uid: 'other', status: { attached: true } }]);
    expect(kube.store.get('volumeattachments', 'csi-namesake')?.status).toEqual({ attached: false });
  });
});

describe('removePvcAnnotation', () => {
  it('annotation with a "/" present -> removed, others kept; applied again -> success', async () => {
    const pvc = kube.store.create('persistentvolumeclaims', pvcObject('annotated', 'default', { [Annotations.selectedNode]: 'node-1', keep: 'me' }));
    await applyTwice([{ op: 'removePvcAnnotation', namespace: 'default', name: 'annotated', uid: pvc.metadata.uid, annotation: Annotations.selectedNode }]);
    expect(kube.store.get('persistentvolumeclaims', 'annotated', 'default')?.metadata.annotations).toEqual({ keep: 'me' });
  });

  it('uid differs -> the namesake keeps its annotation; PVC gone -> success', async () => {
    kube.store.create('persistentvolumeclaims', pvcObject('annotated-2', 'default', { [Annotations.selectedNode]: 'node-1' }));
    await applyWrites(kube.clients, [
      { op: 'removePvcAnnotation', namespace: 'default', name: 'annotated-2', uid: 'older', annotation: Annotations.selectedNode },
      { op: 'removePvcAnnotation', namespace: 'default', name: 'no-such-claim', annotation: Annotations.selectedNode },
    ]);
    expect(kube.store.get('persistentvolumeclaims', 'annotated-2', 'default')?.metadata.annotations).toEqual({ [Annotations.selectedNode]: 'node-1' });
  });
});

describe('setAnnotation', () => {
  const nodeId = (name: string) => kube.store.get('volumeattachments', name)?.metadata.annotations?.[Annotations.attachedNodeId];

  it('VolumeAttachment without annotations -> set; applied again -> success, unchanged', async () => {
    const va = kube.store.create('volumeattachments', vaObject('va-annotate', 'pvc-a'));
    const write: Write = { op: 'setAnnotation', target: { kind: 'VolumeAttachment', name: 'va-annotate', uid: va.metadata.uid }, key: Annotations.attachedNodeId, value: 'i-0aaaaaaaaaaaaaaa1' };
    await applyTwice([write]);
    expect(nodeId('va-annotate')).toBe('i-0aaaaaaaaaaaaaaa1');
  });

  it('other annotations present, key with a "/" -> added beside them; a new value replaces the old', async () => {
    const created = vaObject('va-annotate-2', 'pvc-a');
    const va = kube.store.create('volumeattachments', { ...created, metadata: { ...created.metadata, annotations: { keep: 'me', [Annotations.attachedNodeId]: 'i-0old' } } });
    const target = { kind: 'VolumeAttachment' as const, name: 'va-annotate-2', uid: va.metadata.uid };
    await applyTwice([{ op: 'setAnnotation', target, key: Annotations.attachedNodeId, value: 'i-0new' }]);
    expect(kube.store.get('volumeattachments', 'va-annotate-2')?.metadata.annotations).toEqual({ keep: 'me', [Annotations.attachedNodeId]: 'i-0new' });
  });

  it('uid differs -> the namesake is untouched; object gone -> success', async () => {
    kube.store.create('volumeattachments', vaObject('va-annotate-3', 'pvc-a'));
    await applyWrites(kube.clients, [
      { op: 'setAnnotation', target: { kind: 'VolumeAttachment', name: 'va-annotate-3', uid: 'older' }, key: Annotations.attachedNodeId, value: 'i-0x' },
      { op: 'setAnnotation', target: { kind: 'VolumeAttachment', name: 'no-such-va', uid: 'u' }, key: Annotations.attachedNodeId, value: 'i-0x' },
    ]);
    expect(nodeId('va-annotate-3')).toBeUndefined();
    expect(kube.store.get('volumeattachments', 'no-such-va')).toBeUndefined();
  });
});

describe('createEvent', () => {
  const event = (message: string, namespace?: string): Write => ({
    op: 'createEvent',
    involvedObject: { kind: 'PersistentVolumeClaim', apiVersion: 'v1', name: 'evt-claim', uid: 'evt-uid', ...(namespace ? { namespace } : {}) },
    type: 'Warning',
    reason: 'ProvisioningFailed',
    message,
  });
  const eventsOf = (name: string) =>
    kube.store.list('events').items.filter((e) => (e as { involvedObject?: { name?: string } }).involvedObject?.name === name) as unknown as {
      metadata: { name: string; namespace: string };
      count: number;
      message: string;
      reason: string;
      type: string;
      source: { component: string };
      reportingComponent: string;
      firstTimestamp: string;
      lastTimestamp: string;
      involvedObject: { kind: string; name: string; namespace?: string; uid?: string };
    }[];

  it('the same event three times -> one Event with count 3; another message -> a second Event', async () => {
    // Fresh clients each time, as the backend makes them for writeBack: direct: still counted.
    const clients = () => kubeClientsFromConfig(kube.kubeConfig);
    await applyWrites(clients(), [event('invalid parameter "iops"', 'default')], { component: 'volhook-test' });
    await applyWrites(clients(), [event('invalid parameter "iops"', 'default')], { component: 'volhook-test' });
    await applyWrites(clients(), [event('invalid parameter "iops"', 'default')], { component: 'volhook-test' });
    await applyWrites(clients(), [event('another problem', 'default')], { component: 'volhook-test' });
    const events = eventsOf('evt-claim');
    expect(events).toHaveLength(2);
    const repeated = events.find((e) => e.message === 'invalid parameter "iops"')!;
    expect(repeated).toMatchObject({
      count: 3,
      reason: 'ProvisioningFailed',
      type: 'Warning',
      source: { component: 'volhook-test' },
      reportingComponent: 'volhook-test',
      involvedObject: { kind: 'PersistentVolumeClaim', name: 'evt-claim', namespace: 'default', uid: 'evt-uid' },
      metadata: { namespace: 'default' },
    });
    expect(repeated.metadata.name).toMatch(/^evt-claim\.[0-9a-f]+$/);
    expect(Date.parse(repeated.lastTimestamp)).toBeGreaterThanOrEqual(Date.parse(repeated.firstTimestamp));
    expect(events.find((e) => e.message === 'another problem')?.count).toBe(1);
  });

  it('a repeat after the window, or after the Event expired -> a new Event', async () => {
    let now = Date.parse('2030-01-01T00:00:00Z');
    const eventCorrelator = new EventCorrelator({ windowMs: 60_000, now: () => now });
    const write: Write = { ...event('late'), involvedObject: { kind: 'PersistentVolume', apiVersion: 'v1', name: 'evt-pv' } } as Write;
    await applyWrites(kube.clients, [write], { eventCorrelator });
    now += 120_000;
    await applyWrites(kube.clients, [write], { eventCorrelator });
    expect(eventsOf('evt-pv').map((e) => e.count)).toEqual([1, 1]);
    expect(eventsOf('evt-pv')[0]?.metadata.namespace).toBe('default'); // cluster-scoped objects: events in default
    for (const e of eventsOf('evt-pv')) kube.store.delete('events', e.metadata.name, 'default');
    await applyWrites(kube.clients, [write], { eventCorrelator }); // correlated, but the Event is gone
    expect(eventsOf('evt-pv').map((e) => e.count)).toEqual([1]);
  });

  it('correlator over its bound -> the least recently seen is forgotten', () => {
    const correlator = new EventCorrelator({ maxEntries: 2 });
    correlator.remember('a', { name: 'a.1', namespace: 'default', count: 1 });
    correlator.remember('b', { name: 'b.1', namespace: 'default', count: 1 });
    correlator.recent('a');
    correlator.remember('c', { name: 'c.1', namespace: 'default', count: 1 });
    expect(correlator.size).toBe(2);
    expect(correlator.recent('b')).toBeUndefined();
    expect(correlator.recent('a')?.name).toBe('a.1');
  });
});

describe('failures', () => {
  it('a write fails -> WriteError names it, later writes are not applied', async () => {
    const bad: Write = { op: 'createPersistentVolume', pv: { ...createPvBody('Bad_Name') } };
    const error = await applyWrites(kube.clients, [bad, createPv('pvc-after-failure')]).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(WriteError);
    expect((error as WriteError).index).toBe(0);
    expect(isApiError((error as WriteError).cause, 422)).toBe(true);
    expect((error as WriteError).message).toContain('createPersistentVolume PersistentVolume/Bad_Name');
    expect(pv('pvc-after-failure')).toBeUndefined();
  });
});

function createPvBody(name: string) {
  return (createPv(name) as Extract<Write, { op: 'createPersistentVolume' }>).pv;
}
