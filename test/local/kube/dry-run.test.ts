/**
 * `dryRun=All` on every write verb, at the handler (a parsed request in, status and body out):
 * the same validation and the same answer as the write, and nothing stored — no object, no
 * watch event, no resourceVersion used. Each case runs the same request without dryRun too.
 */
import { describe, expect, it } from 'vitest';
import { handleResource, type ApiRequest, type ApiResponse } from '../../../lib/local/kube/handlers.js';
import { createObjectStore, type KubeApiError, type KubeObject, type LocalObjectStore, type WatchEvent } from '../../../lib/local/kube/index.js';
import { route } from '../../../lib/local/kube/routes.js';
import { refusalOf } from './helpers.js';

const CM = '/api/v1/namespaces/default/configmaps';

function request(method: string, path: string, options: { query?: string; body?: unknown; contentType?: string } = {}): ApiRequest {
  const target = route(path);
  if (target.kind !== 'resource') throw new Error(`not a resource path: ${path}`);
  const { body } = options;
  const text = body === undefined ? '' : typeof body === 'string' ? body : JSON.stringify(body);
  return { method, route: target, query: new URLSearchParams(options.query ?? ''), contentType: body === undefined ? '' : (options.contentType ?? 'application/json'), body: Buffer.from(text), table: false, userAgent: 'test/1.0' };
}


const configMap = (name: string, data: Record<string, string>, extra: Record<string, unknown> = {}) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default', ...extra }, data });

function seeded(): LocalObjectStore {
  const store = createObjectStore({ now: () => new Date('2026-12-01T10:00:00Z') });
  store.create('configmaps', configMap('settings', { a: '1' }));
  store.create('configmaps', configMap('guarded', { a: '1' }, { finalizers: ['example.com/keep'] }));
  return store;
}

/** Runs `send` (a dry run) and returns its answer, checking it left the store as it was: same objects, no event, same revision. */
function dry(store: LocalObjectStore, send: () => ApiResponse): ApiResponse {
  const revision = store.resourceVersion;
  const before = store.list('configmaps').items;
  const events: WatchEvent[] = [];
  const stop = store.watch('configmaps', { resourceVersion: revision }, (e) => events.push(e));
  const response = send();
  stop();
  expect(store.resourceVersion).toBe(revision);
  expect(store.list('configmaps').items).toEqual(before);
  expect(events).toEqual([]);
  return response;
}

/** What two answers share once the values a real write alone assigns (uid, resourceVersion) are set aside. */
const comparable = (body: unknown) => {
  const object = structuredClone(body) as KubeObject;
  delete (object.metadata as Partial<KubeObject['metadata']>).resourceVersion;
  delete (object.metadata as Partial<KubeObject['metadata']>).uid;
  return object;
};

