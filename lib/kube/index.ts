export { applyWrites, WriteError, type ApplyWritesOptions } from './apply-writes.js';
export { kubeClientsFromConfig, kubeConfigFor, type KubeClients, type KubeServerOptions } from './clients.js';
export { isApiError, describeError, forbiddenRequest, type ApiErrorLike, type ForbiddenRequest } from './errors.js';
export { EventCorrelator, buildEvent, eventKey, type EventCorrelatorOptions } from './events.js';
export { finalizerPatch, escapePointerToken, type JsonPatchOp, type ObservedMeta } from './json-patch.js';
