/**
 * CSI migration of the in-tree `kubernetes.io/aws-ebs` plugin as kube-controller-manager does
 * it (migration is always on for that plugin, and the plugin itself is gone): the PV
 * controller's `migrated-to` bookkeeping, and how the attach/detach controller and kubelet
 * read an in-tree PV's volume ID. Written here rather than borrowed from volhook's backend, so
 * that the local stack checks the backend instead of sharing its mistakes.
 */
import { ANN, annotation, setAnnotation, setFinalizer } from './objects.js';
import type { AwsElasticBlockStoreVolume, InlineVolumeSpec, PersistentVolume, PersistentVolumeClaim } from './objects.js';

export const IN_TREE_AWS_EBS = 'kubernetes.io/aws-ebs';
/** The CSI driver the in-tree plugin migrates to (csi-translation-lib `AWSEBSDriverName`). */
export const AWS_EBS_CSI_DRIVER = 'ebs.csi.aws.com';
/** The PV controller's own deletion finalizer, which it drops from PVs it hands to a CSI driver. */
export const PV_CONTROLLER_FINALIZER = 'kubernetes.io/pv-controller';

/**
 * `updateMigrationAnnotations`: an object whose provisioner (the claim's storage-provisioner
 * annotation, GA then beta; the PV's `provisioned-by`) is the in-tree plugin gets
 * `pv.kubernetes.io/migrated-to: <driver>`; one whose provisioner is anything else loses a
 * `migrated-to` it carries. Objects without a provisioner (static PVs) are left alone.
 * Returns whether the object is migrated.
 */
export function updateMigrationAnnotations(object: PersistentVolumeClaim | PersistentVolume, kind: 'claim' | 'volume', driver: string): boolean {
  const provisioner =
    kind === 'claim'
      ? (annotation(object, ANN.storageProvisioner) ?? annotation(object, ANN.betaStorageProvisioner))
      : annotation(object, ANN.provisionedBy);
  if (provisioner === undefined) return false;
  if (provisioner === IN_TREE_AWS_EBS) {
    setAnnotation(object, ANN.migratedTo, driver);
    return true;
  }
  setAnnotation(object, ANN.migratedTo, undefined);
  return false;
}

/**
 * `updateVolumeMigrationAnnotationsAndFinalizers`: `migrated-to` as above, and a migrated PV
 * loses the PV controller's deletion finalizer (its CSI provisioner's finalizer takes over).
 */
export function updateVolumeMigration(volume: PersistentVolume, driver: string): void {
  if (updateMigrationAnnotations(volume, 'volume', driver)) setFinalizer(volume, PV_CONTROLLER_FINALIZER, false);
}

/**
 * The volume handle under which `driver` attaches the PV: its `csi.volumeHandle` when it names
 * the driver; for the EBS CSI driver, also an in-tree `awsElasticBlockStore` PV's volume ID,
 * translated as csi-translation-lib translates it (`aws://<zone>/vol-…` and `aws:///vol-…` →
 * `vol-…`; anything else as it is). Undefined for other PVs and malformed `aws://` IDs.
 */
export function attachableHandle(volume: PersistentVolume, driver: string): string | undefined {
  const csi = volume.spec.csi;
  if (csi) return csi.driver === driver && csi.volumeHandle ? csi.volumeHandle : undefined;
  const volumeID = volume.spec.awsElasticBlockStore?.volumeID;
  if (driver !== AWS_EBS_CSI_DRIVER || !volumeID) return undefined;
  return ebsVolumeHandle(volumeID);
}

/** `KubernetesVolumeIDToEBSVolumeID`: `aws://<zone>/vol-…` → `vol-…`, a bare ID as it is; undefined when malformed. */
function ebsVolumeHandle(volumeID: string): string | undefined {
  if (!volumeID.startsWith('aws://')) return volumeID;
  const match = /^aws:\/\/[^/]*\/+(vol-[^/]*?)\/*$/.exec(volumeID);
  return match?.[1];
}

/**
 * `TranslateInTreeInlineVolumeToCSI` of csi-translation-lib for a pod's inline
 * `awsElasticBlockStore` volume: the PV spec the attach/detach controller puts in a
 * VolumeAttachment's `spec.source.inlineVolumeSpec` — the EBS CSI source with the translated
 * volume ID as handle, the volume's `fsType` and `readOnly`, `partition` always (as a string,
 * "0" when unset), and ReadWriteOnce. Undefined for another driver, no volume ID, or a
 * malformed `aws://` one (the real controller fails to translate it and attaches nothing).
 */
export function inlineVolumeSpec(source: AwsElasticBlockStoreVolume, driver: string): InlineVolumeSpec | undefined {
  const handle = source.volumeID ? ebsVolumeHandle(source.volumeID) : undefined;
  if (driver !== AWS_EBS_CSI_DRIVER || !handle) return undefined;
  return {
    csi: {
      driver,
      volumeHandle: handle,
      // Go's omitempty: false and "" are not written.
      ...(source.readOnly && { readOnly: true }),
      ...(source.fsType && { fsType: source.fsType }),
      volumeAttributes: { partition: String(source.partition ?? 0) },
    },
    accessModes: ['ReadWriteOnce'],
  };
}
