import { EBS_DRIVER, isInTreeEbs, type PersistentVolume } from '../contract/index.js';
import { translateInTreePvToCsi } from './persistent-volume.js';

/**
 * The EBS volume ID of a PV served by `driver`: its `csi.volumeHandle` when it names the
 * driver; for the EBS CSI driver, also an in-tree `awsElasticBlockStore` PV's volume ID, read
 * through the in-tree → CSI translation as external-attacher and external-provisioner read
 * it (`aws://us-east-1a/vol-…` → `vol-…`). Undefined when the PV is not the driver's.
 *
 * @throws TranslationError for an in-tree PV whose `aws://` volume ID is malformed
 */
export function ebsVolumeIdOf(pv: PersistentVolume, driver: string): string | undefined {
  if (pv.spec.csi) return pv.spec.csi.driver === driver ? pv.spec.csi.volumeHandle || undefined : undefined;
  // csi-translation-lib's IsPVMigratable: an in-tree EBS source.
  if (driver !== EBS_DRIVER || !isInTreeEbs(pv)) return undefined;
  return translateInTreePvToCsi(pv).spec.csi?.volumeHandle || undefined;
}
