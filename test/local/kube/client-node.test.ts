import {
  CoordinationV1Api,
  CoreV1Api,
  KubernetesObjectApi,
  PatchStrategy,
  StorageV1Api,
  Watch,
  makeInformer,
  setHeaderOptions,
  type KubernetesObject,
  type V1PersistentVolumeClaim,
} from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { failure, pvc, startHarness, type Harness } from './helpers.js';

const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const strategic = setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch);
const jsonPatch = setHeaderOptions('Content-Type', PatchStrategy.JsonPatch);

let h: Harness;
let core: CoreV1Api;
let storage: StorageV1Api;

beforeAll(async () => {
  h = await startHarness();
  core = h.kc.makeApiClient(CoreV1Api);
  storage = h.kc.makeApiClient(StorageV1Api);
});
afterAll(() => h.server.close());

const ns = 'default';

/** One valid object of every served kind. */
const samples: KubernetesObject[] = [
  { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a' } },
  { apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-a', labels: { 'topology.kubernetes.io/zone': 'eu-west-1a' } } },
  { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'app', namespace: ns }, spec: { containers: [{ name: 'app', image: 'busybox:1.36' }] } } as KubernetesObject,
  {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name: 'pv-a' },
    spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], csi: { driver: 'ebs.csi.aws.com', volumeHandle: 'vol-1' } },
  } as KubernetesObject,
  pvc('claim-a') as KubernetesObject,
  {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: 'claim-a.1', namespace: ns },
    involvedObject: { kind: 'PersistentVolumeClaim', name: 'claim-a', namespace: ns },
    reason: 'Provisioning',
    message: 'External provisioner is provisioning volume for claim default/claim-a',
    type: 'Normal',
  } as KubernetesObject,
  { apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name: 'sc-a' }, provisioner: 'ebs.csi.aws.com' } as KubernetesObject,
  {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'VolumeAttachment',
    metadata: { name: 'csi-a' },
    spec: { attacher: 'ebs.csi.aws.com', nodeName: 'node-a', source: { persistentVolumeName: 'pv-a' } },
  } as KubernetesObject,
  { apiVersion: 'storage.k8s.io/v1', kind: 'CSINode', metadata: { name: 'node-a' }, spec: { drivers: [{ name: 'ebs.csi.aws.com', nodeID: 'i-1' }] } } as KubernetesObject,
  { apiVersion: 'storage.k8s.io/v1', kind: 'CSIDriver', metadata: { name: 'ebs.csi.aws.com' }, spec: { attachRequired: true } } as KubernetesObject,
  { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'lock-a', namespace: ns }, spec: { holderIdentity: 'a', leaseDurationSeconds: 15 } } as KubernetesObject,
];

