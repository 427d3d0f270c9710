import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer as createHttpServer, request as httpRequest } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Annotations, Finalizers, itemKey, pvNameForClaim, type Item, type PersistentVolumeClaimItem, type VolumeAttachmentItem } from '../../lib/contract/index.js';
import { configFromEnv, createJsonLogger, retiredSettings, startForwarder, type Forwarder, type ForwarderConfigInput } from '../../lib/forwarder/index.js';
import { silentLogger } from '../../lib/forwarder/logger.js';
import { kubeConfigFor } from '../../lib/kube/index.js';
import { startKube, type KubeHarness } from '../kube/harness.js';
import { newPv, pvcObject, snapshotContentObject, vaObject } from '../kube/fixtures.js';
import { done, eventually, startFakeBackend, type FakeBackend } from './fake-backend.js';

const SECRET = 'test-secret-0123456789abcdef';
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

function testConfig(apiUrl: string, overrides: Partial<ForwarderConfigInput> = {}): ForwarderConfigInput {
  return {
    apiUrl,
    clusterId: 'test-cluster',
    secret: SECRET,
    port: 0,
    listenHost: '127.0.0.1',
    resyncSeconds: 3600,
    backoffInitialMs: 50,
    backoffMaxMs: 400,
    informerRestartMs: 100,
    requestTimeoutMs: 2_000,
    shutdownTimeoutMs: 1_000,
    secretPollMs: 50,
    ...overrides,
  };
}

/** A cluster with one WFFC class, one node in eu-west-1a with its CSINode. */
async function cluster(options: { snapshots?: boolean } = {}): Promise<KubeHarness> {
  const kube = await startKube(options);
  cleanups.push(() => kube.close());
  const { store } = kube;
  store.create('storageclasses', {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: { name: 'gp3' },
    provisioner: 'ebs.csi.aws.com',
    parameters: { type: 'gp3' },
    reclaimPolicy: 'Delete',
    volumeBindingMode: 'WaitForFirstConsumer',
  });
  store.create('nodes', {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: 'n1', labels: { 'topology.kubernetes.io/zone': 'eu-west-1a' } },
    spec: { providerID: 'aws:///eu-west-1a/i-0123456789abcdef0' },
  });
  store.create('csinodes', {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'CSINode',
    metadata: { name: 'n1' },
    spec: { drivers: [{ name: 'ebs.csi.aws.com', nodeID: 'i-0123456789abcdef0', allocatable: { count: 25 } }] },
  });
  return kube;
}

async function backend(secrets = [SECRET], port?: number): Promise<FakeBackend> {
  const fake = await startFakeBackend({ secrets, ...(port ? { port } : {}) });
  cleanups.push(() => fake.close());
  return fake;
}

async function forwarder(kube: KubeHarness, config: ForwarderConfigInput): Promise<Forwarder> {
  const fwd = await startForwarder(config, { kubeConfig: kube.kubeConfig, logger: silentLogger });
  cleanups.push(() => fwd.stop());
  return fwd;
}

const ourClaim = (name: string, extra: Record<string, string> = {}) =>
  pvcObject(name, 'default', { 'volume.kubernetes.io/storage-provisioner': 'ebs.csi.aws.com', ...extra });

const keysOf = (items: Item[]) => items.map((i) => ('pvc' in i ? `${i.kind}/${i.pvc.metadata.name}` : i.kind === 'PersistentVolumeClaimDeleted' ? `${i.kind}/${i.name}` : i.kind));

