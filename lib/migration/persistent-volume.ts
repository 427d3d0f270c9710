/**
 * In-tree EBS PersistentVolumes and their CSI form, as csi-translation-lib translates them
 * (`TranslateInTreePVToCSI` / `TranslateCSIPVToInTree`, plugins/aws_ebs.go, v0.34).
 * external-attacher and external-provisioner read an in-tree PV through the first;
 * external-provisioner writes the PV of a migrated class through the second.
 */
import {
  EBS_DRIVER,
  type NewInTreePersistentVolume,
  type NewPersistentVolume,
  type PersistentVolume,
} from '../contract/index.js';
import { TranslationError } from './errors.js';
import { topologyCsiToInTree, topologyInTreeToCsi } from './topology.js';
import { MIGRATED_TOPOLOGY_KEY } from './storage-class.js';
import { kubernetesVolumeIdToEbsVolumeId } from './volume-id.js';

/**
 * The CSI form of an in-tree EBS PV; the PV given is not changed. `csi`: the EBS driver, the
 * volume ID normalised (`aws://<zone>/vol-…` → `vol-…`), `fsType` and `readOnly` as they were,
 * `volumeAttributes: {partition: "<n>"}` (always, "0" when unset). Zone expressions of the node
 * affinity (GA or beta, or the zone label when it has none) move to
 * `topology.ebs.csi.aws.com/zone`. Metadata is untouched.
 *
 * @throws TranslationError for a PV without the in-tree source or with a malformed `aws://` ID
 */
export function translateInTreePvToCsi(pv: PersistentVolume): PersistentVolume {
  const source = pv.spec.awsElasticBlockStore;
  if (!source) throw new TranslationError('pv is nil or AWS EBS not defined on pv');
  let volumeHandle: string;
  try {
    volumeHandle = kubernetesVolumeIdToEbsVolumeId(source.volumeID);
  } catch (error) {
    throw new TranslationError(`failed to translate Kubernetes ID to EBS Volume ID ${(error as Error).message}`);
  }
  const csi = {
    driver: EBS_DRIVER,
    volumeHandle,
    ...(source.readOnly && { readOnly: true }),
    ...(source.fsType && { fsType: source.fsType }),
    volumeAttributes: { partition: String(source.partition ?? 0) },
  };
  const translated = structuredClone(pv);
  topologyInTreeToCsi(translated, MIGRATED_TOPOLOGY_KEY);
  delete translated.spec.awsElasticBlockStore;
  translated.spec.csi = csi;
  return translated;
}

/**
 * The in-tree form of a CSI PV of the EBS driver; the PV given is not changed.
 * `awsElasticBlockStore`: the handle verbatim as `volumeID` (no `aws://` form), `fsType` and
 * `readOnly`, `partition` from `volumeAttributes.partition` when set and not 0; every other
 * volume attribute goes. Node affinity keeps the PV's zone key family (GA unless it uses the
 * beta one), each term gains the region of its zones, and the zone and region labels are added.
 *
 * @throws TranslationError for a partition that is not a number, or zones of no single region
 */
export function translateCsiPvToInTree(pv: NewPersistentVolume): NewInTreePersistentVolume {
  const { csi, ...spec } = structuredClone(pv.spec);
  const partitionText = csi.volumeAttributes?.partition;
  let partition = 0;
  if (partitionText !== undefined) {
    if (!/^[+-]?\d+$/.test(partitionText)) throw new TranslationError(`failed to convert partition ${partitionText} to integer`);
    partition = Number(partitionText);
  }
  const translated: NewInTreePersistentVolume = {
    ...structuredClone(pv),
    spec: {
      ...spec,
      awsElasticBlockStore: {
        volumeID: csi.volumeHandle,
        ...(csi.fsType && { fsType: csi.fsType }),
        ...(partition !== 0 && { partition }),
        ...(csi.readOnly === true && { readOnly: true }),
      },
    },
  };
  try {
    topologyCsiToInTree(translated, MIGRATED_TOPOLOGY_KEY);
  } catch (error) {
    throw new TranslationError(`failed to translate topology: ${(error as Error).message}`);
  }
  return translated;
}
