/**
 * The Events volhook records, with the reasons and messages external-provisioner uses, so
 * `kubectl describe` reads as it does with the reference stack.
 */
import { GROUP_SNAPSHOT_API_GROUP, GROUP_SNAPSHOT_API_VERSION, SNAPSHOT_API_GROUP, SNAPSHOT_API_VERSION, type PersistentVolume, type PersistentVolumeClaim, type VolumeGroupSnapshotContent, type VolumeSnapshotContent, type Write } from '../contract/index.js';

export const EventReasons = {
  provisioning: 'Provisioning',
  provisioningSucceeded: 'ProvisioningSucceeded',
  provisioningFailed: 'ProvisioningFailed',
  volumeFailedDelete: 'VolumeFailedDelete',
  /** volhook's own: the disk was made with other IOPS than its class asked (capped), what and why. */
  iopsAdjusted: 'IopsAdjusted',
  /** volhook's own: the disk of a claim that no longer needs it was deleted, and why. */
  volumeDeleted: 'VolumeDeleted',
  /** The csi-snapshotter sidecar's, on a VolumeSnapshotContent. */
  snapshotCreationFailed: 'SnapshotCreationFailed',
  snapshotContentCheckFailed: 'SnapshotContentCheckandUpdateFailed',
  snapshotDeleteError: 'SnapshotDeleteError',
  /** volhook's own, on the VolumeSnapshot: its cross-Region copy (copyToRegion) was refused or failed, or is ready. */
  snapshotCopyFailed: 'SnapshotCopyFailed',
  snapshotCopied: 'SnapshotCopied',
  /** The csi-snapshotter sidecar's, on a VolumeGroupSnapshotContent. */
  groupSnapshotCreationFailed: 'GroupSnapshotCreationFailed',
  groupSnapshotDeleteError: 'GroupSnapshotDeleteError',
  /** volhook's own, on a claim restored from a snapshot that is not ready yet. */
  snapshotNotReady: 'SnapshotNotReady',
  /**
   * The attach/detach controller's, which records them on the pod from the VolumeAttachment's
   * error; volhook records them on the PV when the reason needs a person (a disk not adopted).
   */
  failedAttachVolume: 'FailedAttachVolume',
  failedDetachVolume: 'FailedDetachVolume',
  // external-resizer's (pkg/util/events.go).
  resizing: 'Resizing',
  volumeResizeFailed: 'VolumeResizeFailed',
  volumeResizeSuccessful: 'VolumeResizeSuccessful',
  fileSystemResizeRequired: 'FileSystemResizeRequired',
  volumeModify: 'VolumeModify',
  volumeModifyFailed: 'VolumeModifyFailed',
  volumeModifySuccessful: 'VolumeModifySuccessful',
  volumeModifyCanceled: 'VolumeModifyCanceled',
} as const;

type EventType = 'Normal' | 'Warning';

export function pvcEvent(pvc: PersistentVolumeClaim, type: EventType, reason: string, message: string): Write {
  const { name, namespace, uid } = pvc.metadata;
  return {
    op: 'createEvent',
    involvedObject: { kind: 'PersistentVolumeClaim', apiVersion: 'v1', name, namespace, uid },
    type,
    reason,
    message,
  };
}

export function pvEvent(pv: PersistentVolume, type: EventType, reason: string, message: string): Write {
  const { name, uid } = pv.metadata;
  return { op: 'createEvent', involvedObject: { kind: 'PersistentVolume', apiVersion: 'v1', name, uid }, type, reason, message };
}

export function contentEvent(content: VolumeSnapshotContent, type: EventType, reason: string, message: string): Write {
  const { name, uid } = content.metadata;
  return {
    op: 'createEvent',
    involvedObject: { kind: 'VolumeSnapshotContent', apiVersion: `${SNAPSHOT_API_GROUP}/${SNAPSHOT_API_VERSION}`, name, uid },
    type,
    reason,
    message,
  };
}

/** An Event on the content's VolumeSnapshot (what a user looks at), or on the content when it names none. */
export function volumeSnapshotEvent(content: VolumeSnapshotContent, type: EventType, reason: string, message: string): Write {
  const { name, namespace, uid } = content.spec.volumeSnapshotRef;
  if (!name || !namespace) return contentEvent(content, type, reason, message);
  return {
    op: 'createEvent',
    involvedObject: { kind: 'VolumeSnapshot', apiVersion: `${SNAPSHOT_API_GROUP}/${SNAPSHOT_API_VERSION}`, name, namespace, ...(uid ? { uid } : {}) },
    type,
    reason,
    message,
  };
}

export function groupContentEvent(content: VolumeGroupSnapshotContent, type: EventType, reason: string, message: string): Write {
  const { name, uid } = content.metadata;
  return {
    op: 'createEvent',
    involvedObject: { kind: 'VolumeGroupSnapshotContent', apiVersion: `${GROUP_SNAPSHOT_API_GROUP}/${GROUP_SNAPSHOT_API_VERSION}`, name, uid },
    type,
    reason,
    message,
  };
}