describe('forwarder against the local Kubernetes API and a fake backend', () => {
  it('a PVC of ours -> posted signed with its context; the result writes are applied (PV and Event created)', async () => {
    const kube = await cluster();
    const fake = await backend();
    fake.answer = (items) => ({
      results: items.map((item) =>
        item.kind === 'PersistentVolumeClaim'
          ? done(item, [
              { op: 'createPersistentVolume', pv: newPv(pvNameForClaim(item.pvc.metadata.uid), { claimUid: item.pvc.metadata.uid }) },
              {
                op: 'createEvent',
                involvedObject: { kind: 'PersistentVolumeClaim', apiVersion: 'v1', name: item.pvc.metadata.name, namespace: 'default', uid: item.pvc.metadata.uid },
                type: 'Normal',
                reason: 'ProvisioningSucceeded',
                message: 'Successfully provisioned volume',
              },
            ])
          : done(item),
      ),
    });
    kube.store.create('persistentvolumeclaims', pvcObject('not-ours', 'default', { 'volume.kubernetes.io/storage-provisioner': 'efs.csi.aws.com' }));
    const pvc = kube.store.create('persistentvolumeclaims', ourClaim('data', { 'volume.kubernetes.io/selected-node': 'n1' }));
    await forwarder(kube, testConfig(fake.url));

    const pvName = pvNameForClaim(pvc.metadata.uid);
    await eventually(() => kube.store.get('persistentvolumes', pvName), 5_000, 'the PV');
    const item = fake.items.find((i): i is PersistentVolumeClaimItem => i.kind === 'PersistentVolumeClaim')!;
    expect(item).toMatchObject({
      pvc: { metadata: { name: 'data', uid: pvc.metadata.uid } },
      storageClass: { metadata: { name: 'gp3' } },
      selectedNode: { name: 'n1', providerID: 'aws:///eu-west-1a/i-0123456789abcdef0', csiNode: { nodeID: 'i-0123456789abcdef0', allocatableCount: 25 } },
      pvExists: false,
    });
    expect(fake.refused).toBe(0);
    await eventually(() => kube.store.list('events').items.some((e) => (e as { reason?: string }).reason === 'ProvisioningSucceeded'), 5_000, 'the Event');
    // Then the forwarder sees the new PV (ours: provisioned-by) and posts it too; never the other claim.
    await eventually(() => fake.items.some((i) => i.kind === 'PersistentVolume' && i.pv.metadata.name === pvName), 5_000, 'the PV item');
    expect(keysOf(fake.items)).not.toContain('PersistentVolumeClaim/not-ours');
  });

  it('objects not ours (other provisioner, other driver, bound claim) -> never posted', async () => {
    const kube = await cluster();
    const fake = await backend();
    kube.store.create('persistentvolumeclaims', pvcObject('efs', 'default', { 'volume.kubernetes.io/storage-provisioner': 'efs.csi.aws.com' }));
    kube.store.create('persistentvolumeclaims', pvcObject('unannotated'));
    kube.store.create('persistentvolumeclaims', { ...ourClaim('bound'), spec: { ...ourClaim('bound').spec, volumeName: 'pvc-elsewhere' } });
    const foreign = newPv('pv-foreign');
    foreign.metadata.annotations = { 'pv.kubernetes.io/provisioned-by': 'efs.csi.aws.com' };
    foreign.spec.csi = { driver: 'efs.csi.aws.com', volumeHandle: 'fs-1' };
    kube.store.create('persistentvolumes', foreign);
    kube.store.create('volumeattachments', vaObject('csi-foreign', 'pv-foreign', 'n1', 'efs.csi.aws.com'));
    kube.store.create('persistentvolumeclaims', ourClaim('marker')); // proves the forwarder is posting
    const fwd = await forwarder(kube, testConfig(fake.url));
    // The first post answered before the resync: a resync skips a key that is still queued.
    await eventually(() => fake.items.length > 0 && fwd.queue.size === 0, 5_000, 'a post, answered');
    fwd.resync();
    await eventually(() => fake.items.length > 1 && fwd.queue.size === 0, 5_000, 'the resync\'s post, answered');
    expect(keysOf(fake.items)).toEqual(['PersistentVolumeClaim/marker', 'PersistentVolumeClaim/marker']);
  });

  it('the backend asks for a report within 1800 s -> resyncs every second send none while nothing changes; a claim of ours made -> the next resync sends the report; asked for one every resync (no reportWithinSeconds) -> every resync', async () => {
    const kube = await cluster();
    const fake = await backend();
    fake.reportWithinSeconds = 1800;
    await forwarder(kube, testConfig(fake.url, { resyncSeconds: 1 }));
    // The first report, once the caches synced.
    await eventually(() => fake.reports.length === 1, 5_000, 'the first report');
    await new Promise((resolve) => setTimeout(resolve, 3_500));
    expect(fake.reports).toHaveLength(1);
    // The report changes (a claim's uid): sent at the next resync, whatever the backend said.
    kube.store.create('persistentvolumeclaims', ourClaim('data-0'));
    const changed = await eventually(() => fake.reports.find((r) => r.report !== undefined && r.report.claims.length === 1), 5_000, 'the changed report');
    expect(changed?.digest).not.toBe(fake.reports[0]!.digest);
    const afterChange = fake.reports.length;
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    expect(fake.reports).toHaveLength(afterChange);
    // Control: a backend that asks for one every resync (an older one, or a cluster with marks) -> every resync.
    // The answer saying so comes with the next report: one is sent for another claim.
    fake.reportWithinSeconds = undefined;
    kube.store.create('persistentvolumeclaims', ourClaim('data-1'));
    await eventually(() => fake.reports.length >= afterChange + 4, 8_000, 'a report every resync');
  });

  it('a PVC of ours deleted before it got a PV -> PersistentVolumeClaimDeleted posted', async () => {
    const kube = await cluster();
    const fake = await backend();
    // The backend is still creating the disk: requeue in a minute.
    fake.answer = (items) => ({
      results: items.map((item) =>
        item.kind === 'PersistentVolumeClaim' ? { key: `PersistentVolumeClaim/default/${item.pvc.metadata.name}`, outcome: 'requeue', requeueAfterSeconds: 60, writes: [] } : done(item),
      ),
    });
    const pvc = kube.store.create('persistentvolumeclaims', ourClaim('short-lived'));
    await forwarder(kube, testConfig(fake.url));
    await eventually(() => fake.items.length === 1, 5_000, 'the claim item');
    kube.store.delete('persistentvolumeclaims', 'short-lived', 'default');
    const deleted = await eventually(() => fake.items.find((i) => i.kind === 'PersistentVolumeClaimDeleted'), 5_000, 'the deleted item');
    // pvExists may let the backend delete a disk: it is read live, not from the cache.
    expect(deleted).toEqual({ kind: 'PersistentVolumeClaimDeleted', uid: pvc.metadata.uid, namespace: 'default', name: 'short-lived', pvExists: false, pvCheckedLive: true });
  });

  it('a protected claim deleted while the forwarder is down -> the restarted forwarder still sees it, Terminating, and sends it with pvExists read live', async () => {
    const kube = await cluster();
    const fake = await backend();
    // The backend is creating the claim's disk (requeue): the claim carries volhook's protection.
    fake.answer = (items) => ({
      results: items.map((item) =>
        item.kind === 'PersistentVolumeClaim' ? { key: `PersistentVolumeClaim/default/${item.pvc.metadata.name}`, outcome: 'requeue', requeueAfterSeconds: 60, writes: [] } : done(item),
      ),
    });
    const created = ourClaim('mid-create');
    const pvc = kube.store.create('persistentvolumeclaims', { ...created, metadata: { ...created.metadata, finalizers: [Finalizers.claimProtection] } });
    const first = await forwarder(kube, testConfig(fake.url));
    await eventually(() => fake.items.length === 1, 5_000, 'the claim item');
    await first.stop();

    kube.store.delete('persistentvolumeclaims', 'mid-create', 'default');
    fake.items.length = 0;
    await forwarder(kube, testConfig(fake.url));
    const sent = (await eventually(
      () => fake.items.find((i): i is PersistentVolumeClaimItem => i.kind === 'PersistentVolumeClaim' && !!i.pvc.metadata.deletionTimestamp),
      5_000,
      'the Terminating claim from the new forwarder',
    ))!;
    expect(sent.pvc.metadata.uid).toBe(pvc.metadata.uid);
    expect(sent).toMatchObject({ pvExists: false, pvCheckedLive: true });
  });

  it('backend answering 503, then refusing connections, then up -> the item is delivered later, nothing dropped', async () => {
    const kube = await cluster();
    const fake = await backend();
    let failures = 0;
    fake.answer = (items) => (failures++ < 2 ? { status: 503 } : { results: items.map((item) => done(item)) });
    kube.store.create('persistentvolumeclaims', ourClaim('patient'));
    const fwd = await forwarder(kube, testConfig(fake.url));
    await eventually(() => fake.statuses.filter((s) => s === 503).length === 2, 5_000, 'two 503s');
    const port = fake.port;
    await fake.close(); // now: connection refused
    await new Promise((r) => setTimeout(r, 300));
    expect(fwd.queue.has('PersistentVolumeClaim/default/patient')).toBe(true);
    const revived = await backend([SECRET], port);
    await eventually(() => revived.items.length > 0, 5_000, 'delivery after the outage');
    expect(keysOf(revived.items)).toEqual(['PersistentVolumeClaim/patient']);
    await eventually(() => fwd.queue.size === 0, 5_000, 'an empty queue');
    const metrics = await fwd.metrics.registry.getSingleMetricAsString('volhook_forwarder_outcomes_total');
    expect(metrics).toMatch(/outcome="error"} [3-9]/);
    expect(metrics).toContain('kind="PersistentVolumeClaim",outcome="done"} 1');
  });

  it('backend refuses the signature (401) -> items wait; rotated secret file is re-read -> delivered', async () => {
    const kube = await cluster();
    const fake = await backend(['rotated-secret-0123456789abcdef']);
    const dir = await mkdtemp(join(tmpdir(), 'volhook-secret-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const file = join(dir, 'secret');
    await writeFile(file, `${SECRET}\n`);
    kube.store.create('persistentvolumeclaims', ourClaim('rotating'));
    const fwd = await forwarder(kube, testConfig(fake.url, { secret: undefined, secretFile: file }));
    await eventually(() => fake.refused >= 2, 5_000, 'refusals');
    expect(fwd.queue.has('PersistentVolumeClaim/default/rotating')).toBe(true);
    await writeFile(file, 'rotated-secret-0123456789abcdef\n');
    await eventually(() => fake.items.length > 0, 5_000, 'delivery with the new secret');
  });

  it('a write of a result fails -> the item is retried and its writes applied again', async () => {
    const kube = await cluster();
    const fake = await backend();
    let answers = 0;
    fake.answer = (items) => ({
      results: items.map((item) =>
        done(item, [
          // The first answer asks for an invalid PV name (the API server refuses it).
          { op: 'createPersistentVolume', pv: newPv(answers++ === 0 ? 'Invalid_Name' : 'pvc-retried') },
        ]),
      ),
    });
    kube.store.create('persistentvolumeclaims', ourClaim('retried'));
    const fwd = await forwarder(kube, testConfig(fake.url));
    await eventually(() => kube.store.get('persistentvolumes', 'pvc-retried'), 5_000, 'the PV on the retry');
    expect(await fwd.metrics.registry.getSingleMetricAsString('volhook_forwarder_write_failures_total')).toContain('op="createPersistentVolume"} 1');
  });

  it('a VolumeAttachment of ours -> posted with its PV and node; the PV lists it; status and finalizers applied', async () => {
    const kube = await cluster();
    const fake = await backend();
    fake.answer = (items) => ({
      results: items.map((item) =>
        item.kind === 'VolumeAttachment'
          ? done(item, [
              { op: 'addFinalizer', target: { kind: 'VolumeAttachment', name: item.volumeAttachment.metadata.name }, finalizer: Finalizers.attacher('ebs.csi.aws.com') },
              { op: 'updateVolumeAttachmentStatus', name: item.volumeAttachment.metadata.name, status: { attached: true, attachmentMetadata: { devicePath: '/dev/xvdaa' } } },
            ])
          : done(item),
      ),
    });
    kube.store.create('persistentvolumes', newPv('pvc-attached'));
    kube.store.create('volumeattachments', vaObject('csi-1', 'pvc-attached', 'n1'));
    await forwarder(kube, testConfig(fake.url));
    await eventually(() => (kube.store.get('volumeattachments', 'csi-1')?.status as { attached?: boolean })?.attached === true, 5_000, 'attached');
    const vaItem = fake.items.find((i) => i.kind === 'VolumeAttachment');
    expect(vaItem).toMatchObject({ pv: { metadata: { name: 'pvc-attached' } }, node: { name: 'n1', csiNode: { nodeID: 'i-0123456789abcdef0' } } });
    expect(fake.items.find((i) => i.kind === 'PersistentVolume')).toMatchObject({ volumeAttachments: ['csi-1'] });
    expect(kube.store.get('volumeattachments', 'csi-1')?.metadata.finalizers).toEqual(['external-attacher/ebs-csi-aws-com']);
  });

  it('the selected node gets its CSINode -> the waiting claim is offered again with the new context', async () => {
    const kube = await cluster();
    const fake = await backend();
    fake.answer = (items) => ({ results: items.map((item) => ({ key: `PersistentVolumeClaim/default/${(item as PersistentVolumeClaimItem).pvc.metadata.name}`, outcome: 'failed', reason: 'NodeGone', message: 'no CSINode', requeueAfterSeconds: 3600, writes: [] })) });
    kube.store.create('persistentvolumeclaims', ourClaim('waiting', { 'volume.kubernetes.io/selected-node': 'n2' }));
    await forwarder(kube, testConfig(fake.url));
    await eventually(() => fake.items.length === 1, 5_000, 'first post');
    expect(fake.items[0]).toMatchObject({ selectedNode: null });
    kube.store.create('nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n2', labels: { 'topology.kubernetes.io/zone': 'eu-west-1b' } } });
    kube.store.create('csinodes', { apiVersion: 'storage.k8s.io/v1', kind: 'CSINode', metadata: { name: 'n2' }, spec: { drivers: [{ name: 'ebs.csi.aws.com', nodeID: 'i-0bbb' }] } });
    // The failed claim would wait an hour; the change of its node cuts that short.
    await eventually(() => fake.items.some((i) => i.kind === 'PersistentVolumeClaim' && i.selectedNode?.name === 'n2'), 5_000, 'the re-offer');
  });

  it('the Kubernetes API goes away; meanwhile a claim is deleted and its watch history expires -> reconnect, 410, relist: deleted and new claims posted', async () => {
    const kube = await startKube({ store: { historyLimit: 5 } });
    cleanups.push(() => kube.close());
    const fake = await backend();
    fake.answer = (items) => ({
      results: items.map((item) =>
        item.kind === 'PersistentVolumeClaim' ? { key: `PersistentVolumeClaim/default/${item.pvc.metadata.name}`, outcome: 'requeue', requeueAfterSeconds: 3600, writes: [] } : done(item),
      ),
    });
    const gone = kube.store.create('persistentvolumeclaims', ourClaim('gone-while-away'));
    const fwd = await forwarder(kube, testConfig(fake.url));
    await eventually(() => fake.items.length === 1, 5_000, 'first post');
    const port = Number(new URL(kube.url).port);
    await kube.close();
    // While the forwarder cannot watch: the claim goes, and more changes than the history keeps.
    kube.store.delete('persistentvolumeclaims', 'gone-while-away', 'default');
    for (let i = 0; i < 10; i++) kube.store.create('persistentvolumeclaims', pvcObject(`churn-${i}`));
    kube.store.create('persistentvolumeclaims', ourClaim('after'));
    await new Promise((r) => setTimeout(r, 300));
    const { startKubeApiServer } = await import('../../lib/local/kube/index.js');
    const seen: string[] = [];
    const server = await startKubeApiServer({ store: kube.store, port, host: '127.0.0.1', onRequest: (r) => seen.push(`${r.method} ${r.url}`) });
    cleanups.push(() => server.close());
    await eventually(() => keysOf(fake.items).includes('PersistentVolumeClaim/after'), 5_000, 'the new claim after reconnect');
    await eventually(() => fake.items.find((i) => i.kind === 'PersistentVolumeClaimDeleted'), 5_000, 'the claim deleted while away');
    expect(fake.items.find((i) => i.kind === 'PersistentVolumeClaimDeleted')).toMatchObject({ uid: gone.metadata.uid, name: 'gone-while-away' });
    // The resumed watch got 410 Expired (logged when the server ended it), then a fresh list, in pages.
    expect(seen).toContain('GET /api/v1/persistentvolumeclaims?limit=500');
    expect(await fwd.metrics.registry.getSingleMetricAsString('volhook_forwarder_informer_restarts_total')).toMatch(/resource="persistentvolumeclaims"} [1-9]/);
  });

  it('a cluster without the snapshot CRDs -> ready, said once at info, their lists tried ever less often and never watched; the CRDs installed -> a content of ours is sent', async () => {
    const kube = await cluster({ snapshots: false });
    const fake = await backend();
    const lines: Array<{ level: string; msg: string; resource?: string }> = [];
    const logger = createJsonLogger({ level: 'info', write: (line) => void lines.push(JSON.parse(line) as (typeof lines)[number]) });
    const informerRestartMs = 20;
    const fwd = await startForwarder(testConfig(fake.url, { informerRestartMs }), { kubeConfig: kube.kubeConfig, logger });
    cleanups.push(() => fwd.stop());
    await eventually(async () => (await fetch(`http://127.0.0.1:${fwd.port}/readyz`)).status === 200, 5_000, 'ready');
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const snapshotRequests = kube.requests.filter((r) => r.url.startsWith('/apis/snapshot.storage.k8s.io/'));
    // Per resource at most some 7 lists in 3 s (20 ms doubling to 1.8 s; fewer on a loaded machine), no watch;
    // before: a list and a watch every 20 ms each. Listed again all the same: each resource more than once.
    expect(snapshotRequests.some((r) => r.url.includes('watch=true'))).toBe(false);
    expect(snapshotRequests.length).toBeLessThanOrEqual(3 * 10);
    for (const resource of ['volumesnapshotclasses', 'volumesnapshotcontents', 'volumesnapshots']) {
      await eventually(() => kube.requests.filter((r) => r.url.startsWith(`/apis/snapshot.storage.k8s.io/v1/${resource}`)).length >= 2, 5_000, `${resource} listed again`);
    }
    const off = lines.filter((l) => l.msg.startsWith('snapshots are off'));
    expect(off).toEqual([expect.objectContaining({ level: 'info', msg: 'snapshots are off until the snapshot CRDs (snapshot.storage.k8s.io/v1) are installed' })]);
    expect(lines.filter((l) => l.level === 'warn' && l.resource?.startsWith('volumesnapshot'))).toEqual([]);

    kube.installCrds({ snapshots: true });
    kube.store.create('volumesnapshotcontents' as never, snapshotContentObject('snapcontent-late', 'nightly') as never);
    await eventually(() => fake.items.some((i) => i.kind === 'VolumeSnapshotContent' && i.content.metadata.name === 'snapcontent-late'), 90 * informerRestartMs + 5_000, 'the content sent');
    // Each of the three notices it is served at its own next list, which may come after the content is sent.
    // The group snapshot CRDs come with them (two resources more, said off on their own line).
    const served = () => lines.filter((l) => l.msg === 'resource served now; watching it').map((l) => l.resource).sort();
    await eventually(() => served().length === 5, 90 * informerRestartMs + 5_000, 'all five served');
    expect(served()).toEqual(['volumegroupsnapshotclasses', 'volumegroupsnapshotcontents', 'volumesnapshotclasses', 'volumesnapshotcontents', 'volumesnapshots']);
    expect(lines.filter((l) => l.msg.startsWith('group snapshots are off'))).toHaveLength(1);
  }, 30_000);

  it('/healthz, /readyz and /metrics answer', async () => {
    const kube = await cluster();
    const fake = await backend();
    const fwd = await forwarder(kube, testConfig(fake.url));
    const base = `http://127.0.0.1:${fwd.port}`;
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    await eventually(async () => (await fetch(`${base}/readyz`)).status === 200, 5_000, 'ready');
    const metrics = await (await fetch(`${base}/metrics`)).text();
    for (const name of [
      'volhook_forwarder_queue_depth',
      'volhook_forwarder_requests_in_flight',
      'volhook_forwarder_outcomes_total',
      'volhook_forwarder_request_duration_seconds',
      'volhook_forwarder_write_failures_total',
    ]) {
      expect(metrics).toContain(`# TYPE ${name}`);
    }
    expect((await fetch(`${base}/nope`)).status).toBe(404);
  });

  it('caches not synced (API unreachable) -> /readyz 503 and nothing is posted; stop still returns', async () => {
    const fake = await backend();
    const port = await freePort();
    const { kubeConfigFor } = await import('../../lib/kube/index.js');
    const fwd = await startForwarder(testConfig(fake.url), { kubeConfig: kubeConfigFor({ server: `http://127.0.0.1:${port}` }), logger: silentLogger });
    const res = await fetch(`http://127.0.0.1:${fwd.port}/readyz`);
    expect(res.status).toBe(503);
    await new Promise((r) => setTimeout(r, 200));
    expect(fake.statuses).toEqual([]);
    await fwd.stop();
  });
});

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

