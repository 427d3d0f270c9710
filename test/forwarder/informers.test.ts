/**
 * The forwarder's informers (lib/forwarder/informers.ts) and API access (lib/forwarder/kube)
 * against the local Kubernetes API: paged lists, watch events into the cache and handlers,
 * 410 -> relist with deletes for what vanished, optional resources, restarts; credentials from
 * a ServiceAccount's files and from a KubeConfig.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { V1PersistentVolume } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import { listAll, restList, watchResource, type WatchedResource } from '../../lib/forwarder/informers.js';
import { accessFromKubeConfig, inClusterAccess, serverAccess, TOKEN_REREAD_MS } from '../../lib/forwarder/kube/access.js';
import { kubeRest } from '../../lib/forwarder/kube/rest.js';
import { kubeSource } from '../../lib/forwarder/kube/source.js';
import { silentLogger } from '../../lib/forwarder/logger.js';
import { kubeConfigFor } from '../../lib/kube/index.js';
import { startKubeApiServer } from '../../lib/local/kube/index.js';
import { startKube, type KubeHarness } from '../kube/harness.js';
import { eventually } from './fake-backend.js';

const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function pv(name: string) {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name, managedFields: [{ manager: 'test', operation: 'Update' }] },
    spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], csi: { driver: 'ebs.csi.aws.com', volumeHandle: `vol-${name}` } },
  } as never;
}

async function kubeWith(count: number, historyLimit = 1000): Promise<KubeHarness> {
  const kube = await startKube({ store: { historyLimit } });
  cleanups.push(() => kube.close());
  for (let i = 0; i < count; i++) kube.store.create('persistentvolumes', pv(`pv-${i}`));
  return kube;
}

/** An informer of PersistentVolumes recording its events; the transform drops managedFields. */
function pvInformer(server: string, options: { path?: string; optional?: boolean } = {}) {
  const events: string[] = [];
  let restarts = 0;
  const informer: WatchedResource<V1PersistentVolume> = watchResource<V1PersistentVolume>({
    rest: kubeRest(serverAccess(server)),
    resource: 'persistentvolumes',
    path: options.path ?? '/api/v1/persistentvolumes',
    optional: options.optional ?? false,
    transform: ({ metadata, ...rest }) => {
      const { managedFields: _dropped, ...meta } = metadata ?? {};
      return { ...rest, metadata: meta };
    },
    handlers: {
      add: (o) => events.push(`add ${o.metadata?.name}`),
      update: (o) => events.push(`update ${o.metadata?.name}`),
      delete: (o) => events.push(`delete ${o.metadata?.name}`),
    },
    restartDelayMs: 20,
    logger: silentLogger,
    onRestart: () => restarts++,
  });
  cleanups.push(() => informer.stop());
  return { informer, events, restarts: () => restarts };
}

describe('lists', () => {
  it('pages of 3 over 7 objects -> three requests following `continue`, every object once, transformed, at the list resourceVersion', async () => {
    const kube = await kubeWith(7);
    const pages: { limit: number; continue?: string }[] = [];
    const list = restList<V1PersistentVolume>(kubeRest(serverAccess(kube.url)), '/api/v1/persistentvolumes');
    const all = await listAll((page) => (pages.push(page), list(page)), (o) => ({ ...o, transformed: true }), 3);
    expect(pages).toHaveLength(3);
    expect(pages[1]?.continue).toBeTruthy();
    expect(all.items.map((o) => o.metadata?.name).sort()).toEqual(['pv-0', 'pv-1', 'pv-2', 'pv-3', 'pv-4', 'pv-5', 'pv-6']);
    expect(all.items.every((o) => (o as { transformed?: boolean }).transformed)).toBe(true);
    expect(all.resourceVersion).toBe(kube.store.resourceVersion);
  });
});

