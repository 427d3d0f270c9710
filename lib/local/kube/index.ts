/** The local Kubernetes API: an in-memory store shared with in-process controllers, and its HTTP server. */
export type {
  KubeObject,
  ListOptions,
  ObjectMeta,
  ObjectStore,
  PatchType,
  ResourceName,
  WatchEvent,
  WatchEventType,
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
export { RESOURCES, apiVersionOf, type ResourceInfo } from './resources.js';
