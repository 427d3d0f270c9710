/**
 * The in-memory object store: the single source of truth that the HTTP server and the
 * in-process controllers share. All decisions a real API server makes on writes (system
 * fields, defaults, validation, optimistic concurrency, finalizers, namespace lifecycle) are
 * made here, so both paths behave the same.
 */
import { randomUUID } from 'node:crypto';
import { resizeRefusal } from './claim-resize.js';
import { applyDefaults, defaultEventTimes, defaultStorageClassName, statusOnCreate } from './defaults.js';
import { KubeApiError, alreadyExists, badRequest, conflict, forbidden, invalid, notFound } from './errors.js';
import { clone, deepEqual, isObject, kubeTimestamp, withoutNulls } from './json.js';
import { applyJsonPatch, applyMergePatch } from './patch.js';
import { RESOURCE_NAMES, apiVersionOf, resourceInfo, type ResourceInfo } from './resources.js';
import { parseFieldSelector, parseLabelSelector } from './selectors.js';
import { applyStrategicMergePatch } from './strategic.js';
import type { ApplyOptions, KubeObject, ListOptions, ObjectMeta, ObjectStore, PatchType, ResourceName, WatchEvent, WriteOptions } from './types.js';
import { ChangeLog, type WatchFilter } from './watch.js';
import { validateCreate, validateUpdate } from './validation.js';
import { allocateClusterIp, keepAllocated } from './workload-defaults.js';
import { decodeFields } from './field-validation.js';
import { applyWithFieldManager, keepTimestampsOfNoop, managedFieldsAfterUpdate, type FieldManagerScope, type ManagedFieldsEntry } from './ssa/index.js';

export interface ObjectStoreOptions {
  /** Changes kept for resuming watches; older resourceVersions get 410 Expired. Default 10 000. */
  historyLimit?: number;
  /** Namespaces that exist from the start. Default: default, kube-system, kube-public, kube-node-lease. */
  namespaces?: string[];
  /** Clock for timestamps; tests may pin it. */
  now?: () => Date;
  /** Where exceptions thrown by watch listeners go (they never fail the write). Default console.error. */
  onListenerError?: (err: unknown) => void;
  /**
   * Add `kubernetes.io/pvc-protection` / `kubernetes.io/pv-protection` on create, as the
   * StorageObjectInUseProtection admission plugin does. Off by default: only turn it on when
   * something plays the protection controllers that remove them, or deletes never finish.
   */
  storageObjectInUseProtection?: boolean;
}

const PROTECTION_FINALIZERS: Partial<Record<ResourceName, string>> = {
  persistentvolumeclaims: 'kubernetes.io/pvc-protection',
  persistentvolumes: 'kubernetes.io/pv-protection',
};

export interface DeleteOptions {
  preconditions?: { uid?: string; resourceVersion?: string };
  /** `dryRun=All`: answered as the delete would be; nothing removed or marked. */
  dryRun?: boolean;
}

/** The managedFields an apply computed (null: none); undefined: recorded as an update would. */
type Managed = ManagedFieldsEntry[] | null | undefined;

/** `ObjectStore` plus what the HTTP server (and tests) need beyond the controllers' interface. */
export interface LocalObjectStore extends ObjectStore {
  /** The newest resourceVersion handed out (a store-wide counter, as etcd's revision). */
  readonly resourceVersion: string;
  /** Deletes every object the options select, each as `delete` would; returns what it deleted or marked. */
  deleteCollection(resource: ResourceName, options?: ListOptions, write?: { dryRun?: boolean }): KubeObject[];
  /**
   * One page of `list`: the objects whose `namespace/name` key is at or after `from`, at most
   * `limit` (0: all), and how many more there are. Only the page is copied.
   */
  listPage(resource: ResourceName, options: ListOptions, page: { from?: string; limit: number }): { items: KubeObject[]; remaining: number; resourceVersion: string };
}

const PROTECTED_NAMESPACES = new Set(['default', 'kube-system', 'kube-public']);
const NAME_SUFFIX = 'bcdfghjklmnpqrstvwxz2456789';

function randomSuffix(): string {
  let out = '';
  for (let i = 0; i < 5; i++) out += NAME_SUFFIX[Math.floor(Math.random() * NAME_SUFFIX.length)];
  return out;
}

