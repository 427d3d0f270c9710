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
  | 'csidrivers';

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
 * (NotFound 404, AlreadyExists 409, Conflict 409, Invalid 422, Gone 410, BadRequest 400).
 */
export interface ObjectStore {
  get(resource: ResourceName, name: string, namespace?: string): KubeObject | undefined;
  list(resource: ResourceName, options?: ListOptions): { items: KubeObject[]; resourceVersion: string };
  /** Assigns uid, resourceVersion, creationTimestamp, name from generateName, and API defaults. */
  create(resource: ResourceName, object: Omit<KubeObject, 'metadata'> & { metadata: Partial<ObjectMeta> }): KubeObject;
  /** Replaces spec+metadata (not status); 409 Conflict when metadata.resourceVersion is stale. */
  update(resource: ResourceName, object: KubeObject): KubeObject;
  /** Replaces status only; 409 Conflict when metadata.resourceVersion is stale. */
  updateStatus(resource: ResourceName, object: KubeObject): KubeObject;
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
  /** Events after `resourceVersion` (exclusive), then live ones; throws Gone (410) if too old. */
  watch(
    resource: ResourceName,
    options: ListOptions & { resourceVersion?: string },
    onEvent: (event: WatchEvent) => void,
  ): () => void;
}
