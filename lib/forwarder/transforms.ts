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
 * And every object is cached as a plain-JSON copy, its common strings and subtrees shared: the
 * generated client's list results are class instances holding every field of the type
 * (most `undefined`: a PV spec names some thirty volume sources) with `Date`s, and a parsed
 * response holds its own copy of every string — 10,000 PVs held 40,000 copies of
 * `ebs.csi.aws.com`. Measured in bench scenario (c).
 */
import type * as k8s from '@kubernetes/client-node';
import { asApiServerTime } from './changes.js';
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


/**
 * Values shared between cached objects, hash-consing: a value met a second time within the
 * last `RECENT_MAX` new ones is kept once and given to every object that holds an equal one,
 * up to `SHARED_MAX` shared values. Strings: kinds, drivers, access modes, finalizers, zones…
 * Subtrees: `["ReadWriteOnce"]`, `{"storage":"4Gi"}`, a zone's node affinity, the usual
 * annotations; 10,000 PVCs + 10,000 PVs as bench scenario (c) makes them take ~600 bytes of
 * heap each instead of ~980 (the JSON.stringify + JSON.parse copy this replaces). A value seen once (names, uids, a claim's metadata) is
 * forgotten with the window, so unique values never fill the shared table. Shared subtrees are
 * frozen: the caches are read, never written, and a write would throw rather than change
 * every object holding it.
 */
export const SHARED_MAX = 4096;
export const RECENT_MAX = 1024;
/** Longer strings, and subtrees whose key is longer, are never shared. */
const STRING_MAX = 128;
const KEY_MAX = 512;

class Sharing<V> {
  readonly #shared = new Map<string, V>();
  #recent = new Map<string, V>();
  constructor(private readonly onShared?: (value: V) => void) {}

  get size(): number {
    return this.#shared.size;
  }

  /** The shared value equal to `value` (by `key`), or `value` itself. */
  share(key: string, value: V): V {
    const shared = this.#shared.get(key);
    if (shared !== undefined) return shared;
    const seen = this.#recent.get(key);
    if (seen !== undefined && this.#shared.size < SHARED_MAX) {
      this.#recent.delete(key);
      this.#shared.set(key, seen);
      this.onShared?.(seen);
      return seen;
    }
    if (this.#recent.size >= RECENT_MAX) this.#recent = new Map();
    this.#recent.set(key, value);
    return value;
  }
}

const strings = new Sharing<string>();
/** The identity of each shared subtree, for the keys of the subtrees holding it. */
const subtreeIds = new WeakMap<object, number>();
let nextSubtreeId = 0;
const subtrees = new Sharing<object>((value) => {
  Object.freeze(value);
  subtreeIds.set(value, nextSubtreeId++);
});

/** Strings shared between cached objects (see `Sharing`). */
export function intern(value: string): string {
  return value.length <= STRING_MAX ? strings.share(value, value) : value;
}

/** How many strings and subtrees are shared (tests, diagnostics). */
export function sharedCounts(): { strings: number; subtrees: number } {
  return { strings: strings.size, subtrees: subtrees.size };
}

/** `value` shared with an equal subtree met before, when each of its children is shared or a primitive. */
function shareSubtree<T extends object>(value: T, entries: Iterable<[string, unknown]>): T {
  let key = Array.isArray(value) ? '[' : '{';
  for (const [name, child] of entries) {
    if (typeof child === 'object' && child !== null) {
      const id = subtreeIds.get(child);
      if (id === undefined) return value;
      key += `${name}:#${id},`;
    } else {
      key += `${name}:${typeof child === 'string' ? JSON.stringify(child) : String(child)},`;
    }
    if (key.length > KEY_MAX) return value;
  }
  return subtrees.share(key, value) as T;
}

/**
 * A plain-JSON copy, in one pass over the object: fields holding `undefined` and the `UNREAD`
 * ones left out, `Date`s as the API server writes them, strings and subtrees shared.
 */
export function compact<T>(value: T): T {
  return copy(value) as T;
}

function copy(value: unknown): unknown {
  if (typeof value === 'string') return intern(asApiServerTime(value));
  if (value === null || typeof value !== 'object') return typeof value === 'function' ? undefined : value;
  if (value instanceof Date) return copy(value.toISOString());
  if (Array.isArray(value)) {
    // As JSON.stringify writes them: undefined (and functions) in an array become null.
    const out = value.map((element: unknown) => copy(element) ?? null);
    return shareSubtree(out, out.map((element, i) => [String(i), element] as [string, unknown]));
  }
  const out: Record<string, unknown> = {};
  for (const [name, field] of Object.entries(value)) {
    if (field === undefined || UNREAD.has(name)) continue;
    const copied = copy(field);
    if (copied !== undefined) out[name] = copied;
  }
  return shareSubtree(out, Object.entries(out));
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
  volumegroupsnapshotcontents: compact,
  volumegroupsnapshotclasses: compact,
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
