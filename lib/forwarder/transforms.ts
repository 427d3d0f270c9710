/**
 * What the informer caches keep of each object, applied to every listed and watched object
 * before it is cached, as client-go's informer transforms (`SetTransform`,
 * `TransformStripManagedFields`) do: the cache holds only what items are built from, what
 * news is judged by (changes.ts, dependents.ts) and what the dependents index reads.
 *
 * - every kind: `metadata.managedFields` (often larger than the object), the
 *   `kubectl.kubernetes.io/last-applied-configuration` annotation (a copy of the whole
 *   object), and the bookkeeping neither the forwarder nor the backend reads
 *   (`creationTimestamp`, `generation`, `selfLink`, a PV's `status.lastPhaseTransitionTime`).
 * - claims, volumes, attachments, classes (storage, volume attributes), snapshot objects: the rest is kept. Items carry these objects to the
 *   backend, whose schemas (lib/contract) let unknown fields through: a field dropped here is
 *   one the backend can no longer read, so only fields nothing reads are in `UNREAD`.
 * - Nodes: items carry only a node's name, labels and providerID (`nodeInfo`); a kubelet's
 *   status (conditions, images, addresses) is most of a Node and goes.
 * - CSINodes: only `spec.drivers` is read.
 *
 * And every object is cached as plain JSON, parsed afresh, its common strings shared: the
 * generated client's list results are class instances holding every field of the type
 * (most `undefined`: a PV spec names some thirty volume sources) with `Date`s, and a parsed
 * response holds its own copy of every string — 10,000 PVs held 40,000 copies of
 * `ebs.csi.aws.com`. Measured in bench scenario (c).
 */
import type * as k8s from '@kubernetes/client-node';
import type { Resource, WatchedObjects } from './watches.js';

export const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

/** Keys dropped wherever they appear (each appears only where the header says). */
export const UNREAD: ReadonlySet<string> = new Set(['managedFields', LAST_APPLIED, 'creationTimestamp', 'generation', 'selfLink', 'lastPhaseTransitionTime']);

/** The identity and bookkeeping fields of metadata, for kinds whose annotations nothing reads. */
function identity(meta: k8s.V1ObjectMeta | undefined): k8s.V1ObjectMeta {
  const out: k8s.V1ObjectMeta = {};
  if (!meta) return out;
  if (meta.name !== undefined) out.name = meta.name;
  if (meta.uid !== undefined) out.uid = meta.uid;
  if (meta.resourceVersion !== undefined) out.resourceVersion = meta.resourceVersion;
  if (meta.labels !== undefined) out.labels = meta.labels;
  if (meta.deletionTimestamp !== undefined) out.deletionTimestamp = meta.deletionTimestamp;
  return out;
}

/** Whole-second times as a list's `Date`s serialize them (`.000Z`), written as the API server writes them. */
const WHOLE_SECOND = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)\.000Z$/;

/**
 * Strings shared between cached objects: kinds, drivers, access modes, finalizers, zones…
 * Bounded: once it holds `INTERNED_MAX` strings it takes no more (the common ones come
 * first and often); the unique ones it took before (names, uids) stay, a fixed cost.
 */
export const INTERNED_MAX = 4096;
const interned = new Map<string, string>();

export function intern(value: string): string {
  const known = interned.get(value);
  if (known !== undefined) return known;
  if (interned.size < INTERNED_MAX && value.length <= 128) interned.set(value, value);
  return value;
}

/**
 * A plain-JSON copy, as compact as V8 makes a parsed object: fields holding `undefined` and
 * the `UNREAD` ones left out, `Date`s as the API server writes
 * them, strings interned.
 */
export function compact<T>(value: T): T {
  const json = JSON.stringify(value, (key, field: unknown) => (UNREAD.has(key) ? undefined : field));
  return JSON.parse(json, (_key, field: unknown) => (typeof field === 'string' ? intern(field.replace(WHOLE_SECOND, '$1Z')) : field)) as T;
}

export const TRANSFORMS: { readonly [R in Resource]: (object: WatchedObjects[R]) => WatchedObjects[R] } = {
  persistentvolumeclaims: compact,
  persistentvolumes: compact,
  volumeattachments: compact,
  storageclasses: compact,
  volumeattributesclasses: compact,
  volumesnapshotcontents: compact,
  volumesnapshotclasses: compact,
  volumesnapshots: compact,
  nodes: (node) =>
    compact({
      apiVersion: node.apiVersion,
      kind: node.kind,
      metadata: identity(node.metadata),
      spec: node.spec?.providerID !== undefined ? { providerID: node.spec.providerID } : {},
    }),
  csinodes: (csiNode) =>
    compact({
      apiVersion: csiNode.apiVersion,
      kind: csiNode.kind,
      metadata: identity(csiNode.metadata),
      spec: { drivers: csiNode.spec?.drivers ?? [] },
    }),
};
