/**
 * Server-side apply in the store (`apply`): ownership per manager in metadata.managedFields,
 * pruning what a manager stops applying, conflicts and force, associative and atomic lists,
 * and how applies meet other writes — as kube-apiserver's field manager decides them.
 */
import { describe, expect, it } from 'vitest';
import { createObjectStore, isConflict, type KubeApiError, type KubeObject, type LocalObjectStore, type WatchEvent } from '../../../lib/local/kube/index.js';

const NS = 'default';

function thrown(fn: () => unknown): KubeApiError {
  try {
    fn();
  } catch (err) {
    return err as KubeApiError;
  }
  throw new Error('expected a throw');
}

/** `data` undefined: a configuration with no opinion on data (`{}` would own the empty map). */
const configMap = (data?: Record<string, string>, labels?: Record<string, string>) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'settings', namespace: NS, ...(labels ? { labels } : {}) },
  ...(data ? { data } : {}),
});

const deployment = (containers: unknown[], extra: Record<string, unknown> = {}) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: NS },
  spec: {
    selector: { matchLabels: { app: 'web' } },
    template: { metadata: { labels: { app: 'web' } }, spec: { containers } },
    ...extra,
  },
});

type Entry = { manager: string; operation: string; fieldsV1: Record<string, unknown>; time?: string; apiVersion: string };
const managed = (o: KubeObject | undefined): Entry[] => (o?.metadata.managedFields ?? []) as Entry[];
const managers = (o: KubeObject | undefined): string[] => managed(o).map((m) => `${m.manager}/${m.operation}`);
const fieldsOf = (o: KubeObject | undefined, manager: string): Record<string, unknown> | undefined => managed(o).find((m) => m.manager === manager)?.fieldsV1;
type Config = Record<string, unknown> & { kind: string; metadata: Record<string, unknown> & { name: string } };
const containersOf = (o: KubeObject): Array<Record<string, unknown>> => (o.spec as { template: { spec: { containers: Array<Record<string, unknown>> } } }).template.spec.containers;
const apply = (store: LocalObjectStore, config: Config, manager: string, force = false) =>
  store.apply(config.kind === 'Deployment' ? 'deployments' : 'configmaps', config.metadata.name, NS, config, { fieldManager: manager, force });

