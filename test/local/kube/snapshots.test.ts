import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CustomObjectsApi, PatchStrategy, makeInformer, setHeaderOptions, type KubernetesObject, type KubernetesListObject } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createObjectStore, type KubeObject } from '../../../lib/local/kube/index.js';
import { failure, startHarness, type Harness } from './helpers.js';

const GROUP = 'snapshot.storage.k8s.io';

const snapshot = (name: string, source: Record<string, string> = { persistentVolumeClaimName: 'data' }) => ({
  apiVersion: `${GROUP}/v1`,
  kind: 'VolumeSnapshot',
  metadata: { name, namespace: 'default' },
  spec: { volumeSnapshotClassName: 'ebs', source },
});

const content = (name: string, spec: Record<string, unknown> = {}) => ({
  apiVersion: `${GROUP}/v1`,
  kind: 'VolumeSnapshotContent',
  metadata: { name },
  spec: {
    deletionPolicy: 'Delete',
    driver: 'ebs.csi.aws.com',
    source: { volumeHandle: 'vol-0123456789abcdef0' },
    volumeSnapshotRef: { name: 'snap', namespace: 'default' },
    ...spec,
  },
});

const snapshotClass = (name: string, deletionPolicy = 'Delete') => ({
  apiVersion: `${GROUP}/v1`,
  kind: 'VolumeSnapshotClass',
  metadata: { name },
  driver: 'ebs.csi.aws.com',
  deletionPolicy,
});

