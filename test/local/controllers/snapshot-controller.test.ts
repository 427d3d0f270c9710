/**
 * The local snapshot controller running with the other controllers over the real store,
 * with the test playing the csi-snapshotter sidecar (filling the content's status, letting
 * the content go), and once through kubectl over HTTP.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import {
  ANN_SNAPSHOT_BEING_DELETED,
  CONTENT_BOUND_FINALIZER,
  PVC_AS_SOURCE_FINALIZER,
  SNAPSHOT_AS_SOURCE_FINALIZER,
  SNAPSHOT_BOUND_FINALIZER,
  startControllers,
  type RunningController,
  type VolumeSnapshot,
  type VolumeSnapshotContent,
} from '../../../lib/local/controllers/index.js';
import { createObjectStore, startKubeApiServer, type KubeApiServer, type KubeObject, type LocalObjectStore } from '../../../lib/local/kube/index.js';

const GIB = 2 ** 30;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until<T>(read: () => T | undefined, what: string, ok: (value: T) => boolean = () => true): Promise<T> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const value = read();
    if (value !== undefined && ok(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value)}`);
    await sleep(5);
  }
}

const running: { controllers: RunningController; server?: KubeApiServer; home?: string }[] = [];
afterEach(async () => {
  for (const r of running.splice(0)) {
    await r.controllers.stop();
    await r.server?.close();
    if (r.home) await rm(r.home, { recursive: true, force: true });
  }
});

/** A store with a bound claim `data` on PV `pvc-1` (vol-0aaaaaaaaaaaaaaaa) and a class `ebs` of the given policy. */
async function cluster(policy: 'Delete' | 'Retain' = 'Delete'): Promise<LocalObjectStore> {
  const store = createObjectStore();
  const controllers = startControllers(store, { resyncIntervalMs: 50, onError: () => undefined });
  running.push({ controllers });
  store.create('volumesnapshotclasses', { apiVersion: 'snapshot.storage.k8s.io/v1', kind: 'VolumeSnapshotClass', metadata: { name: 'ebs' }, driver: 'ebs.csi.aws.com', deletionPolicy: policy });
  store.create('persistentvolumes', {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name: 'pvc-1' },
    spec: {
      capacity: { storage: '4Gi' },
      accessModes: ['ReadWriteOnce'],
      storageClassName: '',
      csi: { driver: 'ebs.csi.aws.com', volumeHandle: 'vol-0aaaaaaaaaaaaaaaa' },
      claimRef: { namespace: 'default', name: 'data' },
    },
  });
  store.create('persistentvolumeclaims', {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name: 'data', namespace: 'default' },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '4Gi' } }, storageClassName: '', volumeName: 'pvc-1' },
  });
  await until(() => store.get('persistentvolumeclaims', 'data', 'default'), 'claim Bound', (c) => (c.status as { phase?: string }).phase === 'Bound');
  return store;
}

const snapshotManifest = (name = 'snap') => ({
  apiVersion: 'snapshot.storage.k8s.io/v1',
  kind: 'VolumeSnapshot',
  metadata: { name, namespace: 'default' },
  spec: { volumeSnapshotClassName: 'ebs', source: { persistentVolumeClaimName: 'data' } },
});

const getSnapshot = (store: LocalObjectStore, name = 'snap') => store.get('volumesnapshots', name, 'default') as VolumeSnapshot | undefined;
const getContent = (store: LocalObjectStore, name: string) => store.get('volumesnapshotcontents', name) as VolumeSnapshotContent | undefined;

/** What csi-snapshotter writes once EBS reports the snapshot completed. */
function sidecarReports(store: LocalObjectStore, name: string): void {
  const content = getContent(store, name) as KubeObject;
  store.updateStatus('volumesnapshotcontents', {
    ...content,
    status: { snapshotHandle: 'snap-0123456789abcdef0', creationTime: Date.UTC(2025, 0, 1) * 1e6, restoreSize: 4 * GIB, readyToUse: true },
  });
}

