export { ParameterError } from './errors.js';
export { volumeSpecFor, type VolumeSpec, type VolumeSpecInput } from './volume-spec.js';
export { parseQuantity, roundUpToGiB, formatGiB } from './quantity.js';
export { capIops, describeIopsAdjustment, type IopsAdjustment } from './iops.js';
export {
  VOLUME_TYPES,
  VOLUME_TYPE_LIMITS,
  MAX_VOLUME_SIZE_GIB,
  isVolumeType,
  DEFAULT_VOLUME_TYPE,
  type VolumeType,
  type VolumeTypeLimits,
  type IopsLimits,
  type ThroughputLimits,
} from './volume-types.js';
export { FS_TYPES, DEFAULT_FS_TYPE, VOLUME_ATTRIBUTE_KEYS, type FsType } from './filesystem.js';
export { PARAMETER_KEYS, IGNORED_PARAMETER_KEYS, TAG_SPECIFICATION_PREFIX } from './parameters.js';
export { DRIVER_TAG_KEYS } from './driver-tags.js';
export { BLOCK_ATTACH_UNTIL_INITIALIZED_ATTRIBUTE } from './initialization.js';
export { evaluateTemplate, TemplateError, type TemplateData } from './template/index.js';
export { snapshotSpecFor, type SnapshotSpec, type SnapshotSpecInput } from './snapshot-class.js';
export { readVolumeAttributes, infeasibility, VAC_PARAMETER_KEYS, type VolumeAttributes, type Performance } from './volume-attributes.js';
