/** The PersistentVolume for a provisioned disk, field for field as external-provisioner writes it. */
import {
  Annotations,
  Finalizers,
  TopologyKeys,
  type NewPersistentVolume,
  type PersistentVolumeClaim,
  type StorageClass,
} from '../contract/index.js';
import type { Disk } from '../ec2/types.js';
import { formatGiB, type VolumeSpec } from '../storageclass/index.js';

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
}

/**
 * Capacity and zone come from the disk, not the request: the PV states what exists (a disk
 * found again after a crash may differ from what a changed class would ask for now).
 * The provisioner finalizer is set only for Delete: it exists so that the disk is deleted
 * before the PV goes, which Retain never does.
 */
export function buildPersistentVolume(input: PersistentVolumeInput): NewPersistentVolume {
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
      annotations: { [Annotations.provisionedBy]: input.provisionerName },
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
      nodeAffinity: {
        required: {
          nodeSelectorTerms: [{ matchExpressions: [{ key: TopologyKeys.wellKnownZone, operator: 'In', values: [disk.zone] }] }],
        },
      },
    },
  };
}