/** Lists are ordered as etcd orders keys, which is also what `continue` tokens rely on. */
/** The order of lists, and the key list pages are cut on (a continue token names the last one served). */
export const storageKey = (o: KubeObject): string => `${o.metadata.namespace ?? ''}/${o.metadata.name}`;

function selectableFields(info: ResourceInfo): Set<string> {
  return new Set(['metadata.name', ...(info.namespaced ? ['metadata.namespace'] : []), ...info.fields]);
}

export function createObjectStore(options: ObjectStoreOptions = {}): LocalObjectStore {
  return new MemoryStore(options);
}

class MemoryStore implements LocalObjectStore {
  private rv = 0;
  private readonly tables = new Map<ResourceName, Map<string, KubeObject>>();
  private readonly log: ChangeLog;
  private readonly now: () => Date;
  private readonly protection: boolean;

  constructor(options: ObjectStoreOptions) {
    this.now = options.now ?? (() => new Date());
    this.protection = options.storageObjectInUseProtection ?? false;
    this.log = new ChangeLog(Math.max(1, options.historyLimit ?? 10_000), options.onListenerError ?? ((err) => console.error('watch listener failed:', err)));
    for (const name of RESOURCE_NAMES) this.tables.set(name, new Map());
    for (const name of options.namespaces ?? ['default', 'kube-system', 'kube-public', 'kube-node-lease']) {
      this.create('namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    }
  }

  get resourceVersion(): string {
    return String(this.rv);
  }

  get(resource: ResourceName, name: string, namespace?: string): KubeObject | undefined {
    const found = this.find(resourceInfo(resource), name, namespace);
    return found && clone(found);
  }

  list(resource: ResourceName, options: ListOptions = {}): { items: KubeObject[]; resourceVersion: string } {
    const { items, resourceVersion } = this.listPage(resource, options, { limit: 0 });
    return { items, resourceVersion };
  }

  listPage(resource: ResourceName, options: ListOptions, page: { from?: string; limit: number }): { items: KubeObject[]; remaining: number; resourceVersion: string } {
    const info = resourceInfo(resource);
    const filter = this.filter(info, options);
    const { from } = page;
    const selected = [...this.table(resource).values()]
      .filter((o) => (filter.namespace === undefined || o.metadata.namespace === filter.namespace) && filter.matches(o))
      .filter((o) => from === undefined || storageKey(o) >= from)
      .sort((a, b) => (storageKey(a) < storageKey(b) ? -1 : 1));
    const items = page.limit > 0 ? selected.slice(0, page.limit) : selected;
    return { items: items.map(clone), remaining: selected.length - items.length, resourceVersion: this.resourceVersion };
  }

  create(resource: ResourceName, input: Omit<KubeObject, 'metadata'> & { metadata: Partial<ObjectMeta> }, options: WriteOptions = {}): KubeObject {
    return this.createObject(resourceInfo(resource), input, options, undefined);
  }

  private createObject(info: ResourceInfo, input: unknown, options: WriteOptions, managed: Managed): KubeObject {
    const resource = info.resource;
    const object = decodeFields(info, this.typed(info, input), options, { from: 'body' });
    const meta = object.metadata;
    if (meta.resourceVersion) throw badRequest('resourceVersion should not be set on objects to be created');
    const namespace = this.namespaceOf(info, meta);
    if (!meta.name && meta.generateName) {
      do meta.name = `${meta.generateName}${randomSuffix()}`;
      while (this.table(resource).has(this.key(info, meta.name, namespace)));
    }
    meta.name ??= '';
    const now = kubeTimestamp(this.now());
    meta.uid = randomUUID();
    meta.creationTimestamp = now;
    for (const field of ['deletionTimestamp', 'deletionGracePeriodSeconds', 'generation', 'selfLink'] as const) delete meta[field];
    const status = statusOnCreate(resource, now);
    if (status === null) delete object.status;
    else if (status) object.status = status;
    applyDefaults(resource, object);
    if (resource === 'events') defaultEventTimes(object, now);
    if (resource === 'persistentvolumeclaims') {
      const className = defaultStorageClassName(object, [...this.table('storageclasses').values()]);
      if (className && isObject(object.spec)) object.spec.storageClassName = className;
    }
    if (resource === 'services') allocateClusterIp(object, new Set([...this.table('services').values()].map((s) => String(isObject(s.spec) ? s.spec.clusterIP : ''))));
    const protection = this.protection ? PROTECTION_FINALIZERS[resource] : undefined;
    if (protection && !(meta.finalizers ?? []).includes(protection)) meta.finalizers = [...(meta.finalizers ?? []), protection];
    this.setManagedFields(object, managed !== undefined ? managed : managedFieldsAfterUpdate(this.scope(info, 'main'), undefined, object, options.fieldManager ?? 'unknown'));
    const errors = validateCreate(info, object);
    if (errors.length > 0) throw invalid(info.kind, info.group, meta.name, errors);
    if (namespace !== undefined) this.checkNamespaceAcceptsContent(namespace);
    const key = this.key(info, meta.name, namespace);
    if (this.table(resource).has(key)) throw alreadyExists(info, meta.name);
    // A dry-run create is answered before storage would assign a resourceVersion: it has none.
    if (options.dryRun) return clone(object);
    meta.resourceVersion = String(++this.rv);
    this.table(resource).set(key, object);
    this.log.publish({ rv: this.rv, resource, type: 'ADDED', object });
    return clone(object);
  }

  update(resource: ResourceName, input: KubeObject, options: WriteOptions = {}): KubeObject {
    return this.replace(resourceInfo(resource), input, 'main', options);
  }

  updateStatus(resource: ResourceName, input: KubeObject, options: WriteOptions = {}): KubeObject {
    const info = resourceInfo(resource);
    if (!info.status) throw new KubeApiError('NotFound', 'the server could not find the requested resource');
    return this.replace(info, input, 'status', options);
  }

  patch(
    resource: ResourceName,
    name: string,
    namespace: string | undefined,
    type: PatchType,
    patch: unknown,
    options: WriteOptions & { subresource?: 'status' } = {},
  ): KubeObject {
    const info = resourceInfo(resource);
    if (options.subresource === 'status' && !info.status) throw new KubeApiError('NotFound', 'the server could not find the requested resource');
    if (type === 'strategic' && !info.strategicMerge) {
      throw new KubeApiError(
        'UnsupportedMediaType',
        'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml',
      );
    }
    const existing = this.find(info, name, namespace);
    if (!existing) throw notFound(info, name);
    const apply = type === 'json' ? applyJsonPatch : type === 'merge' ? applyMergePatch : applyStrategicMergePatch;
    const patched = apply(existing, patch === undefined ? patch : JSON.parse(JSON.stringify(patch))) as unknown;
    if (!isObject(patched) || !isObject(patched.metadata)) throw badRequest('the patch removed the object metadata');
    const object = decodeFields(info, patched as KubeObject, options, { from: 'patch' });
    if (object.metadata.name !== name) {
      throw badRequest(`the name of the object (${String(object.metadata.name)}) does not match the name on the URL (${name})`);
    }
    if (info.namespaced && object.metadata.namespace !== existing.metadata.namespace) {
      throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
    }
    return this.commit(info, existing, object, options.subresource === 'status' ? 'status' : 'main', options);
  }

  apply(resource: ResourceName, name: string, namespace: string | undefined, config: unknown, options: ApplyOptions): KubeObject {
    const info = resourceInfo(resource);
    if (options.subresource === 'status' && !info.status) throw new KubeApiError('NotFound', 'the server could not find the requested resource');
    if (!isObject(config)) throw badRequest('the apply configuration must be an object');
    const applied = JSON.parse(JSON.stringify(config)) as KubeObject;
    const apiVersion = apiVersionOf(info);
    if (applied.apiVersion !== apiVersion || applied.kind !== info.kind) {
      const [group, version] = typeof applied.apiVersion === 'string' && applied.apiVersion.includes('/') ? applied.apiVersion.split('/') : ['', applied.apiVersion ?? ''];
      throw badRequest(`invalid object type: ${group}/${String(version)}, Kind=${String(applied.kind ?? '')}`);
    }
    if (!isObject(applied.metadata)) applied.metadata = {} as ObjectMeta;
    const meta = applied.metadata;
    if (!info.namespaced) delete meta.namespace;
    else if (!meta.namespace) meta.namespace = namespace as string;
    else if (meta.namespace !== namespace) throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
    if (meta.name !== name) throw badRequest(`the name of the object (${String(meta.name ?? '')}) does not match the name on the URL (${name})`);
    const existing = this.find(info, name, namespace);
    if (!existing && options.subresource) throw notFound(info, name);
    const mode = options.subresource === 'status' ? 'status' : 'main';
    const scope = this.scope(info, mode);
    const { object, managedFields } = applyWithFieldManager(scope, existing, applied, options.fieldManager, options.force ?? false);
    const candidate = withoutNulls(object) as KubeObject;
    const write = { ...(options.dryRun ? { dryRun: true } : {}) };
    if (!existing) return this.createObject(info, candidate, write, managedFields ?? null);
    return this.commit(info, existing, candidate, mode, write, managedFields ?? null);
  }

  delete(resource: ResourceName, name: string, namespace?: string, options: DeleteOptions = {}): KubeObject {
    const info = resourceInfo(resource);
    const existing = this.find(info, name, namespace);
    if (!existing) throw notFound(info, name);
    const { uid, resourceVersion } = options.preconditions ?? {};
    if (uid && uid !== existing.metadata.uid) {
      throw conflict(info, name, `Precondition failed: UID in precondition: ${uid}, UID in object meta: ${existing.metadata.uid}`);
    }
    if (resourceVersion && resourceVersion !== existing.metadata.resourceVersion) {
      throw conflict(info, name, `Precondition failed: ResourceVersion in precondition: ${resourceVersion}, ResourceVersion in object meta: ${existing.metadata.resourceVersion}`);
    }
    const dry = options.dryRun ?? false;
    if (resource === 'namespaces') return this.deleteNamespace(existing, dry);
    if ((existing.metadata.finalizers ?? []).length === 0) return this.remove(info, existing, dry);
    if (existing.metadata.deletionTimestamp) return clone(existing);
    const next = clone(existing);
    next.metadata.deletionTimestamp = kubeTimestamp(this.now());
    next.metadata.deletionGracePeriodSeconds = 0;
    return this.store(info, existing, next, dry);
  }

  deleteCollection(resource: ResourceName, options: ListOptions = {}, write: { dryRun?: boolean } = {}): KubeObject[] {
    const dryRun = write.dryRun ?? false;
    return this.list(resource, options).items.map((o) => this.delete(resource, o.metadata.name, o.metadata.namespace, { dryRun }));
  }

  watch(resource: ResourceName, options: ListOptions & { resourceVersion?: string }, onEvent: (event: WatchEvent) => void): () => void {
    const info = resourceInfo(resource);
    const filter = this.filter(info, options);
    const rv = options.resourceVersion;
    if (rv === undefined || rv === '' || rv === '0') {
      const initial = [...this.table(resource).values()].filter((o) => (filter.namespace === undefined || o.metadata.namespace === filter.namespace) && filter.matches(o));
      return this.log.subscribe(filter, { initial, currentRv: this.rv }, onEvent);
    }
    if (!/^\d+$/.test(rv)) throw badRequest(`invalid resource version "${rv}"`);
    return this.log.subscribe(filter, { rv: Number(rv) }, onEvent);
  }

  // ---- internals ----

  private table(resource: ResourceName): Map<string, KubeObject> {
    return this.tables.get(resource) as Map<string, KubeObject>;
  }

  private key(info: ResourceInfo, name: string, namespace: string | undefined): string {
    return info.namespaced ? `${namespace ?? ''}/${name}` : name;
  }

  private find(info: ResourceInfo, name: string, namespace: string | undefined): KubeObject | undefined {
    if (info.namespaced && !namespace) return undefined;
    return this.table(info.resource).get(this.key(info, name, namespace));
  }

  private filter(info: ResourceInfo, options: ListOptions): WatchFilter {
    const labels = parseLabelSelector(options.labelSelector);
    const fields = parseFieldSelector(options.fieldSelector, selectableFields(info));
    const filter: WatchFilter = { resource: info.resource, matches: (o) => labels(o.metadata.labels) && fields(o) };
    if (info.namespaced && options.namespace) filter.namespace = options.namespace;
    return filter;
  }

  /**
   * A copy as it would arrive over HTTP (JSON round trip: Dates become strings, undefined
   * fields vanish), with apiVersion/kind checked and filled in.
   */
  private typed(info: ResourceInfo, input: unknown): KubeObject {
    if (!isObject(input)) throw badRequest('the request body must be a JSON object');
    const object = JSON.parse(JSON.stringify(input)) as KubeObject;
    const apiVersion = apiVersionOf(info);
    if (object.kind !== undefined && object.kind !== info.kind) {
      throw badRequest(`the kind of the object (${String(object.kind)}) does not match the resource ${info.resource} (${info.kind})`);
    }
    if (object.apiVersion !== undefined && object.apiVersion !== apiVersion) {
      throw badRequest(`the API version of the object (${String(object.apiVersion)}) does not match the expected API version (${apiVersion})`);
    }
    object.apiVersion = apiVersion;
    object.kind = info.kind;
    if (!isObject(object.metadata)) object.metadata = {} as ObjectMeta;
    return object;
  }

  /** Namespaced objects must name their namespace; cluster-scoped ones lose theirs, as on the server. */
  private namespaceOf(info: ResourceInfo, meta: Partial<ObjectMeta>): string | undefined {
    if (!info.namespaced) {
      delete meta.namespace;
      return undefined;
    }
    if (!meta.namespace) throw badRequest(`${info.kind} needs metadata.namespace`);
    return meta.namespace;
  }

  private checkNamespaceAcceptsContent(namespace: string): void {
    const ns = this.table('namespaces').get(namespace);
    if (!ns) throw notFound(resourceInfo('namespaces'), namespace);
    if (ns.metadata.deletionTimestamp) {
      throw forbidden(`unable to create new content in namespace ${namespace} because it is being terminated`, { name: namespace, kind: 'namespaces' });
    }
  }

  private replace(info: ResourceInfo, input: KubeObject, mode: 'main' | 'status', options: WriteOptions): KubeObject {
    const object = decodeFields(info, this.typed(info, input), options, { from: 'body' });
    const namespace = info.namespaced ? this.namespaceOf(info, object.metadata) : undefined;
    const existing = this.find(info, object.metadata.name, namespace);
    if (!existing) throw notFound(info, object.metadata.name ?? '');
    return this.commit(info, existing, object, mode, options);
  }

  private scope(info: ResourceInfo, mode: 'main' | 'status'): FieldManagerScope {
    return { info, now: kubeTimestamp(this.now()), ...(mode === 'status' ? { subresource: 'status' as const } : {}) };
  }

  private setManagedFields(object: KubeObject, entries: ManagedFieldsEntry[] | null | undefined): void {
    if (entries) object.metadata.managedFields = entries;
    else delete object.metadata.managedFields;
  }

  /**
   * Turns a client's full object into the next stored state of `existing`: checks the
   * resourceVersion and uid preconditions, keeps system fields, keeps status (main) or only
   * status (status subresource), defaults, validates, records the write in managedFields,
   * and removes the object when it is being deleted and its last finalizer is gone.
   */
  private commit(info: ResourceInfo, existing: KubeObject, candidate: KubeObject, mode: 'main' | 'status', options: WriteOptions, managed?: Managed): KubeObject {
    const meta = existing.metadata;
    const rv = candidate.metadata.resourceVersion;
    if (rv && rv !== meta.resourceVersion) throw conflict(info, meta.name);
    if (candidate.metadata.uid && candidate.metadata.uid !== meta.uid) {
      throw conflict(info, meta.name, `Precondition failed: UID in precondition: ${candidate.metadata.uid}, UID in object meta: ${meta.uid}`);
    }
    let next: KubeObject;
    if (mode === 'status') {
      next = clone(existing);
      if (candidate.status === undefined) delete next.status;
      else next.status = clone(candidate.status);
    } else {
      next = clone(candidate);
      if (info.status) {
        if (existing.status === undefined) delete next.status;
        else next.status = clone(existing.status);
      }
      const system = ['name', 'namespace', 'uid', 'creationTimestamp', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'generation'] as const;
      for (const field of system) {
        if (meta[field] === undefined) delete next.metadata[field];
        else next.metadata[field] = meta[field] as never;
      }
      delete next.metadata.selfLink;
    }
    next.metadata.resourceVersion = meta.resourceVersion;
    applyDefaults(info.resource, next);
    if (info.resource === 'services') keepAllocated(next, existing);
    if (info.resource === 'persistentvolumes') this.stampPhaseTransition(existing, next);
    const errors = validateUpdate(info, next, existing);
    if (errors.length > 0) throw invalid(info.kind, info.group, meta.name, errors);
    if (info.resource === 'persistentvolumeclaims' && mode === 'main') {
      // The PersistentVolumeClaimResize admission plugin, after validation as in kube-apiserver.
      const refusal = resizeRefusal(next, existing, (name) => this.table('storageclasses').get(name));
      if (refusal) throw forbidden(`persistentvolumeclaims "${meta.name}" is forbidden: ${refusal}`, { name: meta.name, kind: 'persistentvolumeclaims' });
    }
    this.setManagedFields(next, managed !== undefined ? managed : managedFieldsAfterUpdate(this.scope(info, mode), existing, next, options.fieldManager ?? 'unknown'));
    keepTimestampsOfNoop(next, existing);
    if (deepEqual(next, existing)) return clone(existing);
    const dry = options.dryRun ?? false;
    if (next.metadata.deletionTimestamp && (next.metadata.finalizers ?? []).length === 0) return this.remove(info, next, dry);
    return this.store(info, existing, next, dry);
  }

  /** PVs record when their phase last changed (GA in 1.31). */
  private stampPhaseTransition(existing: KubeObject, next: KubeObject): void {
    const before = isObject(existing.status) ? existing.status.phase : undefined;
    if (isObject(next.status) && next.status.phase !== before) next.status.lastPhaseTransitionTime = kubeTimestamp(this.now());
  }

  /** Stores `next` in place of `previous`; a dry run answers with `next` as it stands (the resourceVersion not advanced). */
  private store(info: ResourceInfo, previous: KubeObject, next: KubeObject, dry = false): KubeObject {
    if (dry) return clone(next);
    next.metadata.resourceVersion = String(++this.rv);
    this.table(info.resource).set(this.key(info, next.metadata.name, next.metadata.namespace), next);
    this.log.publish({ rv: this.rv, resource: info.resource, type: 'MODIFIED', object: next, previous });
    return clone(next);
  }

  /** Removes for good; the DELETED event carries the deletion's own resourceVersion. */
  private remove(info: ResourceInfo, object: KubeObject, dry = false): KubeObject {
    if (dry) return clone(object);
    const gone = clone(object);
    gone.metadata.resourceVersion = String(++this.rv);
    this.table(info.resource).delete(this.key(info, gone.metadata.name, gone.metadata.namespace));
    this.log.publish({ rv: this.rv, resource: info.resource, type: 'DELETED', object: gone });
    if (info.namespaced && gone.metadata.namespace) this.finalizeNamespace(gone.metadata.namespace);
    return clone(gone);
  }

  /**
   * Namespace deletion as the namespace controller does it: mark Terminating, delete the
   * contents (objects with finalizers wait for them), and remove the namespace once empty.
   */
  private deleteNamespace(namespace: KubeObject, dry: boolean): KubeObject {
    const name = namespace.metadata.name;
    const info = resourceInfo('namespaces');
    if (PROTECTED_NAMESPACES.has(name)) throw forbidden(`namespaces "${name}" is forbidden: this namespace may not be deleted`, { name, kind: 'namespaces' });
    let current = namespace;
    if (!namespace.metadata.deletionTimestamp) {
      const next = clone(namespace);
      next.metadata.deletionTimestamp = kubeTimestamp(this.now());
      next.metadata.deletionGracePeriodSeconds = 0;
      next.status = { ...(isObject(next.status) ? next.status : {}), phase: 'Terminating' };
      // A dry run marks nothing and leaves the contents alone (the namespace controller's part).
      if (dry) return clone(next);
      this.store(info, namespace, next);
      current = this.table('namespaces').get(name) as KubeObject;
    }
    const result = clone(current);
    for (const resource of RESOURCE_NAMES) {
      if (!resourceInfo(resource).namespaced) continue;
      for (const object of [...this.table(resource).values()]) {
        if (object.metadata.namespace === name) this.delete(resource, object.metadata.name, name);
      }
    }
    this.finalizeNamespace(name);
    return result;
  }

  private finalizeNamespace(name: string): void {
    const namespace = this.table('namespaces').get(name);
    if (!namespace?.metadata.deletionTimestamp || (namespace.metadata.finalizers ?? []).length > 0) return;
    for (const resource of RESOURCE_NAMES) {
      if (!resourceInfo(resource).namespaced) continue;
      for (const object of this.table(resource).values()) if (object.metadata.namespace === name) return;
    }
    this.remove(resourceInfo('namespaces'), namespace);
  }
}
