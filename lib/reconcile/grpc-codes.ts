/**
 * The gRPC status code a failed attach is recorded with in `attachError.errorCode`, as
 * external-attacher (v4.10, #662) records the code of the driver's ControllerPublishVolume
 * error. Kubernetes 1.36 (KEP-4876, MutableCSINodeAllocatableCount) refreshes the node's
 * CSINode allocatable count when an attach fails with ResourceExhausted.
 *
 * volhook's reasons map to the codes the EBS CSI driver answers for the same condition: its
 * request checks InvalidArgument, a missing volume or node NotFound, the attachment limit
 * ResourceExhausted; a condition the CSI spec gives a code for (attached to another node,
 * FAILED_PRECONDITION) that code; everything else Internal, as the driver's "Could not attach".
 */

/** gRPC's status codes (google.golang.org/grpc/codes), numeric as VolumeError.errorCode holds them. */
export const GrpcCode = {
  InvalidArgument: 3,
  DeadlineExceeded: 4,
  NotFound: 5,
  PermissionDenied: 7,
  ResourceExhausted: 8,
  FailedPrecondition: 9,
  Aborted: 10,
  Internal: 13,
  Unavailable: 14,
} as const;

const ATTACH_ERROR_CODES: Readonly<Record<string, number>> = {
  AttachmentLimitExceeded: GrpcCode.ResourceExhausted,
  VolumeNotFound: GrpcCode.NotFound,
  NotFound: GrpcCode.NotFound,
  InstanceNotFound: GrpcCode.NotFound,
  NodeNotFound: GrpcCode.NotFound,
  PersistentVolumeNotFound: GrpcCode.NotFound,
  NoVolumeHandle: GrpcCode.InvalidArgument,
  NoVolumeSource: GrpcCode.InvalidArgument,
  NoInstanceId: GrpcCode.InvalidArgument,
  InvalidParameter: GrpcCode.InvalidArgument,
  AttachedElsewhere: GrpcCode.FailedPrecondition,
  VolumeInUse: GrpcCode.FailedPrecondition,
  ZoneMismatch: GrpcCode.FailedPrecondition,
  VolumeNotAvailable: GrpcCode.FailedPrecondition,
  PersistentVolumeDeleting: GrpcCode.FailedPrecondition,
};

/** Pure: the gRPC code of an attach that failed for `reason` (a Verdict's reason). */
export function attachErrorCode(reason: string): number {
  return ATTACH_ERROR_CODES[reason] ?? GrpcCode.Internal;
}