describe('server-side apply (store)', () => {
  it('absent object -> created, its fields owned by the manager (FieldsV1, operation Apply)', () => {
    const store = createObjectStore({ now: () => new Date('2026-12-01T10:00:00Z') });
    const created = apply(store, configMap({ a: '1' }, { tier: 'web' }), 'alice');
    expect(created.metadata.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(created.data).toEqual({ a: '1' });
    expect(created.metadata.managedFields).toEqual([
      { manager: 'alice', operation: 'Apply', apiVersion: 'v1', time: '2026-12-01T10:00:00Z', fieldsType: 'FieldsV1', fieldsV1: { 'f:data': { 'f:a': {} }, 'f:metadata': { 'f:labels': { 'f:tier': {} } } } },
    ]);
    expect(store.get('configmaps', 'settings', NS)).toEqual(created);
  });

  it('same manager omits a field it applied -> removed; a field another manager applied stays', () => {
    const store = createObjectStore();
    apply(store, configMap({ a: '1', b: '2' }), 'alice');
    apply(store, configMap({ c: '3' }), 'bob');
    const after = apply(store, configMap({ a: '1' }), 'alice');
    expect(after.data).toEqual({ a: '1', c: '3' });
    expect(fieldsOf(after, 'alice')).toEqual({ 'f:data': { 'f:a': {} } });
    expect(fieldsOf(after, 'bob')).toEqual({ 'f:data': { 'f:c': {} } });
  });

  it('another manager applies a different value for an owned field -> 409 naming the field and the owner; nothing changes', () => {
    const store = createObjectStore();
    const before = apply(store, configMap({ a: '1' }), 'alice');
    const err = thrown(() => apply(store, configMap({ a: '2' }), 'bob'));
    expect(isConflict(err)).toBe(true);
    expect(err.code).toBe(409);
    expect(err.message).toBe('Apply failed with 1 conflict: conflict with "alice": .data.a');
    expect(err.details?.causes).toEqual([{ reason: 'FieldManagerConflict', message: 'conflict with "alice"', field: '.data.a' }]);
    expect(store.get('configmaps', 'settings', NS)).toEqual(before);
  });

  it('another manager applies the same value -> no conflict, both own it; one letting go leaves the value', () => {
    const store = createObjectStore();
    apply(store, configMap({ a: '1' }), 'alice');
    const shared = apply(store, configMap({ a: '1' }), 'bob');
    expect(fieldsOf(shared, 'alice')).toEqual({ 'f:data': { 'f:a': {} } });
    expect(fieldsOf(shared, 'bob')).toEqual({ 'f:data': { 'f:a': {} } });
    const released = apply(store, configMap(), 'alice');
    expect(released.data).toEqual({ a: '1' });
    expect(managers(released)).toEqual(['bob/Apply']);
  });

  it('several conflicts -> one message per manager, listing its fields', () => {
    const store = createObjectStore();
    apply(store, configMap({ a: '1', b: '1' }), 'alice');
    apply(store, configMap({ c: '1' }), 'carol');
    const err = thrown(() => apply(store, configMap({ a: '2', b: '2', c: '2' }), 'bob'));
    expect(err.message).toBe('Apply failed with 3 conflicts: conflicts with "alice":\n- .data.a\n- .data.b\nconflicts with "carol":\n- .data.c');
  });

  it('force -> the value is taken, and the field with it: the old owner no longer has it', () => {
    const store = createObjectStore();
    apply(store, configMap({ a: '1', b: '1' }), 'alice');
    const forced = apply(store, configMap({ a: '2' }), 'bob', true);
    expect(forced.data).toEqual({ a: '2', b: '1' });
    expect(fieldsOf(forced, 'alice')).toEqual({ 'f:data': { 'f:b': {} } });
    expect(fieldsOf(forced, 'bob')).toEqual({ 'f:data': { 'f:a': {} } });
    // alice omitting `a` now leaves bob's value alone.
    expect(apply(store, configMap({ b: '1' }), 'alice').data).toEqual({ a: '2', b: '1' });
  });

  it('containers and env (keyed by name), ports (by containerPort and protocol) -> merged per item across managers', () => {
    const store = createObjectStore();
    const base = { name: 'app', image: 'app:1', env: [{ name: 'A', value: '1' }], ports: [{ containerPort: 8080 }] };
    apply(store, deployment([base]), 'alice');
    const sidecar = apply(store, deployment([{ name: 'app', env: [{ name: 'B', value: '2' }] }, { name: 'proxy', image: 'proxy:1' }]), 'bob');
    const [app, proxy] = containersOf(sidecar);
    expect(app?.env).toEqual([{ name: 'A', value: '1' }, { name: 'B', value: '2' }]);
    expect(app?.ports).toEqual([{ containerPort: 8080, protocol: 'TCP' }]);
    expect(proxy).toMatchObject({ name: 'proxy', image: 'proxy:1' });
    expect(fieldsOf(sidecar, 'alice')).toMatchObject({ 'f:spec': { 'f:template': { 'f:spec': { 'f:containers': { 'k:{"name":"app"}': { 'f:ports': { 'k:{"containerPort":8080,"protocol":"TCP"}': { '.': {}, 'f:containerPort': {} } } } } } } } });

    // alice drops her env var A: gone; bob's B and bob's container stay.
    const pruned = apply(store, deployment([{ ...base, env: [] }]), 'alice');
    const containers = containersOf(pruned);
    expect(containers.map((c) => c.name)).toEqual(['app', 'proxy']);
    expect(containers[0]?.env).toEqual([{ name: 'B', value: '2' }]);
  });

  it('an atomic list (a ClusterRole rules) -> replaced whole, so a second manager setting it conflicts', () => {
    const store = createObjectStore();
    const role = (verbs: string[]) => ({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'reader' }, rules: [{ apiGroups: [''], resources: ['pods'], verbs }] });
    store.apply('clusterroles', 'reader', undefined, role(['get']), { fieldManager: 'alice' });
    expect(thrown(() => store.apply('clusterroles', 'reader', undefined, role(['get', 'list']), { fieldManager: 'bob' })).message).toBe('Apply failed with 1 conflict: conflict with "alice": .rules');
    const replaced = store.apply('clusterroles', 'reader', undefined, role(['list']), { fieldManager: 'alice' });
    expect(replaced.rules).toEqual([{ apiGroups: [''], resources: ['pods'], verbs: ['list'] }]);
  });

  it('apply over an object that carries no managedFields (reset) -> its fields belong to before-first-apply: changing one conflicts, keeping it does not', () => {
    const store = createObjectStore();
    store.create('configmaps', configMap({ a: '1' }));
    store.patch('configmaps', 'settings', NS, 'merge', { metadata: { managedFields: [{}] } });
    expect(thrown(() => apply(store, configMap({ a: '2' }), 'alice')).message).toBe('Apply failed with 1 conflict: conflict with "before-first-apply" using v1: .data.a');
    const same = apply(store, configMap({ a: '1', b: '2' }), 'alice');
    expect(managers(same)).toEqual(['alice/Apply', 'before-first-apply/Update']);
    expect(same.data).toEqual({ a: '1', b: '2' });
  });

  it('an update after an apply -> recorded for its manager (operation Update), and the applier now conflicts on that field', () => {
    const store = createObjectStore({ now: () => new Date('2026-12-01T10:00:00Z') });
    apply(store, configMap({ a: '1' }), 'alice');
    const edited = store.patch('configmaps', 'settings', NS, 'merge', { data: { a: '9' } }, { fieldManager: 'kubectl-edit' });
    expect(managed(edited).find((m) => m.manager === 'kubectl-edit')).toEqual({
      manager: 'kubectl-edit', operation: 'Update', apiVersion: 'v1', time: '2026-12-01T10:00:00Z', fieldsType: 'FieldsV1', fieldsV1: { 'f:data': { 'f:a': {} } },
    });
    expect(fieldsOf(edited, 'alice')).toBeUndefined();
    expect(thrown(() => apply(store, configMap({ a: '1' }), 'alice')).message).toBe('Apply failed with 1 conflict: conflict with "kubectl-edit" using v1: .data.a');
  });

  it('a plain create -> tracked for its manager (the server tracks creates: probability 1); a later update by another manager takes the field it changed', () => {
    const store = createObjectStore({ now: () => new Date('2026-12-01T10:00:00Z') });
    const created = store.create('configmaps', configMap({ a: '1', b: '2' }), { fieldManager: 'kubectl-create' });
    expect(created.metadata.managedFields).toEqual([
      { manager: 'kubectl-create', operation: 'Update', apiVersion: 'v1', time: '2026-12-01T10:00:00Z', fieldsType: 'FieldsV1', fieldsV1: { 'f:data': { '.': {}, 'f:a': {}, 'f:b': {} } } },
    ]);
    const patched = store.patch('configmaps', 'settings', NS, 'merge', { data: { a: '2' } }, { fieldManager: 'kubectl-edit' });
    expect(fieldsOf(patched, 'kubectl-create')).toEqual({ 'f:data': { '.': {}, 'f:b': {} } });
    expect(fieldsOf(patched, 'kubectl-edit')).toEqual({ 'f:data': { 'f:a': {} } });
  });

  it('an object whose managedFields were reset -> later updates record none (skipNonApplied: only a create starts tracking)', () => {
    const store = createObjectStore();
    store.create('configmaps', configMap({ a: '1' }), { fieldManager: 'kubectl-create' });
    store.patch('configmaps', 'settings', NS, 'merge', { metadata: { managedFields: [{}] } });
    const patched = store.patch('configmaps', 'settings', NS, 'merge', { data: { a: '2' } }, { fieldManager: 'kubectl-edit' });
    expect(patched.metadata).not.toHaveProperty('managedFields');
  });

  it('managedFields: [{}] in an update -> the object forgets every manager', () => {
    const store = createObjectStore();
    apply(store, configMap({ a: '1' }), 'alice');
    const reset = store.patch('configmaps', 'settings', NS, 'merge', { metadata: { managedFields: [{}] } });
    expect(reset.metadata).not.toHaveProperty('managedFields');
  });

  it('the same apply again -> same object and resourceVersion, no watch event', () => {
    const store = createObjectStore();
    const first = apply(store, configMap({ a: '1' }, { tier: 'web' }), 'alice');
    const events: WatchEvent[] = [];
    store.watch('configmaps', { resourceVersion: store.resourceVersion }, (e) => events.push(e));
    expect(apply(store, configMap({ a: '1' }, { tier: 'web' }), 'alice')).toEqual(first);
    expect(events).toEqual([]);
  });

  it('status on the main resource of a kind with /status -> ignored: not applied, not owned', () => {
    const store = createObjectStore();
    const created = store.apply('deployments', 'web', NS, { ...deployment([{ name: 'app', image: 'app:1' }]), status: { replicas: 5 } }, { fieldManager: 'alice' });
    expect(created.status).toEqual({});
    expect(fieldsOf(created, 'alice')).not.toHaveProperty('f:status');
  });

  it('apply to /status -> only status written and owned (subresource status), without conflicting with the spec\'s applier', () => {
    const store = createObjectStore();
    apply(store, deployment([{ name: 'app', image: 'app:1' }], { replicas: 2 }), 'alice');
    const status = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: NS }, spec: { replicas: 9 }, status: { replicas: 2, readyReplicas: 1 } };
    const written = store.apply('deployments', 'web', NS, status, { fieldManager: 'controller', subresource: 'status' });
    expect(written.status).toEqual({ replicas: 2, readyReplicas: 1 });
    expect((written.spec as { replicas: number }).replicas).toBe(2);
    expect(managed(written).find((m) => m.manager === 'controller')).toMatchObject({ operation: 'Apply', subresource: 'status', fieldsV1: { 'f:status': { 'f:readyReplicas': {}, 'f:replicas': {} } } });
    // Control: the same status through the main resource is not written (status is reset there).
    expect(apply(store, { ...status, spec: {}, status: { replicas: 7 } }, 'other').status).toEqual({ replicas: 2, readyReplicas: 1 });
  });

  it('more than ten update managers -> the oldest merged into ancient-changes, ten update entries left', () => {
    let second = 0;
    const store = createObjectStore({ now: () => new Date(Date.UTC(2026, 11, 1, 10, 0, second)) });
    apply(store, configMap({ a: '1' }), 'alice');
    for (let i = 0; i < 12; i++) {
      second++;
      store.patch('configmaps', 'settings', NS, 'merge', { data: { [`k${i}`]: 'v' } }, { fieldManager: `editor-${String(i).padStart(2, '0')}` });
    }
    const entries = managed(store.get('configmaps', 'settings', NS));
    const updates = entries.filter((m) => m.operation === 'Update');
    expect(updates).toHaveLength(10);
    expect(updates.map((m) => m.manager)).toEqual(['ancient-changes', ...Array.from({ length: 9 }, (_, i) => `editor-${String(i + 3).padStart(2, '0')}`)]);
    expect(updates[0]?.fieldsV1).toEqual({ 'f:data': { 'f:k0': {}, 'f:k1': {}, 'f:k2': {} } });
  });

  it('re-applied in a later second, configurations that differ from the live object only until conversion or defaulting (stringData; fieldRef without apiVersion) -> unchanged, their old times kept', () => {
    let now = new Date('2026-12-01T10:00:00Z');
    const store = createObjectStore({ now: () => now });
    const secret = (token: string) => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'token', namespace: NS }, stringData: { token } });
    const first = store.apply('secrets', 'token', NS, secret('abc'), { fieldManager: 'alice' });
    expect(first.data).toEqual({ token: 'YWJj' });
    expect(first).not.toHaveProperty('stringData');
    expect(fieldsOf(first, 'alice')).toEqual({ 'f:stringData': { 'f:token': {} } });
    const fieldRef = [{ name: 'app', image: 'app:1', env: [{ name: 'NS', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } }] }];
    const deployed = apply(store, deployment(fieldRef), 'alice');
    expect(containersOf(deployed)[0]?.env).toEqual([{ name: 'NS', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } } }]);

    now = new Date('2026-12-01T10:00:05Z');
    expect(store.apply('secrets', 'token', NS, secret('abc'), { fieldManager: 'alice' })).toEqual(first);
    expect(apply(store, deployment(fieldRef), 'alice')).toEqual(deployed);
    // Control: a real change in the later second is stored, stamped with that second.
    const changed = store.apply('secrets', 'token', NS, secret('xyz'), { fieldManager: 'alice' });
    expect(changed.metadata.resourceVersion).not.toBe(first.metadata.resourceVersion);
    expect(managed(changed)[0]?.time).toBe('2026-12-01T10:00:05Z');
  });

  it('kubectl applying over a client-side applied object -> takes the fields whose live value is still the last-applied one, and keeps the annotation current', () => {
    const store = createObjectStore();
    const lastApplied = JSON.stringify(configMap({ a: '1' }));
    store.create('configmaps', { ...configMap({ a: '1' }), metadata: { name: 'settings', namespace: NS, annotations: { 'kubectl.kubernetes.io/last-applied-configuration': lastApplied } } });
    // Another manager gets the same change refused: its fields are their creator's.
    expect(isConflict(thrown(() => apply(store, configMap({ a: '2' }), 'other')))).toBe(true);
    const migrated = apply(store, configMap({ a: '2' }), 'kubectl');
    expect(migrated.data).toEqual({ a: '2' });
    expect(JSON.parse(migrated.metadata.annotations?.['kubectl.kubernetes.io/last-applied-configuration'] ?? '{}')).toEqual(configMap({ a: '2' }));
  });

  it('a configuration the schema refuses -> 400 naming the field (unknown field, duplicate list key, wrong type); nothing stored', () => {
    const store = createObjectStore();
    const unknown = thrown(() => apply(store, { ...configMap({ a: '1' }), dataa: {} }, 'alice'));
    expect([unknown.code, unknown.message]).toEqual([400, 'failed to create typed patch object (default/settings; /v1, Kind=ConfigMap): .dataa: field not declared in schema']);
    const duplicate = thrown(() => apply(store, deployment([{ name: 'app', image: 'a' }, { name: 'app', image: 'b' }]), 'alice'));
    expect(duplicate.message).toBe('failed to create typed patch object (default/web; apps/v1, Kind=Deployment): .spec.template.spec.containers: duplicate entries for key [name="app"]');
    const wrongType = thrown(() => apply(store, deployment([{ name: 'app', image: 'a' }], { replicas: 'two' }), 'alice'));
    expect(wrongType.message).toBe('failed to create typed patch object (default/web; apps/v1, Kind=Deployment): .spec.replicas: expected numeric (int or float), got string');
    expect(store.list('configmaps').items.concat(store.list('deployments').items)).toEqual([]);
  });

  it('a configuration with managedFields, another kind, or another name -> 400, as the API server refuses it', () => {
    const store = createObjectStore();
    expect(thrown(() => apply(store, { ...configMap({}), metadata: { name: 'settings', namespace: NS, managedFields: [] } }, 'alice')).message).toBe('metadata.managedFields must be nil');
    expect(thrown(() => store.apply('configmaps', 'settings', NS, { ...configMap({}), kind: 'Secret' }, { fieldManager: 'alice' })).message).toBe('invalid object type: /v1, Kind=Secret');
    expect(thrown(() => store.apply('configmaps', 'other', NS, configMap({}), { fieldManager: 'alice' })).message).toBe('the name of the object (settings) does not match the name on the URL (other)');
    // Control: the same configuration, as the endpoint expects it.
    expect(store.apply('configmaps', 'settings', NS, configMap({}), { fieldManager: 'alice' }).metadata.name).toBe('settings');
  });
});