describe('watchResource', () => {
  it('synced after its list; watched creates, updates and deletes -> cache and handlers, transformed', async () => {
    const kube = await kubeWith(3);
    const { informer, events } = pvInformer(kube.url);
    await informer.start();
    await eventually(() => informer.synced, 5_000, 'synced');
    expect(events.sort()).toEqual(['add pv-0', 'add pv-1', 'add pv-2']);
    events.length = 0;
    kube.store.create('persistentvolumes', pv('pv-new'));
    const changed = kube.store.get('persistentvolumes', 'pv-0')!;
    kube.store.update('persistentvolumes', { ...changed, metadata: { ...changed.metadata, labels: { a: 'b' } } } as never);
    kube.store.delete('persistentvolumes', 'pv-1');
    await eventually(() => events.length === 3, 5_000, 'three events');
    expect(events).toEqual(['add pv-new', 'update pv-0', 'delete pv-1']);
    expect(informer.cache.get('pv-0')?.metadata).toMatchObject({ labels: { a: 'b' } });
    expect(informer.cache.get('pv-0')?.metadata).not.toHaveProperty('managedFields');
    expect(informer.cache.get('pv-1')).toBeUndefined();
    expect(informer.cache.list().map((o) => o.metadata?.name).sort()).toEqual(['pv-0', 'pv-2', 'pv-new']);
  });

  it('the API server away while its history moves past the watch (410) -> relist: delete for what vanished, add for what came', async () => {
    const kube = await kubeWith(2, 3);
    const { informer, events } = pvInformer(kube.url);
    await informer.start();
    await eventually(() => informer.synced, 5_000, 'synced');
    const port = Number(new URL(kube.url).port);
    await kube.close();
    kube.store.delete('persistentvolumes', 'pv-0');
    for (let i = 0; i < 6; i++) kube.store.create('persistentvolumes', pv(`pv-later-${i}`));
    const requests: string[] = [];
    const again = await startKubeApiServer({ store: kube.store, port, host: '127.0.0.1', onRequest: (r) => requests.push(`${r.method} ${r.url} ${r.status}`) });
    cleanups.push(() => again.close());
    await eventually(() => informer.cache.list().length === 7, 10_000, 'relisted');
    expect(events).toContain('delete pv-0');
    expect(events.filter((e) => e.startsWith('add pv-later-'))).toHaveLength(6);
    // The resumed watch (at the old resourceVersion) was told it is gone; then a list from scratch.
    const resumed = requests.findIndex((r) => r.includes('watch=true') && r.includes('resourceVersion='));
    const relisted = requests.findIndex((r) => /^GET \/api\/v1\/persistentvolumes\?limit=500 200/.test(r));
    expect(resumed).toBeGreaterThanOrEqual(0);
    expect(relisted).toBeGreaterThan(resumed);
  });

  it('a resource the server does not serve: optional -> synced with none; not optional -> never synced, restarted', async () => {
    const kube = await startKube({ snapshots: false });
    cleanups.push(() => kube.close());
    const optional = pvInformer(kube.url, { path: '/apis/snapshot.storage.k8s.io/v1/volumesnapshotclasses', optional: true });
    await optional.informer.start();
    await eventually(() => optional.informer.synced, 5_000, 'optional synced');
    expect(optional.informer.cache.list()).toEqual([]);
    const required = pvInformer(kube.url, { path: '/apis/example.com/v1/nothings' });
    await required.informer.start();
    await eventually(() => required.restarts() >= 2, 5_000, 'restarted');
    expect(required.informer.synced).toBe(false);
  });

  it('an optional resource not served (no snapshot CRDs) -> not watched, listed again ever less often (capped); CRDs installed -> noticed, listed, watched', async () => {
    const kube = await startKube({ snapshots: false });
    cleanups.push(() => kube.close());
    const path = '/apis/snapshot.storage.k8s.io/v1/volumesnapshotclasses';
    const servedChanges: boolean[] = [];
    const names: string[] = [];
    const restartDelayMs = 20;
    const informer = watchResource<V1PersistentVolume>({
      rest: kubeRest(serverAccess(kube.url)),
      resource: 'volumesnapshotclasses',
      path,
      optional: true,
      handlers: { add: (o) => names.push(o.metadata?.name ?? '') },
      restartDelayMs,
      logger: silentLogger,
      onServed: (served) => servedChanges.push(served),
    });
    cleanups.push(() => informer.stop());
    const started = Date.now();
    await informer.start();
    await eventually(() => informer.synced, 5_000, 'synced empty');
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const absent = kube.requests.filter((r) => r.url.startsWith(path));
    const elapsed = Date.now() - started;
    // Delays 20, 40, 80… ms up to 90 × 20 ms = 1.8 s: about 7 lists in 3 s, never a watch.
    // Before, a list and a watch every 20 ms: some 150 of each.
    expect(absent.filter((r) => r.url.includes('watch=true'))).toEqual([]);
    expect(absent.every((r) => r.status === 404)).toBe(true);
    expect(absent.length).toBeGreaterThanOrEqual(5);
    expect(absent.length).toBeLessThanOrEqual(Math.ceil(Math.log2(90)) + 1 + Math.ceil(elapsed / (90 * restartDelayMs)));
    expect(servedChanges).toEqual([false]);

    // The control: the CRDs installed and a class made -> found within the cap, then watched.
    kube.installCrds({ snapshots: true });
    const snapshotClass = (name: string) => ({ apiVersion: 'snapshot.storage.k8s.io/v1', kind: 'VolumeSnapshotClass', metadata: { name }, driver: 'ebs.csi.aws.com', deletionPolicy: 'Delete' }) as never;
    kube.store.create('volumesnapshotclasses', snapshotClass('first'));
    await eventually(() => names.includes('first'), 90 * restartDelayMs + 2_000, 'the class listed once the CRDs are there');
    expect(servedChanges).toEqual([false, true]);
    kube.store.create('volumesnapshotclasses', snapshotClass('second'));
    await eventually(() => names.includes('second'), 2_000, 'the next class by the watch');
    expect(informer.cache.list().map((o) => o.metadata?.name).sort()).toEqual(['first', 'second']);
  }, 15_000);

  it('a watch the server ends at once with nothing in it -> a failure, restarted with a delay (not a tight loop)', async () => {
    let watches = 0;
    const server = createServer((req, res) => {
      if (req.url?.includes('watch=true')) {
        watches++;
        res.writeHead(200, { 'Content-Type': 'application/json' }).end();
        return;
      }
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ kind: 'List', apiVersion: 'v1', metadata: { resourceVersion: '7' }, items: [] }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise((resolve) => server.close(resolve)));
    const { informer, restarts } = pvInformer(`http://127.0.0.1:${(server.address() as { port: number }).port}`);
    await informer.start();
    await eventually(() => restarts() >= 3, 5_000, 'restarts');
    await informer.stop();
    // 20, 40, 80 ms… apart: a handful of watches, not thousands.
    expect(watches).toBeLessThan(20);
  });
});

