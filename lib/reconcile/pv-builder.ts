/** The PersistentVolume for a provisioned disk, field for field as external-provisioner writes it. */
import {
  Annotations,
  Finalizers,
  TopologyKeys,
  VolhookAnnotations,
  type NewInTreePersistentVolume,
  type NewPersistentVolume,
  type PersistentVolumeClaim,
  type StorageClass,
} from '../contract/index.js';
import type { Disk } from '../ec2/types.js';
import { translateCsiPvToInTree } from '../migration/index.js';
import { describeIopsAdjustment, formatGiB, type VolumeSpec } from '../storageclass/index.js';

export interface PersistentVolumeInput {
  pvName: string;
  pvc: PersistentVolumeClaim;
  storageClass: StorageClass;
  /** The claim's class name (the beta annotation wins over spec.storageClassName). */
  className: string;
  /** The disk as EC2 reports it: its size and zone are what the PV promises. */
  disk: Disk;
  spec: VolumeSpec;
  provisionerName: string;
  driverName: string;
  /** The in-tree plugin whose class the claim has (CSI migration): the PV is written in-tree. */
  migratedFrom?: string;
  /** The VolumeAttributesClass the disk was made to (KEP-3751: the PV names it). */
  volumeAttributesClassName?: string;
}

/**
 * The annotations external-provisioner writes on every PV it makes, empty when the class names
 * no deletion secrets. volhook uses no secrets; they are written on in-tree PVs only, so that
 * those are exactly what external-provisioner writes for a migrated plugin.
 */
export const DELETION_SECRET_ANNOTATIONS = {
  'volume.kubernetes.io/provisioner-deletion-secret-name': '',
  'volume.kubernetes.io/provisioner-deletion-secret-namespace': '',
} as const;

/**
 * The PV as external-provisioner writes it. For a migrated in-tree class it builds the CSI PV
 * and translates it back to in-tree (`TranslateCSIPVToInTree`), as external-provisioner does:
 * `awsElasticBlockStore` with the bare `vol-…` ID, node affinity and labels with the zone and
 * its region, and `provisioned-by` naming the class's provisioner, `kubernetes.io/aws-ebs`.
 *
 * @throws TranslationError when the disk's zone names no AWS region (checked before the disk is made)
 */
export function buildPersistentVolume(input: PersistentVolumeInput): NewPersistentVolume | NewInTreePersistentVolume {
  if (!input.migratedFrom) return buildCsiPersistentVolume(input);
  const csi = buildCsiPersistentVolume(input);
  csi.metadata.annotations = { [Annotations.provisionedBy]: input.migratedFrom, ...DELETION_SECRET_ANNOTATIONS, ...adjustedAnnotations(input.spec) };
  return translateCsiPvToInTree(csi);
}

/** volhook's note on a PV whose IOPS its class asked otherwise (capped to the type's limits). */
function adjustedAnnotations(spec: VolumeSpec): Record<string, string> {
  return spec.iopsAdjustment ? { [VolhookAnnotations.iopsAdjusted]: describeIopsAdjustment(spec.iopsAdjustment) } : {};
}

/**
 * Capacity and zone come from the disk, not the request: the PV states what exists (a disk
 * found again after a crash may differ from what a changed class would ask for now).
 * The provisioner finalizer is set only for Delete: it exists so that the disk is deleted
 * before the PV goes, which Retain never does.
 */
function buildCsiPersistentVolume(input: PersistentVolumeInput): NewPersistentVolume {
  const { pvc, storageClass, disk, spec } = input;
  const reclaimPolicy = storageClass.reclaimPolicy ?? 'Delete';
  const volumeMode = pvc.spec.volumeMode ?? 'Filesystem';
  const mountOptions = storageClass.mountOptions ?? [];
  const hasAttributes = Object.keys(spec.volumeAttributes).length > 0;
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: {
      name: input.pvName,
      annotations: { [Annotations.provisionedBy]: input.provisionerName, ...adjustedAnnotations(spec) },
      ...(reclaimPolicy === 'Delete' && { finalizers: [Finalizers.provisioner] }),
    },
    spec: {
      capacity: { storage: formatGiB(disk.sizeGiB) },
      accessModes: [...pvc.spec.accessModes],
      volumeMode,
      persistentVolumeReclaimPolicy: reclaimPolicy,
      storageClassName: input.className,
      ...(mountOptions.length > 0 && { mountOptions: [...mountOptions] }),
      claimRef: {
        kind: 'PersistentVolumeClaim',
        apiVersion: 'v1',
        namespace: pvc.metadata.namespace,
        name: pvc.metadata.name,
        uid: pvc.metadata.uid,
        ...(pvc.metadata.resourceVersion !== undefined && { resourceVersion: pvc.metadata.resourceVersion }),
      },
      csi: {
        driver: input.driverName,
        volumeHandle: disk.volumeId,
        ...(volumeMode !== 'Block' && spec.fsType !== undefined && { fsType: spec.fsType }),
        ...(hasAttributes && { volumeAttributes: { ...spec.volumeAttributes } }),
      },
      // external-provisioner's: the class the volume was created with (KEP-3751).
      ...(input.volumeAttributesClassName && { volumeAttributesClassName: input.volumeAttributesClassName }),
      nodeAffinity: {
        required: {
          nodeSelectorTerms: [{ matchExpressions: [{ key: TopologyKeys.wellKnownZone, operator: 'In', values: [disk.zone] }] }],
        },
      },
    },
  };
}