describe('echoes of volhook’s own writes', () => {
  const vaKey = 'VolumeAttachment/csi-1';
  const vaItems = (fake: FakeBackend) => fake.items.filter((i): i is VolumeAttachmentItem => i.kind === 'VolumeAttachment');
  const ignored = async (fwd: Forwarder, resource: string) =>
    (await fwd.metrics.updatesIgnored.get()).values.find((v) => v.labels.resource === resource)?.value ?? 0;

  it('a VolumeAttachment whose only change is volhook’s status and finalizer write -> not sent again; its deletion (not volhook’s) -> sent', async () => {
    const kube = await cluster();
    const fake = await backend();
    fake.answer = (items) => ({
      results: items.map((item) =>
        item.kind === 'VolumeAttachment' && !item.volumeAttachment.metadata.deletionTimestamp
          ? done(item, [
              { op: 'addFinalizer', target: { kind: 'VolumeAttachment', name: 'csi-1' }, finalizer: Finalizers.attacher('ebs.csi.aws.com') },
              { op: 'updateVolumeAttachmentStatus', name: 'csi-1', status: { attached: true, attachmentMetadata: { devicePath: '/dev/xvdaa' } } },
            ])
          : done(item),
      ),
    });
    kube.store.create('persistentvolumes', newPv('pvc-attached'));
    kube.store.create('volumeattachments', vaObject('csi-1', 'pvc-attached', 'n1'));
    const fwd = await forwarder(kube, testConfig(fake.url));
    // Both writes came back through the watch (two updates), and were let go.
    await eventually(async () => (await ignored(fwd, 'volumeattachments')) >= 2, 5_000, 'the echoes');
    await new Promise((r) => setTimeout(r, 200));
    expect(vaItems(fake)).toHaveLength(1);
    expect(fwd.queue.has(vaKey)).toBe(false);
    expect(kube.store.get('volumeattachments', 'csi-1')?.status).toMatchObject({ attached: true });

    kube.store.delete('volumeattachments', 'csi-1'); // the finalizer holds it: a deletionTimestamp
    await eventually(() => vaItems(fake).some((i) => i.volumeAttachment.metadata.deletionTimestamp), 5_000, 'the deletion sent');
  });

  it('a refused attach, failed for 60 s with attachError written (a new time each try) -> sent once: the echo does not cut the wait short', async () => {
    const kube = await cluster();
    const fake = await backend();
    fake.answer = (items) => ({
      results: items.map((item) => ({
        key: itemKey(item),
        outcome: 'failed',
        reason: 'AttachmentLimitExceeded',
        message: 'instance has no free attachment slot',
        requeueAfterSeconds: 60,
        writes: [{ op: 'updateVolumeAttachmentStatus', name: 'csi-1', status: { attached: false, attachError: { time: new Date().toISOString().replace(/\.\d+Z$/, 'Z'), message: 'no slot' } } }],
      })),
    });
    kube.store.create('persistentvolumes', newPv('pvc-refused'));
    kube.store.create('volumeattachments', vaObject('csi-1', 'pvc-refused', 'n1'));
    const fwd = await forwarder(kube, testConfig(fake.url));
    await eventually(async () => (await ignored(fwd, 'volumeattachments')) >= 1, 5_000, 'the echo of attachError');
    await new Promise((r) => setTimeout(r, 300));
    expect(vaItems(fake)).toHaveLength(1);
    expect(fwd.queue.dueAt(vaKey)! - Date.now()).toBeGreaterThan(55_000);
  });

  it('write before act: requeue after 0 s with writes -> the requeue (not the echo) sends it again, the backend sees its writes and it converges', async () => {
    const kube = await cluster();
    const fake = await backend();
    const attacher = Finalizers.attacher('ebs.csi.aws.com');
    fake.answer = (items) => ({
      results: items.map((item) => {
        if (item.kind !== 'VolumeAttachment') return done(item);
        const va = item.volumeAttachment;
        const recorded = va.metadata.finalizers?.includes(attacher) && va.metadata.annotations?.[Annotations.attachedNodeId] === 'i-0123456789abcdef0';
        if (recorded) return done(item, [{ op: 'updateVolumeAttachmentStatus', name: va.metadata.name, status: { attached: true } }]);
        return {
          key: itemKey(item),
          outcome: 'requeue',
          requeueAfterSeconds: 0,
          writes: [
            { op: 'addFinalizer', target: { kind: 'VolumeAttachment', name: va.metadata.name }, finalizer: attacher },
            { op: 'setAnnotation', target: { kind: 'VolumeAttachment', name: va.metadata.name, uid: va.metadata.uid }, key: Annotations.attachedNodeId, value: 'i-0123456789abcdef0' },
          ],
        };
      }),
    });
    kube.store.create('persistentvolumes', newPv('pvc-recorded'));
    kube.store.create('volumeattachments', vaObject('csi-1', 'pvc-recorded', 'n1'));
    const fwd = await forwarder(kube, testConfig(fake.url));
    await eventually(() => (kube.store.get('volumeattachments', 'csi-1')?.status as { attached?: boolean } | undefined)?.attached === true, 5_000, 'attached');
    await eventually(() => !fwd.queue.has(vaKey), 5_000, 'the key done');
    await new Promise((r) => setTimeout(r, 200));
    const sent = vaItems(fake);
    // Recorded, then (once the cache holds the record; maybe after one more no-op round) attached.
    expect(sent.length).toBeGreaterThanOrEqual(2);
    expect(sent.length).toBeLessThanOrEqual(3);
    expect(sent.at(-1)!.volumeAttachment.metadata.finalizers).toContain(attacher);
    expect(await ignored(fwd, 'volumeattachments')).toBeGreaterThanOrEqual(2);
  });
});

