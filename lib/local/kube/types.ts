/**
 * The in-process face of the local Kubernetes API. The HTTP server and the built-in
 * controllers (PV controller, scheduler, attach/detach controller) share one `ObjectStore`:
 * the server translates REST calls into these methods, the controllers call them directly.
 * Every mutation bumps the store-wide resourceVersion and is seen by watchers, exactly as if
 * it had come over HTTP.
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
  create(resource: ResourceName, object: Omit<KubeObject, 'metadata'> & { metadata: Partial<ObjectMeta> }): KubeObject;
  /**
   * Replaces everything but system fields and, for kinds with a status subresource, status;
   * 409 Conflict when metadata.resourceVersion is set and stale (unset = unconditional).
   * A write that changes nothing keeps the resourceVersion and emits no event. Emptying the
   * finalizers of an object being deleted removes it.
   */
  update(resource: ResourceName, object: KubeObject): KubeObject;
  /** Replaces status only (kinds with a status subresource); 409 Conflict when metadata.resourceVersion is stale. */
  updateStatus(resource: ResourceName, object: KubeObject): KubeObject;
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
    options?: { subresource?: 'status' },
  ): KubeObject;
  /**
   * With finalizers present: sets deletionTimestamp (once) and returns the object.
   * Without: removes it. `preconditions.uid` mismatch is 409 Conflict.
   */
  delete(
    resource: ResourceName,
    name: string,
    namespace?: string,
    options?: { preconditions?: { uid?: string; resourceVersion?: string } },
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