describe('local Kubernetes API through @kubernetes/client-node', () => {
  it('each kind: create, read, list, replace, delete via discovery -> round trips at the right scope', async () => {
    const client = KubernetesObjectApi.makeApiClient(h.kc);
    for (const sample of samples) {
      const created = await client.create(sample);
      expect(created.metadata?.uid, sample.kind).toMatch(/^[0-9a-f-]{36}$/);
      const namespaced = sample.metadata?.namespace !== undefined;
      expect(created.metadata?.namespace, sample.kind).toBe(namespaced ? ns : undefined);

      const read = await client.read({ apiVersion: sample.apiVersion as string, kind: sample.kind as string, metadata: { name: sample.metadata?.name as string, namespace: sample.metadata?.namespace as string } });
      expect(read.metadata?.resourceVersion).toBe(created.metadata?.resourceVersion);

      const listed = await client.list(sample.apiVersion as string, sample.kind as string, sample.metadata?.namespace);
      expect(listed.items.map((i) => i.metadata?.name), sample.kind).toContain(sample.metadata?.name);

      const replaced = await client.replace({ ...read, metadata: { ...read.metadata, labels: { ...read.metadata?.labels, touched: 'yes' } } });
      expect(replaced.metadata?.labels?.touched, sample.kind).toBe('yes');
      expect(Number(replaced.metadata?.resourceVersion)).toBeGreaterThan(Number(created.metadata?.resourceVersion));
    }
    for (const sample of [...samples].reverse()) {
      await client.delete(sample);
      const gone = await failure(client.read({ apiVersion: sample.apiVersion as string, kind: sample.kind as string, metadata: { name: sample.metadata?.name as string, namespace: sample.metadata?.namespace as string } }));
      expect(gone.code, sample.kind).toBe(404);
    }
  });

  it('create -> uid, resourceVersion, creationTimestamp, generateName and API defaults are filled in', async () => {
    const claim = await core.createNamespacedPersistentVolumeClaim({ namespace: ns, body: { ...pvc(''), metadata: { generateName: 'data-' } } });
    expect(claim.metadata?.name).toMatch(/^data-[a-z0-9]{5}$/);
    expect(claim.metadata?.resourceVersion).toMatch(/^\d+$/);
    expect(claim.metadata?.creationTimestamp).toBeInstanceOf(Date);
    expect(claim.spec?.volumeMode).toBe('Filesystem');
    expect(claim.status?.phase).toBe('Pending');

    const pv = await core.createPersistentVolume({
      body: { metadata: { name: 'pv-defaults' }, spec: { capacity: { storage: '5Gi' }, accessModes: ['ReadWriteOnce'], csi: { driver: 'ebs.csi.aws.com', volumeHandle: 'vol-2' } } },
    });
    expect(pv.spec?.persistentVolumeReclaimPolicy).toBe('Retain');
    expect(pv.status?.phase).toBe('Pending');

    const sc = await storage.createStorageClass({ body: { metadata: { name: 'sc-defaults' }, provisioner: 'ebs.csi.aws.com' } });
    expect(sc.reclaimPolicy).toBe('Delete');
    expect(sc.volumeBindingMode).toBe('Immediate');
  });

  it('create of an existing name -> 409 AlreadyExists; without a name -> 422 Invalid', async () => {
    await core.createNamespacedPersistentVolumeClaim({ namespace: ns, body: pvc('twice') });
    expect(await failure(core.createNamespacedPersistentVolumeClaim({ namespace: ns, body: pvc('twice') }))).toMatchObject({
      code: 409,
      reason: 'AlreadyExists',
      message: 'persistentvolumeclaims "twice" already exists',
    });
    expect(await failure(core.createNamespacedPersistentVolumeClaim({ namespace: ns, body: pvc('') }))).toMatchObject({
      code: 422,
      reason: 'Invalid',
      message: expect.stringContaining('metadata.name: Required value'),
    });
  });

  it('replace with a stale resourceVersion -> 409 Conflict; without one -> unconditional', async () => {
    const first = await core.createNamespacedPersistentVolumeClaim({ namespace: ns, body: pvc('stale') });
    await core.replaceNamespacedPersistentVolumeClaim({ name: 'stale', namespace: ns, body: { ...first, metadata: { ...first.metadata, labels: { v: '2' } } } });
    const conflict = await failure(core.replaceNamespacedPersistentVolumeClaim({ name: 'stale', namespace: ns, body: { ...first, metadata: { ...first.metadata, labels: { v: 'lost' } } } }));
    expect(conflict).toMatchObject({ code: 409, reason: 'Conflict' });

    const blind = { ...first, metadata: { ...first.metadata, resourceVersion: undefined, labels: { v: '3' } } };
    const replaced = await core.replaceNamespacedPersistentVolumeClaim({ name: 'stale', namespace: ns, body: blind });
    expect(replaced.metadata?.labels).toEqual({ v: '3' });
  });

  it('merge patch -> maps merge and null deletes a key', async () => {
    await core.createNamespacedPersistentVolumeClaim({ namespace: ns, body: pvc('merged', { labels: { a: '1', b: '2' } }) });
    const patched = await core.patchNamespacedPersistentVolumeClaim({ name: 'merged', namespace: ns, body: { metadata: { labels: { b: null, c: '3' } } } }, merge);
    expect(patched.metadata?.labels).toEqual({ a: '1', c: '3' });
  });

  it('JSON patch guarded by test -> applied when it holds, 422 Invalid and no change when it fails', async () => {
    const created = await core.createNamespacedPersistentVolumeClaim({ namespace: ns, body: pvc('guarded', { finalizers: ['example.com/a'] }) });
    const rv = created.metadata?.resourceVersion;
    const ok = await core.patchNamespacedPersistentVolumeClaim(
      { name: 'guarded', namespace: ns, body: [{ op: 'test', path: '/metadata/finalizers', value: ['example.com/a'] }, { op: 'add', path: '/metadata/finalizers/-', value: 'example.com/b' }] },
      jsonPatch,
    );
    expect(ok.metadata?.finalizers).toEqual(['example.com/a', 'example.com/b']);

    const failed = await failure(
      core.patchNamespacedPersistentVolumeClaim(
        { name: 'guarded', namespace: ns, body: [{ op: 'test', path: '/metadata/resourceVersion', value: rv }, { op: 'remove', path: '/metadata/finalizers' }] },
        jsonPatch,
      ),
    );
    expect(failed).toEqual({ code: 422, reason: 'Invalid', message: 'the server rejected our request due to an error in our request' });
    const after = await core.readNamespacedPersistentVolumeClaim({ name: 'guarded', namespace: ns });
    expect(after.metadata?.finalizers).toEqual(['example.com/a', 'example.com/b']);
  });

  it('strategic merge patch -> containers merge by name, finalizers merge as a set, $patch delete removes', async () => {
    await core.createNamespacedPod({
      namespace: ns,
      body: { metadata: { name: 'smp', finalizers: ['example.com/a'] }, spec: { containers: [{ name: 'app', image: 'app:1' }, { name: 'side', image: 'side:1' }] } },
    });
    const patched = await core.patchNamespacedPod(
      {
        name: 'smp',
        namespace: ns,
        body: {
          metadata: { finalizers: ['example.com/b'] },
          spec: { containers: [{ name: 'app', image: 'app:2' }, { name: 'side', $patch: 'delete' }, { name: 'new', image: 'new:1' }] },
        },
      },
      strategic,
    );
    expect(patched.spec?.containers.map((c) => `${c.name}=${c.image}`)).toEqual(['app=app:2', 'new=new:1']);
    expect(patched.metadata?.finalizers).toEqual(['example.com/a', 'example.com/b']);

    const removed = await core.patchNamespacedPod({ name: 'smp', namespace: ns, body: { metadata: { '$deleteFromPrimitiveList/finalizers': ['example.com/a'] } } }, strategic);
    expect(removed.metadata?.finalizers).toEqual(['example.com/b']);
  });

  it('delete with a finalizer -> Terminating; removing the finalizer -> gone, and a watcher sees DELETED', async () => {
    const created = await core.createNamespacedPersistentVolumeClaim({ namespace: ns, body: pvc('final', { finalizers: ['example.com/hold'] }) });
    const events: string[] = [];
    const watch = await new Watch(h.kc).watch(
      `/api/v1/namespaces/${ns}/persistentvolumeclaims`,
      { resourceVersion: created.metadata?.resourceVersion, fieldSelector: 'metadata.name=final' },
      (type, object: V1PersistentVolumeClaim) => events.push(`${type}:${object.metadata?.deletionTimestamp ? 'terminating' : 'live'}`),
      () => undefined,
    );
    try {
      const deleting = await core.deleteNamespacedPersistentVolumeClaim({ name: 'final', namespace: ns });
      expect(deleting.metadata?.deletionTimestamp).toBeInstanceOf(Date);
      const still = await core.readNamespacedPersistentVolumeClaim({ name: 'final', namespace: ns });
      expect(still.metadata?.finalizers).toEqual(['example.com/hold']);

      await core.patchNamespacedPersistentVolumeClaim({ name: 'final', namespace: ns, body: { metadata: { finalizers: null } } }, merge);
      expect((await failure(core.readNamespacedPersistentVolumeClaim({ name: 'final', namespace: ns }))).code).toBe(404);
      await vi.waitFor(() => expect(events).toEqual(['MODIFIED:terminating', 'DELETED:terminating']));
    } finally {
      watch.abort();
    }
  });

  it('adding a finalizer to an object being deleted -> 422 Invalid', async () => {
    await core.createNamespacedPersistentVolumeClaim({ namespace: ns, body: pvc('closing', { finalizers: ['example.com/a'] }) });
    await core.deleteNamespacedPersistentVolumeClaim({ name: 'closing', namespace: ns });
    const refused = await failure(core.patchNamespacedPersistentVolumeClaim({ name: 'closing', namespace: ns, body: { metadata: { finalizers: ['example.com/a', 'example.com/late'] } } }, merge));
    expect(refused).toMatchObject({ code: 422, reason: 'Invalid', message: expect.stringContaining('no new finalizers can be added') });
  });

  it('delete with a mismatched uid precondition -> 409 Conflict and the object stays', async () => {
    await core.createPersistentVolume({
      body: { metadata: { name: 'pv-precondition' }, spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], csi: { driver: 'ebs.csi.aws.com', volumeHandle: 'vol-3' } } },
    });
    const refused = await failure(core.deletePersistentVolume({ name: 'pv-precondition', body: { preconditions: { uid: '00000000-0000-0000-0000-000000000000' } } }));
    expect(refused).toMatchObject({ code: 409, reason: 'Conflict', message: expect.stringContaining('Precondition failed: UID in precondition') });
    const kept = await core.readPersistentVolume({ name: 'pv-precondition' });
    await core.deletePersistentVolume({ name: 'pv-precondition', body: { preconditions: { uid: kept.metadata?.uid } } });
    expect((await failure(core.readPersistentVolume({ name: 'pv-precondition' }))).code).toBe(404);
  });

  it('status subresource -> /status changes only status; the main endpoint ignores status', async () => {
    const created = await core.createNamespacedPersistentVolumeClaim({ namespace: ns, body: pvc('status') });
    const viaMain = await core.replaceNamespacedPersistentVolumeClaim({
      name: 'status',
      namespace: ns,
      body: { ...created, metadata: { ...created.metadata, labels: { main: 'yes' } }, status: { phase: 'Bound' } },
    });
    expect(viaMain.status?.phase).toBe('Pending');
    expect(viaMain.metadata?.labels).toEqual({ main: 'yes' });

    const viaStatus = await core.replaceNamespacedPersistentVolumeClaimStatus({
      name: 'status',
      namespace: ns,
      body: { ...viaMain, metadata: { ...viaMain.metadata, labels: { ignored: 'yes' } }, status: { phase: 'Bound', capacity: { storage: '1Gi' } } },
    });
    expect(viaStatus.status?.phase).toBe('Bound');
    expect(viaStatus.metadata?.labels).toEqual({ main: 'yes' });

    await storage.createVolumeAttachment({ body: { metadata: { name: 'csi-status' }, spec: { attacher: 'ebs.csi.aws.com', nodeName: 'n', source: { persistentVolumeName: 'p' } } } });
    const attached = await storage.patchVolumeAttachmentStatus(
      { name: 'csi-status', body: { status: { attached: true, attachmentMetadata: { devicePath: '/dev/xvdaa' } }, spec: { nodeName: 'other' } } },
      merge,
    );
    expect(attached.status).toEqual({ attached: true, attachmentMetadata: { devicePath: '/dev/xvdaa' } });
    expect(attached.spec.nodeName).toBe('n');
  });

  it('label selectors (=, !=, in, notin, exists, !key) -> only matching objects listed', async () => {
    await core.createNamespace({ body: { metadata: { name: 'labels' } } });
    const make = (name: string, labels: Record<string, string>) =>
      core.createNamespacedPersistentVolumeClaim({ namespace: 'labels', body: { ...pvc(name, { labels }), metadata: { name, namespace: 'labels', labels } } });
    await make('l1', { tier: 'db', env: 'prod' });
    await make('l2', { tier: 'web', env: 'dev' });
    await make('l3', { tier: 'cache' });
    const names = async (labelSelector: string) =>
      (await core.listNamespacedPersistentVolumeClaim({ namespace: 'labels', labelSelector })).items.map((i) => i.metadata?.name);
    expect(await names('tier=db')).toEqual(['l1']);
    expect(await names('tier!=db')).toEqual(['l2', 'l3']);
    expect(await names('tier in (db, web),env')).toEqual(['l1', 'l2']);
    expect(await names('tier notin (db),!env')).toEqual(['l3']);
    expect((await failure(names('tier in db'))).code).toBe(400);
  });

  it('list with limit -> pages chained by continue tokens cover every object exactly once', async () => {
    await core.createNamespace({ body: { metadata: { name: 'paged' } } });
    for (const name of ['p1', 'p2', 'p3', 'p4', 'p5']) {
      await core.createNamespacedPersistentVolumeClaim({ namespace: 'paged', body: { ...pvc(name), metadata: { name, namespace: 'paged' } } });
    }
    const names: string[] = [];
    let token: string | undefined;
    let pages = 0;
    do {
      const page = await core.listNamespacedPersistentVolumeClaim({ namespace: 'paged', limit: 2, _continue: token });
      names.push(...page.items.map((i) => i.metadata?.name as string));
      token = page.metadata?._continue;
      pages++;
    } while (token);
    expect(pages).toBe(3);
    expect(names).toEqual(['p1', 'p2', 'p3', 'p4', 'p5']);
  });

  it('field selectors -> pods by spec.nodeName and status.phase across namespaces; unsupported field -> 400', async () => {
    await core.createNamespace({ body: { metadata: { name: 'fields' } } });
    await core.createNamespacedPod({ namespace: 'fields', body: { metadata: { name: 'on-a' }, spec: { nodeName: 'node-a', containers: [{ name: 'c', image: 'i' }] } } });
    await core.createNamespacedPod({ namespace: ns, body: { metadata: { name: 'on-b' }, spec: { nodeName: 'node-b', containers: [{ name: 'c', image: 'i' }] } } });
    const byNode = await core.listPodForAllNamespaces({ fieldSelector: 'spec.nodeName=node-a,status.phase=Pending' });
    expect(byNode.items.map((p) => `${p.metadata?.namespace}/${p.metadata?.name}`)).toEqual(['fields/on-a']);
    const notA = await core.listPodForAllNamespaces({ fieldSelector: 'spec.nodeName!=node-a,metadata.namespace=default' });
    expect(notA.items.map((p) => p.metadata?.name)).toContain('on-b');
    expect(notA.items.map((p) => p.metadata?.name)).not.toContain('on-a');
    expect(await failure(core.listPodForAllNamespaces({ fieldSelector: 'spec.bogus=x' }))).toMatchObject({
      code: 400,
      reason: 'BadRequest',
      message: 'field label not supported: spec.bogus',
    });
  });
});