describe('write-back', () => {
  it('the registration says the forwarder writes, but its ServiceAccount may not (403) -> ERROR log line and write-failure metric; the item is never done', async () => {
    const kube = await cluster();
    const proxy = await readOnlyProxy(kube.url);
    cleanups.push(() => proxy.close());
    const fake = await backend();
    fake.answer = (items) => ({ results: items.map((item) => done(item, [{ op: 'createPersistentVolume', pv: newPv('pvc-not-allowed') }])) });
    kube.store.create('persistentvolumeclaims', ourClaim('forbidden'));
    const lines: Record<string, unknown>[] = [];
    const logger = createJsonLogger({ level: 'debug', write: (line) => lines.push(JSON.parse(line)) });
    const fwd = await startForwarder(testConfig(fake.url), { kubeConfig: kubeConfigFor({ server: proxy.url }), logger });
    cleanups.push(() => fwd.stop());

    const line = await eventually(() => lines.find((l) => l.level === 'error' && l.msg === 'writes could not be applied; the item is retried with backoff'), 5_000, 'the error line');
    expect(line).toMatchObject({ key: 'PersistentVolumeClaim/default/forbidden', op: 'createPersistentVolume', err: expect.stringContaining('403'), hint: expect.stringContaining('rbac.yaml') });
    expect(await fwd.metrics.registry.getSingleMetricAsString('volhook_forwarder_write_failures_total')).toMatch(/op="createPersistentVolume"} [1-9]/);
    await eventually(() => fake.items.length >= 2, 5_000, 'a retry');
    expect(fwd.queue.has('PersistentVolumeClaim/default/forbidden')).toBe(true);
    expect(fwd.queue.failures('PersistentVolumeClaim/default/forbidden')).toBeGreaterThanOrEqual(1);
    expect(kube.store.get('persistentvolumes', 'pvc-not-allowed')).toBeUndefined();
  });

  it('the API server refuses a write (422, an invalid PV) -> a Warning WriteBackFailed Event on the claim it was for, naming the write; the item is retried', async () => {
    const kube = await cluster();
    const fake = await backend();
    const pvc = kube.store.create('persistentvolumeclaims', ourClaim('refused'));
    // Fits the contract, but the API server requires at least one access mode.
    const invalid = newPv('pvc-invalid', { claimUid: pvc.metadata.uid });
    invalid.spec.claimRef.name = 'refused';
    invalid.spec.accessModes = [];
    fake.answer = (items) => ({ results: items.map((item) => done(item, [{ op: 'createPersistentVolume', pv: invalid }])) });
    await forwarder(kube, testConfig(fake.url));

    const event = await eventually(
      () => kube.store.list('events').items.find((e) => (e as { reason?: string }).reason === 'WriteBackFailed'),
      5_000,
      'the WriteBackFailed Event',
    );
    expect(event).toMatchObject({
      type: 'Warning',
      involvedObject: { kind: 'PersistentVolumeClaim', name: 'refused', namespace: 'default', uid: pvc.metadata.uid },
      message: expect.stringContaining('createPersistentVolume PersistentVolume/pvc-invalid'),
    });
    expect(kube.store.get('persistentvolumes', 'pvc-invalid')).toBeUndefined();
  });

  it('VOLHOOK_WRITE_BACK is no longer read: the configuration parses without it, and it is named as retired', () => {
    const env = { VOLHOOK_API_URL: 'https://volhook.example.com', VOLHOOK_CLUSTER_ID: 'c', VOLHOOK_SECRET: SECRET, VOLHOOK_WRITE_BACK: 'none' };
    expect(configFromEnv(env)).not.toHaveProperty('writeBack');
    expect(retiredSettings(env)).toEqual([{ name: 'VOLHOOK_WRITE_BACK', why: expect.stringContaining('registration') }]);
    expect(retiredSettings({ ...env, VOLHOOK_WRITE_BACK: '' })).toEqual([]);
  });
});

/**
 * A Kubernetes API as a forwarder with a read-only ClusterRole sees it: reads and watches
 * pass, every write is refused 403 Forbidden.
 */
async function readOnlyProxy(target: string): Promise<{ url: string; close(): Promise<void> }> {
  const server = createHttpServer((req, res) => {
    if (req.method !== 'GET') {
      res.writeHead(403, { 'content-type': 'application/json' }).end(
        JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Forbidden', code: 403, message: `${req.method} ${req.url} is forbidden: User "system:serviceaccount:volhook-system:volhook-forwarder" cannot write` }),
      );
      return;
    }
    const upstream = httpRequest(new URL(req.url ?? '/', target), { method: 'GET', headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => res.destroy());
    res.on('close', () => upstream.destroy());
    upstream.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
