/**
 * The local Kubernetes API: an in-memory store shared with in-process controllers, and its HTTP server.
 *
 * What it serves (resources.ts): core v1 namespaces, nodes, pods, persistentvolumes(claims),
 * events, serviceaccounts, configmaps, secrets, services; storage.k8s.io storageclasses,
 * volumeattachments, csinodes, csidrivers, volumeattributesclasses; coordination.k8s.io
 * leases; rbac.authorization.k8s.io roles, rolebindings, clusterroles, clusterrolebindings;
 * apps deployments; policy poddisruptionbudgets; the snapshot.storage.k8s.io CRDs; and
 * monitoring.coreos.com servicemonitors when the server is started with `serviceMonitors`.
 * No controller runs for the workload kinds: a Deployment is stored, never rolled out.
 *
 * How it writes: create, update, JSON/merge/strategic patch and server-side apply (with
 * metadata.managedFields per manager and 409 conflicts, ssa/), `dryRun=All` on every write,
 * `fieldValidation` Strict/Warn/Ignore against each kind's schema (schema/), watch, tables
 * for kubectl, and discovery and OpenAPI enough for kubectl 1.32 and 1.34. Bodies are JSON,
 * but for the protobuf that client-go's typed clients send regardless (protobuf.ts): kubectl's
 * namespaces, Helm's release Secrets and DeleteOptions — so helm 4 installs, upgrades, rolls
 * back and uninstalls the forwarder's chart against it.
 */
export type {
  ApplyOptions,
  FieldValidation,
  KubeObject,
  ListOptions,
  ObjectMeta,
  ObjectStore,
  PatchType,
  ResourceName,
  WatchEvent,
  WatchEventType,
  WriteOptions,
} from './types.js';
export { createObjectStore, type DeleteOptions, type LocalObjectStore, type ObjectStoreOptions } from './store.js';
export { startKubeApiServer, type KubeApiServer, type KubeApiServerOptions } from './server.js';
export {
  KubeApiError,
  isAlreadyExists,
  isConflict,
  isGone,
  isInvalid,
  isNotFound,
  reasonOf,
  type Status,
  type StatusReason,
} from './errors.js';
export { labelSelectorMatches, parseLabelSelector, type LabelSelector } from './selectors.js';
export { RESOURCES, apiVersionOf, servedResources, type ResourceInfo, type ServedResources } from './resources.js';