/** What csi-snapshotter does after DeleteSnapshot (or for Retain): its content finalizer goes. */
function sidecarReleases(store: LocalObjectStore, name: string): void {
  const content = getContent(store, name) as KubeObject;
  store.update('volumesnapshotcontents', { ...content, metadata: { ...content.metadata, finalizers: (content.metadata.finalizers ?? []).filter((f) => f !== CONTENT_BOUND_FINALIZER) } });
}

async function readySnapshot(store: LocalObjectStore): Promise<{ snapshot: VolumeSnapshot; contentName: string }> {
  const created = store.create('volumesnapshots', snapshotManifest());
  const contentName = `snapcontent-${created.metadata.uid}`;
  await until(() => getContent(store, contentName), 'content with its finalizer', (c) => (c.metadata.finalizers ?? []).includes(CONTENT_BOUND_FINALIZER));
  sidecarReports(store, contentName);
  const snapshot = await until(() => getSnapshot(store), 'snapshot ready', (s) => s.status?.readyToUse === true);
  return { snapshot, contentName };
}

describe('local snapshot controller', () => {
  it('VolumeSnapshot of a bound claim -> snapcontent-<uid> from its PV, bound both ways, claim protected while not ready', async () => {
    const store = await cluster();
    const created = store.create('volumesnapshots', snapshotManifest());
    const contentName = `snapcontent-${created.metadata.uid}`;
    const content = await until(() => getContent(store, contentName), 'content', (c) => (c.metadata.finalizers ?? []).includes(CONTENT_BOUND_FINALIZER));
    expect(content.spec).toMatchObject({
      source: { volumeHandle: 'vol-0aaaaaaaaaaaaaaaa' },
      driver: 'ebs.csi.aws.com',
      deletionPolicy: 'Delete',
      volumeSnapshotClassName: 'ebs',
      volumeSnapshotRef: { kind: 'VolumeSnapshot', name: 'snap', namespace: 'default', uid: created.metadata.uid },
    });
    const snapshot = await until(
      () => getSnapshot(store),
      'snapshot bound and protected',
      (s) => s.status?.boundVolumeSnapshotContentName === contentName && (s.metadata.finalizers ?? []).includes(SNAPSHOT_BOUND_FINALIZER),
    );
    expect(snapshot.status?.readyToUse).toBe(false);
    expect(snapshot.metadata.finalizers).toEqual([SNAPSHOT_AS_SOURCE_FINALIZER, SNAPSHOT_BOUND_FINALIZER]);
    expect(store.get('persistentvolumeclaims', 'data', 'default')?.metadata.finalizers).toContain(PVC_AS_SOURCE_FINALIZER);
  });

  it('content status filled -> readyToUse, restoreSize, creationTime on the snapshot; claim finalizer gone; SnapshotReady event', async () => {
    const store = await cluster();
    const { snapshot } = await readySnapshot(store);
    expect(snapshot.status).toMatchObject({ readyToUse: true, restoreSize: '4Gi', creationTime: '2025-01-01T00:00:00Z' });
    await until(() => store.get('persistentvolumeclaims', 'data', 'default'), 'claim released', (c) => !(c.metadata.finalizers ?? []).includes(PVC_AS_SOURCE_FINALIZER));
    const reasons = store.list('events', { namespace: 'default' }).items.filter((e) => (e.involvedObject as { name?: string }).name === 'snap').map((e) => e.reason);
    expect(reasons).toEqual(expect.arrayContaining(['CreatingSnapshot', 'SnapshotCreated', 'SnapshotReady']));
    // Converged: resyncs every 50 ms write nothing more.
    const versions = () => [getSnapshot(store)?.metadata.resourceVersion, store.list('volumesnapshotcontents').items[0]?.metadata.resourceVersion];
    const before = versions();
    await sleep(300);
    expect(versions()).toEqual(before);
  });

  it('deleted with policy Delete -> content marked and deleted, snapshot held until the sidecar lets the content go', async () => {
    const store = await cluster('Delete');
    const { contentName } = await readySnapshot(store);
    store.delete('volumesnapshots', 'snap', 'default');
    const content = await until(() => getContent(store, contentName), 'content being deleted', (c) => Boolean(c.metadata.deletionTimestamp));
    expect(content.metadata.annotations?.[ANN_SNAPSHOT_BEING_DELETED]).toBe('yes');
    expect(getSnapshot(store)?.metadata.finalizers).toEqual([SNAPSHOT_BOUND_FINALIZER]);
    sidecarReleases(store, contentName);
    await until(() => (getContent(store, contentName) ? undefined : true), 'content gone');
    await until(() => (getSnapshot(store) ? undefined : true), 'snapshot gone');
  });

  it('deleted with policy Retain -> snapshot gone at once, content kept (marked, not deleted, finalizer kept)', async () => {
    const store = await cluster('Retain');
    const { contentName } = await readySnapshot(store);
    store.delete('volumesnapshots', 'snap', 'default');
    await until(() => (getSnapshot(store) ? undefined : true), 'snapshot gone');
    const content = getContent(store, contentName);
    expect(content?.metadata.deletionTimestamp).toBeUndefined();
    expect(content?.metadata.annotations?.[ANN_SNAPSHOT_BEING_DELETED]).toBe('yes');
    expect(content?.metadata.finalizers).toEqual([CONTENT_BOUND_FINALIZER]);
  });

  it('a Pending claim restoring from it -> deletion waits with SnapshotDeletePending, goes on once the claim is gone', async () => {
    const store = await cluster('Delete');
    const { contentName } = await readySnapshot(store);
    store.create('persistentvolumeclaims', {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: 'restore', namespace: 'default' },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '4Gi' } }, storageClassName: 'none', dataSource: { apiGroup: 'snapshot.storage.k8s.io', kind: 'VolumeSnapshot', name: 'snap' } },
    });
    store.delete('volumesnapshots', 'snap', 'default');
    await until(
      () => store.list('events', { namespace: 'default' }).items.find((e) => e.reason === 'SnapshotDeletePending'),
      'SnapshotDeletePending event',
    );
    expect(getContent(store, contentName)?.metadata.deletionTimestamp).toBeUndefined();
    store.delete('persistentvolumeclaims', 'restore', 'default');
    await until(() => getContent(store, contentName), 'content being deleted', (c) => Boolean(c.metadata.deletionTimestamp));
  });

  it('kubectl apply of a VolumeSnapshot -> bound content; get vs shows READYTOUSE true once the content is ready', async () => {
    const store = await cluster();
    const server = await startKubeApiServer({ store, port: 0, host: '127.0.0.1' });
    const home = await mkdtemp(join(tmpdir(), 'volhook-snapctl-'));
    running[running.length - 1] = { ...(running[running.length - 1] as (typeof running)[number]), server, home };
    const kubectl = async (...args: string[]) =>
      (
        await promisify(execFile)('/usr/bin/kubectl', ['--server', server.url, ...args], {
          env: { PATH: process.env.PATH, HOME: home, KUBECONFIG: join(home, 'none'), NO_PROXY: '127.0.0.1' },
          timeout: 20_000,
        })
      ).stdout;
    const path = join(home, 'vs.yaml');
    await writeFile(path, 'apiVersion: snapshot.storage.k8s.io/v1\nkind: VolumeSnapshot\nmetadata:\n  name: snap\n  namespace: default\nspec:\n  volumeSnapshotClassName: ebs\n  source:\n    persistentVolumeClaimName: data\n');
    expect(await kubectl('apply', '-f', path)).toContain('volumesnapshot.snapshot.storage.k8s.io/snap created');
    const bound = await until(() => getSnapshot(store), 'bound', (s) => Boolean(s.status?.boundVolumeSnapshotContentName));
    const contentName = bound.status?.boundVolumeSnapshotContentName as string;
    expect(contentName).toBe(`snapcontent-${bound.metadata.uid}`);
    await until(() => getContent(store, contentName), 'content finalizer', (c) => (c.metadata.finalizers ?? []).includes(CONTENT_BOUND_FINALIZER));
    sidecarReports(store, contentName);
    await until(() => getSnapshot(store), 'ready', (s) => s.status?.readyToUse === true);
    const rows = (await kubectl('get', 'volumesnapshot', 'snap')).split('\n');
    expect(rows[1]).toMatch(new RegExp(`^snap\\s+true\\s+data\\s+4Gi\\s+ebs\\s+${contentName}\\s`));
  });
});
