/**
 * The in-process face of the local Kubernetes API. The HTTP server and the built-in
 * controllers (PV controller, scheduler, attach/detach controller) share one `ObjectStore`:
 * the server translates REST calls into these methods, the controllers call them directly.
 * Every mutation bumps the store-wide resourceVersion and is seen by watchers, exactly as if
 * it had come over HTTP (a dry run is no mutation: it bumps nothing and is seen by no one).
 */

/** A Kubernetes object as stored: plain JSON. */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  [field: string]: unknown;
}

export interface ObjectMeta {
  name: string;
  namespace?: string;
  uid: string;
  resourceVersion: string;
  creationTimestamp: string;
  generateName?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  ownerReferences?: unknown[];
  [field: string]: unknown;
}

/** Plural resource names served, e.g. `persistentvolumeclaims`, `volumeattachments`. */
export type ResourceName =
  | 'namespaces'
  | 'nodes'
  | 'pods'
  | 'persistentvolumes'
  | 'persistentvolumeclaims'
  | 'events'
  | 'storageclasses'
  | 'volumeattachments'
  | 'csinodes'
  | 'csidrivers'
  | 'leases'
  | 'volumesnapshots'
  | 'volumesnapshotcontents'
  | 'volumesnapshotclasses'
  | 'volumegroupsnapshots'
  | 'volumegroupsnapshotcontents'
  | 'volumegroupsnapshotclasses'
  | 'volumeattributesclasses'
  | 'serviceaccounts'
  | 'configmaps'
  | 'secrets'
  | 'services'
  | 'roles'
  | 'rolebindings'
  | 'clusterroles'
  | 'clusterrolebindings'
  | 'deployments'
  | 'poddisruptionbudgets'
  | 'servicemonitors';

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';
export interface WatchEvent {
  type: WatchEventType;
  object: KubeObject;
}

export interface ListOptions {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
}

export type PatchType = 'merge' | 'json' | 'strategic';

/** The `fieldValidation` directive: what a write does with fields its kind's schema lacks (and duplicate fields). */
export type FieldValidation = 'Strict' | 'Warn' | 'Ignore';

/** How one write is made; every option defaults to what an in-process controller wants. */
export interface WriteOptions {
  /** `dryRun=All`: validated and answered as the write would be; nothing stored, no watch event, no resourceVersion used. */
  dryRun?: boolean;
  /** The manager the write is recorded under in managedFields (creates are tracked, as kube-apiserver tracks them). Default `unknown`, as the API server names a write that names none. */
  fieldManager?: string;
  /**
   * Unknown fields: Strict refuses them, Warn drops them with a warning, Ignore drops them.
   * Unset (in-process writes): nothing is checked and the object is stored as written.
   */
  fieldValidation?: FieldValidation;
  /** Receives the warnings of a Warn validation (the `Warning` headers of an HTTP answer). */
  warnings?: string[];
  /** Fields the request body repeated (found where the body is parsed), judged with the unknown ones. */
  duplicateFields?: string[];
}

/** A server-side apply (`application/apply-patch+yaml`). */
export interface ApplyOptions {
  /** Required, as the API server requires it for apply. */
  fieldManager: string;
  /** Take fields other managers own instead of refusing with 409 Conflict. */
  force?: boolean;
  dryRun?: boolean;
  subresource?: 'status';
}

/**
 * Errors are thrown as `KubeApiError` carrying the Status reason and HTTP code
 * (NotFound 404, AlreadyExists 409, Conflict 409, Invalid 422, Expired 410, BadRequest 400,
 * Forbidden 403 for a terminating namespace). Every object returned is a deep copy: mutating
 * it never changes the store. Namespaced resources need `metadata.namespace` (or the
 * `namespace` argument); cluster-scoped ones ignore it.
 */
export interface ObjectStore {
  get(resource: ResourceName, name: string, namespace?: string): KubeObject | undefined;
  /** Sorted by namespace/name; `namespace` unset lists every namespace. */
  list(resource: ResourceName, options?: ListOptions): { items: KubeObject[]; resourceVersion: string };
  /** Assigns uid, resourceVersion, creationTimestamp, name from generateName, and API defaults. */
  create(resource: ResourceName, object: Omit<KubeObject, 'metadata'> & { metadata: Partial<ObjectMeta> }, options?: WriteOptions): KubeObject;
  /**
   * Replaces everything but system fields and, for kinds with a status subresource, status;
   * 409 Conflict when metadata.resourceVersion is set and stale (unset = unconditional).
   * A write that changes nothing keeps the resourceVersion and emits no event. Emptying the
   * finalizers of an object being deleted removes it.
   */
  update(resource: ResourceName, object: KubeObject, options?: WriteOptions): KubeObject;
  /** Replaces status only (kinds with a status subresource); 409 Conflict when metadata.resourceVersion is stale. */
  updateStatus(resource: ResourceName, object: KubeObject, options?: WriteOptions): KubeObject;
  /**
   * Applies the patch to the stored object, then writes it as `update` (or `updateStatus`)
   * would. A resourceVersion the patch sets is a precondition. `strategic` merges lists by
   * their Kubernetes merge keys; `metadata.finalizers` is a merged set there, so remove one
   * with a JSON patch (guard it with `test`) or `$deleteFromPrimitiveList/finalizers`.
   */
  patch(
    resource: ResourceName,
    name: string,
    namespace: string | undefined,
    type: PatchType,
    patch: unknown,
    options?: WriteOptions & { subresource?: 'status' },
  ): KubeObject;
  /**
   * Server-side apply of `config` (a partial object) by `options.fieldManager`: creates the
   * object when absent, else merges it as kube-apiserver does, recording the manager's fields
   * in metadata.managedFields; 409 Conflict for fields another manager owns with another
   * value, unless `force`. A field the manager applied before and now omits is removed
   * unless another manager owns it.
   */
  apply(resource: ResourceName, name: string, namespace: string | undefined, config: unknown, options: ApplyOptions): KubeObject;
  /**
   * With finalizers present: sets deletionTimestamp (once) and returns the object.
   * Without: removes it. `preconditions.uid` mismatch is 409 Conflict.
   */
  delete(
    resource: ResourceName,
    name: string,
    namespace?: string,
    options?: { preconditions?: { uid?: string; resourceVersion?: string }; dryRun?: boolean },
  ): KubeObject;
  /**
   * Events after `resourceVersion` (exclusive), then live ones; throws 410 (reason Expired) if
   * that is older than the retained history. Without a resourceVersion (or with "0") the
   * current objects arrive first as ADDED. Listeners run synchronously, in resourceVersion
   * order, and may write to the store. Returns the function that stops the watch.
   */
  watch(
    resource: ResourceName,
    options: ListOptions & { resourceVersion?: string },
    onEvent: (event: WatchEvent) => void,
  ): () => void;
}