describe('dryRun=All (handlers)', () => {
  it('create -> 201 with the object as it would be stored (defaults, uid, no resourceVersion); the same without dryRun stores it', () => {
    const store = seeded();
    const secret = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'token', namespace: 'default' }, stringData: { t: 'x' } };
    const answer = dry(store, () => handleResource(store, request('POST', '/api/v1/namespaces/default/secrets', { query: 'dryRun=All', body: secret })));
    expect(answer.status).toBe(201);
    expect(answer.body).toMatchObject({ type: 'Opaque', data: { t: 'eA==' }, metadata: { uid: expect.any(String) } });
    expect((answer.body as KubeObject).metadata).not.toHaveProperty('resourceVersion');
    expect(store.get('secrets', 'token', 'default')).toBeUndefined();

    const real = handleResource(store, request('POST', '/api/v1/namespaces/default/secrets', { body: secret }));
    expect(real.status).toBe(201);
    expect(comparable(real.body)).toEqual(comparable(answer.body));
    expect(store.get('secrets', 'token', 'default')?.metadata.resourceVersion).toBe((real.body as KubeObject).metadata.resourceVersion);
  });

  it('create of something invalid or existing -> refused exactly as without dryRun', () => {
    const store = seeded();
    const invalid = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web' }, spec: { selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'other' } }, spec: { containers: [{ name: 'a', image: 'a' }] } } } };
    const path = '/apis/apps/v1/namespaces/default/deployments';
    const dryRefusal = dry(store, () => ({ status: 0, body: refusalOf(() => handleResource(store, request('POST', path, { query: 'dryRun=All', body: invalid }))) }));
    const realRefusal = refusalOf(() => handleResource(store, request('POST', path, { body: invalid })));
    expect((dryRefusal.body as KubeApiError).toStatus()).toEqual(realRefusal.toStatus());
    expect(realRefusal.code).toBe(422);
    const exists = dry(store, () => ({ status: 0, body: refusalOf(() => handleResource(store, request('POST', CM, { query: 'dryRun=All', body: configMap('settings', {}) }))) }));
    expect((exists.body as KubeApiError).reason).toBe('AlreadyExists');
  });

  it('update (PUT) -> the updated object with the old resourceVersion; the same without dryRun stores it', () => {
    const store = seeded();
    const current = store.get('configmaps', 'settings', 'default') as KubeObject;
    const body = { ...current, data: { a: '2' } };
    const answer = dry(store, () => handleResource(store, request('PUT', `${CM}/settings`, { query: 'dryRun=All', body })));
    // The same object but for its managedFields, which now name the writer (the User-Agent's `test`) as its owner of data.a.
    const { managedFields, ...meta } = (answer.body as KubeObject).metadata;
    expect(answer).toEqual({ status: 200, body: { ...current, metadata: { ...current.metadata, ...meta, managedFields }, data: { a: '2' } } });
    expect(meta).toEqual((({ managedFields: _m, ...rest }) => rest)(current.metadata));
    expect(managedFields).toContainEqual(expect.objectContaining({ manager: 'test', operation: 'Update', fieldsV1: { 'f:data': { 'f:a': {} } } }));
    const real = handleResource(store, request('PUT', `${CM}/settings`, { body }));
    expect(comparable(real.body)).toEqual(comparable(answer.body));
    expect(store.get('configmaps', 'settings', 'default')?.data).toEqual({ a: '2' });
  });

  it.each([
    ['merge', 'application/merge-patch+json', { data: { a: '2' } }],
    ['json', 'application/json-patch+json', [{ op: 'replace', path: '/data/a', value: '2' }]],
    ['strategic', 'application/strategic-merge-patch+json', { data: { a: '2' } }],
    ['apply', 'application/apply-patch+yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata: { name: settings, namespace: default }\ndata: { a: "2" }\n'],
  ])('patch (%s) -> the patched object, nothing stored; the same without dryRun stores it', (type, contentType, patch) => {
    const store = seeded();
    const query = type === 'apply' ? 'fieldManager=alice&force=true' : '';
    const answer = dry(store, () => handleResource(store, request('PATCH', `${CM}/settings`, { query: `${query}&dryRun=All`, body: patch, contentType })));
    expect(answer.status).toBe(200);
    expect((answer.body as KubeObject).data).toEqual({ a: '2' });
    const real = handleResource(store, request('PATCH', `${CM}/settings`, { query, body: patch, contentType }));
    expect(comparable(real.body)).toEqual(comparable(answer.body));
    expect(store.get('configmaps', 'settings', 'default')?.data).toEqual({ a: '2' });
  });

  it('server-side apply of an absent object -> 201 as the create would answer; the same without dryRun creates it', () => {
    const store = seeded();
    const config = 'apiVersion: v1\nkind: ConfigMap\nmetadata: { name: fresh, namespace: default }\ndata: { a: "1" }\n';
    const options = { body: config, contentType: 'application/apply-patch+yaml' };
    const answer = dry(store, () => handleResource(store, request('PATCH', `${CM}/fresh`, { ...options, query: 'fieldManager=alice&dryRun=All' })));
    expect(answer.status).toBe(201);
    expect(store.get('configmaps', 'fresh', 'default')).toBeUndefined();
    const real = handleResource(store, request('PATCH', `${CM}/fresh`, { ...options, query: 'fieldManager=alice' }));
    expect(real.status).toBe(201);
    expect(comparable(real.body)).toEqual(comparable(answer.body));
  });

  it('delete -> the Status (or the object marked, with finalizers), nothing removed or marked; the same without dryRun deletes', () => {
    const store = seeded();
    const gone = dry(store, () => handleResource(store, request('DELETE', `${CM}/settings`, { query: 'dryRun=All' })));
    expect(gone.body).toMatchObject({ kind: 'Status', status: 'Success', details: { name: 'settings', kind: 'configmaps' } });
    const marked = dry(store, () => handleResource(store, request('DELETE', `${CM}/guarded`, { body: { kind: 'DeleteOptions', apiVersion: 'v1', dryRun: ['All'] } })));
    expect((marked.body as KubeObject).metadata.deletionTimestamp).toBe('2026-12-01T10:00:00Z');
    expect(store.get('configmaps', 'guarded', 'default')?.metadata).not.toHaveProperty('deletionTimestamp');

    expect(handleResource(store, request('DELETE', `${CM}/settings`)).body).toEqual(gone.body);
    expect(store.get('configmaps', 'settings', 'default')).toBeUndefined();
    expect(comparable(handleResource(store, request('DELETE', `${CM}/guarded`)).body)).toEqual(comparable(marked.body));
  });

  it('delete of a collection -> what would go, nothing gone; the same without dryRun deletes them', () => {
    const store = seeded();
    const answer = dry(store, () => handleResource(store, request('DELETE', CM, { query: 'dryRun=All' })));
    expect((answer.body as { items: KubeObject[] }).items.map((o) => o.metadata.name)).toEqual(['guarded', 'settings']);
    handleResource(store, request('DELETE', CM));
    expect(store.list('configmaps').items.map((o) => o.metadata.name)).toEqual(['guarded']);
  });

  it('delete of a namespace -> answered Terminating, the namespace and its contents untouched', () => {
    const store = seeded();
    store.create('namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team' } });
    store.create('configmaps', configMap('x', {}, { namespace: 'team' }));
    const revision = store.resourceVersion;
    const answer = handleResource(store, request('DELETE', '/api/v1/namespaces/team', { query: 'dryRun=All' }));
    expect(answer.body).toMatchObject({ status: { phase: 'Terminating' }, metadata: { deletionTimestamp: '2026-12-01T10:00:00Z' } });
    expect(store.resourceVersion).toBe(revision);
    expect(store.get('namespaces', 'team')?.status).toEqual({ phase: 'Active' });
    expect(store.get('configmaps', 'x', 'team')).toBeDefined();
  });

  it.each([
    ['POST', CM, 'CreateOptions', configMap('new', {})],
    ['PUT', `${CM}/settings`, 'UpdateOptions', configMap('settings', {})],
    ['PATCH', `${CM}/settings`, 'PatchOptions', { data: {} }],
    ['DELETE', `${CM}/settings`, 'DeleteOptions', undefined],
  ])('%s with dryRun other than All -> 422 naming the value, as kube-apiserver answers; nothing done', (method, path, kind, body) => {
    const store = seeded();
    const contentType = method === 'PATCH' ? 'application/merge-patch+json' : 'application/json';
    const err = dry(store, () => ({ status: 0, body: refusalOf(() => handleResource(store, request(method, path, { query: 'dryRun=Server', body, contentType }))) })).body as KubeApiError;
    expect(err.code).toBe(422);
    expect(err.message).toBe(`${kind}.meta.k8s.io "${method === 'PUT' ? 'settings' : ''}" is invalid: dryRun: Unsupported value: []string{"Server"}: supported values: "All"`);
    expect(err.details).toMatchObject({ group: 'meta.k8s.io', kind, causes: [{ reason: 'FieldValueNotSupported', field: 'dryRun' }] });
    // Control: dryRun=All on the same request is accepted.
    expect(dry(store, () => handleResource(store, request(method, path, { query: 'dryRun=All', body, contentType }))).status).toBeLessThan(300);
  });
});