describe('snapshot kinds in the store', () => {
  it('create with a status -> status dropped (custom resource with a status subresource); /status sets it', () => {
    const store = createObjectStore();
    const created = store.create('volumesnapshots', { ...snapshot('s1'), status: { readyToUse: true } });
    expect(created.status).toBeUndefined();
    const updated = store.updateStatus('volumesnapshots', { ...created, status: { readyToUse: false, boundVolumeSnapshotContentName: 'snapcontent-x' } });
    expect(updated.status).toEqual({ readyToUse: false, boundVolumeSnapshotContentName: 'snapcontent-x' });
    const viaMain = store.update('volumesnapshots', { ...updated, status: { readyToUse: true } });
    expect(viaMain.status).toEqual({ readyToUse: false, boundVolumeSnapshotContentName: 'snapcontent-x' });
  });

  it.each([
    ['VolumeSnapshot without source', 'volumesnapshots', { ...snapshot('a'), spec: {} }, 'spec.source'],
    ['VolumeSnapshot with both sources', 'volumesnapshots', snapshot('b', { persistentVolumeClaimName: 'x', volumeSnapshotContentName: 'y' }), 'exactly one of volumeSnapshotContentName and persistentVolumeClaimName'],
    ['VolumeSnapshot with an empty class name', 'volumesnapshots', { ...snapshot('c'), spec: { volumeSnapshotClassName: '', source: { persistentVolumeClaimName: 'x' } } }, 'must not be the empty string'],
    ['content without driver', 'volumesnapshotcontents', content('d', { driver: undefined }), 'spec.driver'],
    ['content with policy Keep', 'volumesnapshotcontents', content('e', { deletionPolicy: 'Keep' }), 'spec.deletionPolicy'],
    ['content with both handles', 'volumesnapshotcontents', content('f', { source: { volumeHandle: 'v', snapshotHandle: 's' } }), 'exactly one of volumeHandle and snapshotHandle'],
    ['content with a ref without namespace', 'volumesnapshotcontents', content('g', { volumeSnapshotRef: { name: 'x' } }), 'both spec.volumeSnapshotRef.name and spec.volumeSnapshotRef.namespace'],
    ['class without deletionPolicy', 'volumesnapshotclasses', { ...snapshotClass('h'), deletionPolicy: undefined }, 'deletionPolicy'],
  ] as const)('%s -> 422 Invalid naming it', (_name, resource, object, text) => {
    const store = createObjectStore();
    expect(() => store.create(resource, object as unknown as KubeObject)).toThrow(text);
  });

  it('changed source handle or PVC name -> refused as immutable', () => {
    const store = createObjectStore();
    const c = store.create('volumesnapshotcontents', content('c1'));
    expect(() => store.update('volumesnapshotcontents', { ...c, spec: { ...(c.spec as object), source: { volumeHandle: 'vol-1' } } })).toThrow('volumeHandle is immutable');
    const s = store.create('volumesnapshots', snapshot('s1'));
    expect(() => store.update('volumesnapshots', { ...s, spec: { source: { persistentVolumeClaimName: 'other' } } })).toThrow('persistentVolumeClaimName is immutable');
  });

  it('group snapshot kinds: status dropped on create and set by /status; both sources or a ref without namespace refused; handles immutable', () => {
    const store = createObjectStore();
    const G = 'groupsnapshot.storage.k8s.io/v1';
    const groupContent = (name: string, spec: Record<string, unknown> = {}) => ({
      apiVersion: G,
      kind: 'VolumeGroupSnapshotContent',
      metadata: { name },
      spec: { deletionPolicy: 'Delete', driver: 'ebs.csi.aws.com', source: { volumeHandles: ['vol-a', 'vol-b'] }, volumeGroupSnapshotRef: { name: 'g', namespace: 'default' }, ...spec },
    });
    const created = store.create('volumegroupsnapshotcontents', { ...groupContent('gc1'), status: { readyToUse: true } } as unknown as KubeObject);
    expect(created.status).toBeUndefined();
    expect(store.updateStatus('volumegroupsnapshotcontents', { ...created, status: { readyToUse: false, volumeGroupSnapshotHandle: 'gc1' } }).status).toEqual({ readyToUse: false, volumeGroupSnapshotHandle: 'gc1' });
    expect(() => store.create('volumegroupsnapshotcontents', groupContent('gc2', { source: { volumeHandles: ['v'], groupSnapshotHandles: { volumeGroupSnapshotHandle: 'h', volumeSnapshotHandles: ['s'] } } }) as unknown as KubeObject)).toThrow(
      'exactly one of volumeHandles and groupSnapshotHandles',
    );
    expect(() => store.create('volumegroupsnapshotcontents', groupContent('gc3', { volumeGroupSnapshotRef: { name: 'g' } }) as unknown as KubeObject)).toThrow('volumeGroupSnapshotRef.namespace');
    const current = store.get('volumegroupsnapshotcontents', 'gc1')!;
    expect(() => store.update('volumegroupsnapshotcontents', { ...current, spec: { ...(current.spec as object), source: { volumeHandles: ['vol-a'] } } })).toThrow('volumeHandles is immutable');
    const group = { apiVersion: G, kind: 'VolumeGroupSnapshot', metadata: { name: 'g', namespace: 'default' }, spec: { volumeGroupSnapshotClassName: 'group', source: { selector: { matchLabels: { app: 'db' } } } } };
    expect(store.create('volumegroupsnapshots', group as unknown as KubeObject).metadata.name).toBe('g');
    expect(() => store.create('volumegroupsnapshots', { ...group, metadata: { name: 'h', namespace: 'default' }, spec: { source: {} } } as unknown as KubeObject)).toThrow('exactly one of selector and volumeGroupSnapshotContentName');
  });

  it('strategic merge patch on a custom resource -> 415, as the API server answers; merge patch works', () => {
    const store = createObjectStore();
    store.create('volumesnapshotclasses', snapshotClass('ebs'));
    expect(() => store.patch('volumesnapshotclasses', 'ebs', undefined, 'strategic', { parameters: { a: 'b' } })).toThrow('unknown format');
    expect(store.patch('volumesnapshotclasses', 'ebs', undefined, 'merge', { parameters: { a: 'b' } }).parameters).toEqual({ a: 'b' });
  });
});

