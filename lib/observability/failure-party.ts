/**
 * Whose a failed item is: a **refused input** — what someone in the cluster asked for cannot be
 * done as asked (a StorageClass typo, a size over the registration's limit, a restore from a
 * snapshot that does not exist); the fix is in their manifest, and it is no operator's page —
 * or a **system failure** — ownership, IAM, capacity, EC2, a bug; the fix is the platform
 * team's. Every failure reason the reconcilers write is listed in one of the two, so a new one
 * is placed on purpose (a test reads lib/reconcile for reasons not listed); a reason that comes
 * from EC2 (its error code) and is in neither is a system failure.
 */
export const REFUSED_INPUT_REASONS: ReadonlySet<string> = new Set([
  'InvalidStorageClass',
  'InvalidVolumeAttributesClass',
  'VolumeAttributesClassNotFound',
  'InvalidArgument',
  'InvalidParameter',
  'Infeasible',
  'InvalidZone',
  'NoZone',
  'UnsupportedTopologyKey',
  'OutpostNotSupported',
  'NotAllowed',
  'DataSourceNotSupported',
  'SelectorNotSupported',
  'StorageClassMismatch',
  'VolumeModeMismatch',
  'SnapshotNotFound',
  'SnapshotNotBound',
  'SnapshotNotOurs',
  'SnapshotTooLarge',
  'SourceNotFound',
  'SourceNotOurs',
  'SourceTooLarge',
  'SourceBeingDeleted',
  'SnapshotBeingDeleted',
  'AttachedElsewhere',
  // Group snapshots: what the group and its class ask, and where its claims' pods run.
  'NotImplemented',
  'InvalidContent',
  'NoGroupSnapshotClass',
  'InvalidGroupSnapshotClass',
  'EmptyGroup',
  'NotAttached',
  'NotOneNode',
  'TooManyOtherVolumes',
]);

export const SYSTEM_FAILURE_REASONS: ReadonlySet<string> = new Set([
  'NotOwned',
  'NotAdopted',
  'NotOurVolume',
  'SnapshotNotOwned',
  'SourceNotOwned',
  'UnauthorizedOperation',
  'InsufficientVolumeCapacity',
  'AttachmentLimitExceeded',
  'VolumeLimitExceeded',
  'VolumeModificationRateExceeded',
  'IdempotentParameterMismatch',
  'VolumeInUse',
  'ZoneMismatch',
  'NotFound',
  'VolumeNotFound',
  'VolumeNotAvailable',
  'VolumeCreationFailed',
  'SnapshotCreationFailed',
  'SnapshotFailed',
  'GroupSnapshotCreationFailed',
  'IncompleteGroup',
  'NodeGone',
  'NotClusterNode',
  'InstanceNotFound',
  'NodeNotFound',
  'SelectedNodeGone',
  'NoInstanceId',
  'NoDeviceName',
  'NoVolumeHandle',
  'NoVolumeSource',
  'OtherProvisioner',
  'PersistentVolumeNotFound',
  'PersistentVolumeDeleting',
  'SourceSizeUnknown',
  'SourceZoneUnknown',
  'InvalidItem',
  'ReportsNotKept',
]);

export type FailureParty = 'input' | 'system';

export function failureParty(reason: string): FailureParty {
  return REFUSED_INPUT_REASONS.has(reason) ? 'input' : 'system';
}