describe('informers', () => {
  it('informer -> sees add, update and delete', async () => {
    await core.createNamespace({ body: { metadata: { name: 'informed' } } });
    const informer = makeInformer(h.kc, '/api/v1/namespaces/informed/persistentvolumeclaims', () => core.listNamespacedPersistentVolumeClaim({ namespace: 'informed' }));
    const seen: string[] = [];
    informer.on('add', (o) => seen.push(`add:${o.metadata?.name}`));
    informer.on('update', (o) => seen.push(`update:${o.metadata?.name}:${o.metadata?.labels?.v}`));
    informer.on('delete', (o) => seen.push(`delete:${o.metadata?.name}`));
    await informer.start();
    try {
      const body = { ...pvc('watched'), metadata: { name: 'watched', namespace: 'informed' } };
      await core.createNamespacedPersistentVolumeClaim({ namespace: 'informed', body });
      await vi.waitFor(() => expect(seen).toContain('add:watched'));
      await core.patchNamespacedPersistentVolumeClaim({ name: 'watched', namespace: 'informed', body: { metadata: { labels: { v: '2' } } } }, merge);
      await vi.waitFor(() => expect(seen).toContain('update:watched:2'));
      await core.deleteNamespacedPersistentVolumeClaim({ name: 'watched', namespace: 'informed' });
      await vi.waitFor(() => expect(seen).toEqual(['add:watched', 'update:watched:2', 'delete:watched']));
      expect(informer.list('informed')).toEqual([]);
    } finally {
      await informer.stop();
    }
  });

  it('informer whose resourceVersion fell out of the history -> relists after 410 and keeps working', async () => {
    // Two changes of history and watches that end every 200 ms: each re-watch resumes from
    // the last PVC event, which the unrelated writes below push out of the window.
    const small = await startHarness({ historyLimit: 2 }, { watchTimeoutSeconds: 0.2 });
    const smallCore = small.kc.makeApiClient(CoreV1Api);
    let lists = 0;
    const errors: unknown[] = [];
    const informer = makeInformer(small.kc, '/api/v1/namespaces/default/persistentvolumeclaims', () => {
      lists++;
      return smallCore.listNamespacedPersistentVolumeClaim({ namespace: ns });
    });
    const added: string[] = [];
    informer.on('add', (o) => added.push(o.metadata?.name as string));
    informer.on('error', (err) => errors.push(err));
    await informer.start();
    try {
      await smallCore.createNamespacedPersistentVolumeClaim({ namespace: ns, body: pvc('before') });
      await vi.waitFor(() => expect(added).toEqual(['before']));
      for (let i = 0; i < 4; i++) await smallCore.createNamespace({ body: { metadata: { name: `filler-${i}` } } });
      await vi.waitFor(() => expect(lists).toBeGreaterThanOrEqual(2), { timeout: 3000 });

      await smallCore.createNamespacedPersistentVolumeClaim({ namespace: ns, body: pvc('after') });
      await vi.waitFor(() => expect(added).toEqual(['before', 'after']));
      expect(errors).toEqual([]);
    } finally {
      await informer.stop();
      await small.server.close();
    }
  });

  it('watch from a compacted resourceVersion -> one ERROR event with a 410 Expired Status, then the stream ends', async () => {
    const small = await startHarness({ historyLimit: 1 });
    try {
      const rv = small.store.resourceVersion;
      small.store.create('namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'x1' } });
      small.store.create('namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'x2' } });
      const events: { type: string; object: { code?: number; reason?: string } }[] = [];
      const ended = new Promise<unknown>((resolve) => {
        void new Watch(small.kc).watch('/api/v1/namespaces', { resourceVersion: Number(rv) - 1 }, (type, object) => events.push({ type, object }), resolve);
      });
      expect(await ended).toBeNull();
      expect(events).toEqual([{ type: 'ERROR', object: expect.objectContaining({ kind: 'Status', code: 410, reason: 'Expired' }) }]);
    } finally {
      await small.server.close();
    }
  });

  it('watch with timeoutSeconds -> the server ends the stream', async () => {
    const started = Date.now();
    const ended = new Promise<unknown>((resolve) => {
      void new Watch(h.kc).watch('/apis/storage.k8s.io/v1/storageclasses', { timeoutSeconds: 1 }, () => undefined, resolve);
    });
    expect(await ended).toBeNull();
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
  });
});

describe('Leases (leader election) through CoordinationV1Api', () => {
  it('a PUT with the resourceVersion read -> 200; a second PUT with that same, now stale, version -> 409 Conflict', async () => {
    const leases = h.kc.makeApiClient(CoordinationV1Api);
    const created = await leases.createNamespacedLease({
      namespace: ns,
      body: { metadata: { name: 'race', namespace: ns }, spec: { holderIdentity: 'a', leaseDurationSeconds: 15, leaseTransitions: 0, renewTime: '2026-12-01T10:00:00.000000Z' as unknown as Date } },
    });
    const renewed = await leases.replaceNamespacedLease({ name: 'race', namespace: ns, body: { ...created, spec: { ...created.spec, holderIdentity: 'b', leaseTransitions: 1 } } });
    expect(renewed.spec).toMatchObject({ holderIdentity: 'b', leaseTransitions: 1, renewTime: '2026-12-01T10:00:00.000000Z' });
    expect(await failure(leases.replaceNamespacedLease({ name: 'race', namespace: ns, body: { ...created, spec: { ...created.spec, holderIdentity: 'c' } } }))).toMatchObject({
      code: 409,
      reason: 'Conflict',
    });
    expect((await leases.readNamespacedLease({ name: 'race', namespace: ns })).spec?.holderIdentity).toBe('b');
  });

  it('a duration of 0 or negative transitions -> 422 Invalid, nothing stored', async () => {
    const leases = h.kc.makeApiClient(CoordinationV1Api);
    const bad = await failure(leases.createNamespacedLease({ namespace: ns, body: { metadata: { name: 'bad', namespace: ns }, spec: { leaseDurationSeconds: 0, leaseTransitions: -1 } } }));
    expect(bad).toMatchObject({ code: 422, message: expect.stringContaining('spec.leaseDurationSeconds') });
    expect(bad.message).toContain('spec.leaseTransitions');
    expect(await failure(leases.readNamespacedLease({ name: 'bad', namespace: ns }))).toMatchObject({ code: 404 });
  });
});

describe('paged lists (limit / continue)', () => {
  it('pages of 2 -> every object once, in order, remainingItemCount counting down, no token on the last page', async () => {
    for (const name of ['page-a', 'page-b', 'page-c', 'page-d', 'page-e']) await core.createNamespacedPersistentVolumeClaim({ namespace: 'default', body: pvc(name, { labels: { paged: 'yes' } }) });
    const names: string[] = [];
    const remaining: (number | undefined)[] = [];
    let token: string | undefined;
    do {
      const page = await core.listNamespacedPersistentVolumeClaim({ namespace: 'default', labelSelector: 'paged=yes', limit: 2, ...(token ? { _continue: token } : {}) });
      names.push(...page.items.map((i) => i.metadata?.name ?? ''));
      remaining.push(page.metadata?.remainingItemCount);
      token = page.metadata?._continue || undefined;
    } while (token);
    expect(names).toEqual(['page-a', 'page-b', 'page-c', 'page-d', 'page-e']);
    expect(remaining).toEqual([3, 1, undefined]);
  });
});
