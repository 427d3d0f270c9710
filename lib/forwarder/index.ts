export { startForwarder, type Forwarder, type ForwarderDeps } from './forwarder.js';
export {
  configFromEnv,
  parseConfig,
  ConfigError,
  ENV_VARS,
  RETIRED_ENV_VARS,
  retiredSettings,
  ForwarderConfigSchema,
  type ForwarderConfig,
  type ForwarderConfigInput,
} from './config.js';
export { WorkQueue, backoffDelay, DEFAULT_BACKOFF, type Batch, type Completion, type WorkQueueOptions } from './queue.js';
export {
  buildClaimItem,
  buildClaimDeletedItem,
  buildVolumeItem,
  buildAttachmentItem,
  clusterZones,
  nodeInfo,
  parseItemKey,
  type ClusterView,
  type DeletedClaim,
} from './items.js';
export { isOurClaim, isOurVolume, isOurAttachment, type Ownership } from './filter.js';
export { postReconcile, reconcileUrl, matchResults, BackendRequestError, FORWARDER_VERSIONS, type FetchLike } from './backend-client.js';
export { refusedReadiness } from './refusal.js';
export type { Readiness } from './server.js';
export { createJsonLogger, silentLogger, type Logger } from './logger.js';
export type { ForwarderMetrics } from './metrics.js';
export { chunkBySize } from './sender.js';
