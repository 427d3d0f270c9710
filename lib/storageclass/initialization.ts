import { ParameterError } from './errors.js';
import { isTrue, positiveInt32Parameter, type ClassParameters } from './parameters.js';

/** The PV volumeAttribute the driver's ControllerPublishVolume reads (pkg/driver/constants.go). */
export const BLOCK_ATTACH_UNTIL_INITIALIZED_ATTRIBUTE = 'blockattachuntilinitialized';

/**
 * The volume-initialization keys.
 *
 * `volumeInitializationRate` is CreateVolume's `VolumeInitializationRate`: the rate (MiB/s) at
 * which a volume restored from a snapshot is filled. EC2 takes it only with a SnapshotId and
 * refuses a blank volume that names one; the driver passes it on regardless, so the create
 * fails at EC2. volhook passes it for a restore and refuses it, with the same outcome and no
 * EC2 call, for any other volume; 0 or less counts as not given, as in the driver.
 *
 * `blockAttachUntilInitialized: "true"` becomes the PV attribute
 * `blockattachuntilinitialized: "true"`, as the driver writes it; the driver's attach then
 * waits until DescribeVolumeStatus no longer says "initializing". A blank volume is
 * initialized at creation, so for every volume volhook makes the wait ends at once.
 *
 * @returns the PV volumeAttributes these keys add, and the rate for CreateVolume.
 * @throws ParameterError naming volumeInitializationRate.
 */
export function initializationFor(
  params: ClassParameters,
  fromSnapshot: boolean,
): { volumeAttributes: Record<string, string>; rate?: number } {
  const rate = positiveInt32Parameter(params.get('volumeInitializationRate'));
  if (rate && !fromSnapshot) {
    throw new ParameterError(
      rate.entry.key,
      `${rate.value} MiB/s applies only to a volume restored from a snapshot (EC2 refuses it on a blank volume or a clone); remove it or set it to 0`,
    );
  }
  const volumeAttributes: Record<string, string> = isTrue(params.get('blockAttachUntilInitialized')) ? { [BLOCK_ATTACH_UNTIL_INITIALIZED_ATTRIBUTE]: 'true' } : {};
  return { volumeAttributes, ...(rate && { rate: rate.value }) };
}
