export { TranslationError } from './errors.js';
export { kubernetesVolumeIdToEbsVolumeId } from './volume-id.js';
export {
  translateInTreeStorageClassToCsi,
  withInTreeVolumeType,
  provisioningClass,
  IN_TREE_DEFAULT_VOLUME_TYPE,
  MIGRATED_TOPOLOGY_KEY,
  type ProvisioningClass,
} from './storage-class.js';
export { translateInTreePvToCsi, translateCsiPvToInTree } from './persistent-volume.js';
export { awsRegionFromZones } from './topology.js';
export { ebsVolumeIdOf } from './volume-of.js';