describe('stopping', () => {
  it('a list the server never answers -> stop() aborts it (the server sees the request closed) and resolves', async () => {
    let listsClosed = 0;
    let listsSeen = 0;
    const server = createServer((req) => {
      listsSeen++;
      req.on('close', () => listsClosed++);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise((resolve) => server.close(resolve)));
    const { informer } = pvInformer(`http://127.0.0.1:${(server.address() as { port: number }).port}`);
    await informer.start();
    await eventually(() => listsSeen === 1, 5_000, 'the list sent');
    await informer.stop();
    await eventually(() => listsClosed === 1, 5_000, 'the list closed');
    expect(informer.synced).toBe(false);
  });
});

describe('API access', () => {
  it('a KubeConfig with a token -> its server, the bearer token on each request', async () => {
    const seen: (string | undefined)[] = [];
    const server = createServer((req, res) => {
      seen.push(req.headers.authorization);
      res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"kind":"PersistentVolume"}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise((resolve) => server.close(resolve)));
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    const access = accessFromKubeConfig(kubeConfigFor({ server: `${url}/`, token: 'sa-token' }));
    expect(access.server).toBe(url);
    await kubeRest(access).request('GET', '/api/v1/persistentvolumes/x');
    expect(seen).toEqual(['Bearer sa-token']);
  });

  it('an https KubeConfig cluster -> its CA and skip-verify carried to the request', async () => {
    const ca = Buffer.from('-----BEGIN CERTIFICATE-----\nnot really\n-----END CERTIFICATE-----\n').toString('base64');
    const withCa = await accessFromKubeConfig(kubeConfigFor({ server: 'https://10.0.0.1:6443', caData: ca, token: 't' })).requestOptions();
    expect(String(withCa.ca)).toContain('not really');
    expect(withCa.rejectUnauthorized).toBeUndefined();
    const insecure = await accessFromKubeConfig(kubeConfigFor({ server: 'https://10.0.0.1:6443', skipTLSVerify: true })).requestOptions();
    expect(insecure.rejectUnauthorized).toBe(false);
  });

  it('in the cluster -> the service host and port over https, the ServiceAccount token (read again after a minute) and CA', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'volhook-sa-'));
    writeFileSync(join(dir, 'token'), 'token-1\n');
    writeFileSync(join(dir, 'ca.crt'), 'the-ca');
    let now = 1_000_000;
    const access = await inClusterAccess({ env: { KUBERNETES_SERVICE_HOST: '10.96.0.1', KUBERNETES_SERVICE_PORT: '443' }, dir, now: () => now });
    expect(access.server).toBe('https://10.96.0.1:443');
    expect(await access.requestOptions()).toEqual({ headers: { Authorization: 'Bearer token-1' }, ca: Buffer.from('the-ca') });
    writeFileSync(join(dir, 'token'), 'token-2\n');
    now += TOKEN_REREAD_MS - 1;
    expect((await access.requestOptions()).headers.Authorization).toBe('Bearer token-1');
    now += 1;
    expect((await access.requestOptions()).headers.Authorization).toBe('Bearer token-2');
    const v6 = await inClusterAccess({ env: { KUBERNETES_SERVICE_HOST: 'fd00::1', KUBERNETES_SERVICE_PORT: '443' }, dir });
    expect(v6.server).toBe('https://[fd00::1]:443');
    await expect(inClusterAccess({ env: {}, dir })).rejects.toThrow(/KUBERNETES_SERVICE_HOST/);
  });

  it('where bin/forwarder.ts finds its API server: VOLHOOK_KUBE_SERVER, KUBECONFIG, ~/.kube/config, the ServiceAccount, else refused', () => {
    const files = new Set<string>();
    const source = (kubeServer: string | undefined, env: NodeJS.ProcessEnv) => kubeSource({ kubeServer, env, exists: (p) => files.has(p), serviceAccountDir: '/sa' });
    expect(source('http://127.0.0.1:1', { KUBECONFIG: '/k' })).toEqual({ kind: 'server', server: 'http://127.0.0.1:1' });
    expect(source(undefined, { KUBECONFIG: '/k', HOME: '/home/u' })).toEqual({ kind: 'kubeconfig' });
    expect(source(undefined, { HOME: '/home/u' })).toBeUndefined();
    files.add('/sa/token');
    expect(source(undefined, { HOME: '/home/u' })).toEqual({ kind: 'in-cluster' });
    files.add('/home/u/.kube/config');
    expect(source(undefined, { HOME: '/home/u' })).toEqual({ kind: 'kubeconfig' });
    expect(() => serverAccess('ftp://x')).toThrow(/http:\/\/ or https:\/\//);
  });
});