describe('snapshot kinds over HTTP', () => {
  let h: Harness;
  let home: string;
  const run = promisify(execFile);
  const kubectl = async (...args: string[]): Promise<string> =>
    (
      await run('/usr/bin/kubectl', ['--server', h.server.url, ...args], {
        env: { PATH: process.env.PATH, HOME: home, KUBECONFIG: join(home, 'none'), NO_PROXY: '127.0.0.1' },
        timeout: 20_000,
      })
    ).stdout;

  beforeAll(async () => {
    h = await startHarness();
    home = await mkdtemp(join(tmpdir(), 'volhook-snapshots-'));
  });
  afterAll(async () => {
    await h.server.close();
    await rm(home, { recursive: true, force: true });
  });

  it('discovery -> the group, its three resources with short names, status subresources for two', async () => {
    const res = await fetch(`${h.server.url}/apis/${GROUP}/v1`);
    const list = (await res.json()) as { groupVersion: string; resources: { name: string; namespaced: boolean; kind: string; shortNames?: string[] }[] };
    expect(list.groupVersion).toBe(`${GROUP}/v1`);
    expect(list.resources.map((r) => [r.name, r.namespaced, r.kind, r.shortNames])).toEqual([
      ['volumesnapshots', true, 'VolumeSnapshot', ['vs']],
      ['volumesnapshots/status', true, 'VolumeSnapshot', undefined],
      ['volumesnapshotcontents', false, 'VolumeSnapshotContent', ['vsc', 'vscs']],
      ['volumesnapshotcontents/status', false, 'VolumeSnapshotContent', undefined],
      ['volumesnapshotclasses', false, 'VolumeSnapshotClass', ['vsclass', 'vsclasses']],
    ]);
    const groups = (await (await fetch(`${h.server.url}/apis`)).json()) as { groups: { name: string }[] };
    expect(groups.groups.map((g) => g.name)).toContain(GROUP);
  });

  it('client-node CustomObjectsApi -> create, get, list, status patch, merge patch, delete', async () => {
    const api = h.kc.makeApiClient(CustomObjectsApi);
    await api.createClusterCustomObject({ group: GROUP, version: 'v1', plural: 'volumesnapshotclasses', body: snapshotClass('ebs-api') });
    const vs = (await api.createNamespacedCustomObject({ group: GROUP, version: 'v1', namespace: 'default', plural: 'volumesnapshots', body: snapshot('api-snap') })) as KubeObject;
    expect(vs.metadata.uid).toMatch(/^[0-9a-f-]{36}$/);
    const got = (await api.getNamespacedCustomObject({ group: GROUP, version: 'v1', namespace: 'default', plural: 'volumesnapshots', name: 'api-snap' })) as KubeObject;
    expect(got.spec).toEqual({ volumeSnapshotClassName: 'ebs', source: { persistentVolumeClaimName: 'data' } });
    const listed = (await api.listNamespacedCustomObject({ group: GROUP, version: 'v1', namespace: 'default', plural: 'volumesnapshots' })) as { items: KubeObject[] };
    expect(listed.items.map((i) => i.metadata.name)).toContain('api-snap');

    const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
    const withStatus = (await api.patchNamespacedCustomObjectStatus(
      { group: GROUP, version: 'v1', namespace: 'default', plural: 'volumesnapshots', name: 'api-snap', body: { status: { readyToUse: true, restoreSize: '4Gi' } } },
      merge,
    )) as KubeObject;
    expect(withStatus.status).toEqual({ readyToUse: true, restoreSize: '4Gi' });
    const labelled = (await api.patchNamespacedCustomObject(
      { group: GROUP, version: 'v1', namespace: 'default', plural: 'volumesnapshots', name: 'api-snap', body: { metadata: { labels: { a: 'b' } } } },
      merge,
    )) as KubeObject;
    expect(labelled.metadata.labels).toEqual({ a: 'b' });
    expect(labelled.status).toEqual({ readyToUse: true, restoreSize: '4Gi' });

    const bad = await failure(
      api.createClusterCustomObject({ group: GROUP, version: 'v1', plural: 'volumesnapshotcontents', body: content('bad', { source: {} }) }),
    );
    expect(bad).toMatchObject({ code: 422, reason: 'Invalid' });

    await api.deleteNamespacedCustomObject({ group: GROUP, version: 'v1', namespace: 'default', plural: 'volumesnapshots', name: 'api-snap' });
    expect(await failure(api.getNamespacedCustomObject({ group: GROUP, version: 'v1', namespace: 'default', plural: 'volumesnapshots', name: 'api-snap' }))).toMatchObject({
      code: 404,
      message: `volumesnapshots.${GROUP} "api-snap" not found`,
    });
  });

  it('client-node informer on volumesnapshotcontents -> add, status update and delete seen', async () => {
    const api = h.kc.makeApiClient(CustomObjectsApi);
    const list = () =>
      api.listClusterCustomObject({ group: GROUP, version: 'v1', plural: 'volumesnapshotcontents' }) as Promise<KubernetesListObject<KubernetesObject>>;
    const informer = makeInformer(h.kc, `/apis/${GROUP}/v1/volumesnapshotcontents`, list);
    const seen: string[] = [];
    informer.on('add', (o) => seen.push(`add:${o.metadata?.name}`));
    informer.on('update', (o) => seen.push(`update:${o.metadata?.name}:${String((o as { status?: { readyToUse?: boolean } }).status?.readyToUse)}`));
    informer.on('delete', (o) => seen.push(`delete:${o.metadata?.name}`));
    await informer.start();
    try {
      await api.createClusterCustomObject({ group: GROUP, version: 'v1', plural: 'volumesnapshotcontents', body: content('watched') });
      await vi.waitFor(() => expect(seen).toContain('add:watched'));
      await api.patchClusterCustomObjectStatus(
        { group: GROUP, version: 'v1', plural: 'volumesnapshotcontents', name: 'watched', body: { status: { readyToUse: true, snapshotHandle: 'snap-1' } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
      await vi.waitFor(() => expect(seen).toContain('update:watched:true'));
      await api.deleteClusterCustomObject({ group: GROUP, version: 'v1', plural: 'volumesnapshotcontents', name: 'watched' });
      await vi.waitFor(() => expect(seen).toContain('delete:watched'));
    } finally {
      await informer.stop();
    }
  });

  it('kubectl apply -f of upstream-style YAML twice -> created then configured; get vs / vsc / vsclass show the CRD columns', async () => {
    const path = join(home, 'snap.yaml');
    await writeFile(
      path,
      `apiVersion: snapshot.storage.k8s.io/v1
kind: VolumeSnapshotClass
metadata:
  name: csi-aws-vsc
driver: ebs.csi.aws.com
deletionPolicy: Delete
parameters:
  tagSpecification_1: "team=storage"
---
apiVersion: snapshot.storage.k8s.io/v1
kind: VolumeSnapshot
metadata:
  name: ebs-volume-snapshot
  namespace: default
spec:
  volumeSnapshotClassName: csi-aws-vsc
  source:
    persistentVolumeClaimName: ebs-claim
`,
    );
    expect(await kubectl('apply', '-f', path)).toContain('volumesnapshot.snapshot.storage.k8s.io/ebs-volume-snapshot created');
    await writeFile(path, `apiVersion: snapshot.storage.k8s.io/v1
kind: VolumeSnapshot
metadata:
  name: ebs-volume-snapshot
  namespace: default
  labels:
    backup: nightly
spec:
  volumeSnapshotClassName: csi-aws-vsc
  source:
    persistentVolumeClaimName: ebs-claim
`);
    expect(await kubectl('apply', '-f', path)).toContain('volumesnapshot.snapshot.storage.k8s.io/ebs-volume-snapshot configured');
    expect(h.store.get('volumesnapshots', 'ebs-volume-snapshot', 'default')?.metadata.labels).toEqual({ backup: 'nightly' });

    h.store.create('volumesnapshotcontents', content('snapcontent-1', { volumeSnapshotRef: { name: 'ebs-volume-snapshot', namespace: 'default' }, volumeSnapshotClassName: 'csi-aws-vsc' }));
    const current = h.store.get('volumesnapshots', 'ebs-volume-snapshot', 'default') as KubeObject;
    h.store.updateStatus('volumesnapshots', { ...current, status: { readyToUse: true, restoreSize: '4Gi', boundVolumeSnapshotContentName: 'snapcontent-1' } });

    const vs = (await kubectl('get', 'vs')).split('\n');
    expect(vs[0]).toMatch(/^NAME\s+READYTOUSE\s+SOURCEPVC\s+SOURCESNAPSHOTCONTENT\s+RESTORESIZE\s+SNAPSHOTCLASS\s+SNAPSHOTCONTENT\s+CREATIONTIME\s+AGE/);
    expect(vs[1]).toMatch(/^ebs-volume-snapshot\s+true\s+ebs-claim\s+4Gi\s+csi-aws-vsc\s+snapcontent-1\s/);
    const vsc = (await kubectl('get', 'volumesnapshotcontent')).split('\n');
    expect(vsc[0]).toMatch(/^NAME\s+READYTOUSE\s+RESTORESIZE\s+DELETIONPOLICY\s+DRIVER\s+VOLUMESNAPSHOTCLASS\s+VOLUMESNAPSHOT\s+VOLUMESNAPSHOTNAMESPACE\s+AGE/);
    expect(vsc[1]).toMatch(/^snapcontent-1\s+Delete\s+ebs.csi.aws.com\s+csi-aws-vsc\s+ebs-volume-snapshot\s+default\s/);
    expect(await kubectl('get', 'vsclass', 'csi-aws-vsc', '-o', 'jsonpath={.parameters.tagSpecification_1}')).toBe('team=storage');
  });
});
