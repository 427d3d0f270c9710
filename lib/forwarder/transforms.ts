/**
 * What the informer caches keep of each object, applied to every listed and watched object
 * before it is cached, as client-go's informer transforms (`SetTransform`,
 * `TransformStripManagedFields`) do: the cache holds only what items are built from, what
 * news is judged by (changes.ts, dependents.ts) and what the dependents index reads.
 *
 * - every kind: `metadata.managedFields` (often larger than the object) and the
 *   `kubectl.kubernetes.io/last-applied-configuration` annotation (a copy of the whole
 *   object) go; nothing volhook or its backend reads is in either.
 * - claims, volumes, attachments, classes: the rest is kept whole. Items carry these objects
 *   to the backend, whose schemas (lib/contract) let unknown fields through, so trimming them
 *   further would be a silent change of what the backend sees.
 * - Nodes: items carry only a node's name, labels and providerID (`nodeInfo`); a kubelet's
 *   status (conditions, images, addresses) is most of a Node and goes.
 * - CSINodes: only `spec.drivers` is read.
 */
import type * as k8s from '@kubernetes/client-node';
import type { Resource, WatchedObjects } from './watches.js';

export const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

/** The metadata a cache keeps: everything but managedFields and the last-applied copy. */
export function leanMeta(meta: k8s.V1ObjectMeta | undefined): k8s.V1ObjectMeta {
  if (!meta) return {};
  const { managedFields: _managed, ...rest } = meta;
  if (rest.annotations && LAST_APPLIED in rest.annotations) {
    const { [LAST_APPLIED]: _lastApplied, ...annotations } = rest.annotations;
    rest.annotations = annotations;
  }
  return rest;
}

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

function keepWhole<T extends k8s.KubernetesObject>(object: T): T {
  return { ...object, metadata: leanMeta(object.metadata) };
}

export const TRANSFORMS: { readonly [R in Resource]: (object: WatchedObjects[R]) => WatchedObjects[R] } = {
  persistentvolumeclaims: keepWhole,
  persistentvolumes: keepWhole,
  volumeattachments: keepWhole,
  storageclasses: keepWhole,
  nodes: (node) => ({
    apiVersion: node.apiVersion,
    kind: node.kind,
    metadata: identity(node.metadata),
    spec: node.spec?.providerID !== undefined ? { providerID: node.spec.providerID } : {},
  }),
  csinodes: (csiNode) => ({
    apiVersion: csiNode.apiVersion,
    kind: csiNode.kind,
    metadata: identity(csiNode.metadata),
    spec: { drivers: csiNode.spec?.drivers ?? [] },
  }),
};
