/**
 * EC2's request throttling, defined once: which token bucket each action draws from, and each
 * bucket's burst capacity and refill rate (reference/ebs.md, "Request throttling"). EC2 keeps
 * these buckets per account and Region, one per action; DescribeVolumes, DescribeInstances and
 * DescribeSnapshots have two each, one for calls narrowed by filters, IDs or pagination and one
 * (`:unfiltered`) for calls with none, and a call draws only from the one it falls in.
 *
 * The backend's rate budget (`lib/budget`) and the EC2 simulator (`lib/local/ec2`) both read
 * this table, so what volhook paces against is what the simulator enforces.
 */

/** A token bucket as EC2 documents it: `capacity` tokens, refilled continuously. */
export interface BucketSpec {
  capacity: number;
  refillPerSecond: number;
}

const each = (capacity: number, refillPerSecond: number): BucketSpec => ({ capacity, refillPerSecond });

/** Every bucket volhook calls or the simulator serves, by name, at AWS's default sizes. */
export const THROTTLING_BUCKETS = {
  CreateVolume: each(100, 5),
  // A copy is a new volume: it draws from a bucket of its own, sized as CreateVolume's.
  CopyVolumes: each(100, 5),
  DeleteVolume: each(100, 5),
  CreateSnapshot: each(100, 5),
  DeleteSnapshot: each(100, 5),
  CreateTags: each(100, 10),
  DeleteTags: each(100, 10),
  AttachVolume: each(50, 5),
  DetachVolume: each(50, 5),
  ModifyVolume: each(50, 5),
  // Not among the actions EC2 sizes on their own: the "other mutating calls" bucket's size.
  CreateSnapshots: each(50, 5),
  CopySnapshot: each(50, 5),
  RunInstances: each(50, 5),
  TerminateInstances: each(50, 5),
  DescribeVolumes: each(100, 20),
  DescribeInstances: each(100, 20),
  // Served by the simulator for the EBS CSI driver (attach limits; volume initialization); volhook calls neither.
  DescribeInstanceTypes: each(100, 20),
  DescribeVolumeStatus: each(100, 20),
  DescribeAvailabilityZones: each(100, 20),
  DescribeVolumesModifications: each(100, 20),
  DescribeSnapshots: each(100, 20),
  DescribeFastSnapshotRestores: each(100, 20),
  EnableFastSnapshotRestores: each(50, 5),
  'DescribeVolumes:unfiltered': each(50, 10),
  'DescribeInstances:unfiltered': each(50, 10),
  'DescribeSnapshots:unfiltered': each(50, 10),
} as const satisfies Record<string, BucketSpec>;

export type BucketName = keyof typeof THROTTLING_BUCKETS;

export function isBucketName(name: string): name is BucketName {
  return Object.hasOwn(THROTTLING_BUCKETS, name);
}

/** The bucket's spec; a name not in the table is refused, never given a guessed rate. */
export function bucketSpec(bucket: string): BucketSpec {
  if (!isBucketName(bucket)) throw new Error(`no EC2 throttling bucket named ${JSON.stringify(bucket)}`);
  return THROTTLING_BUCKETS[bucket];
}

/**
 * The bucket a narrowed call of `action` draws from (volhook's describes always name IDs or
 * filters). An action with no bucket in the table is refused: calling it unpaced would be a
 * silent gap in the pacing.
 */
export function bucketFor(action: string): BucketName {
  if (action.endsWith(':unfiltered') || !isBucketName(action)) {
    throw new Error(`no EC2 throttling bucket is known for the action ${JSON.stringify(action)}; add it to lib/ec2/throttling.ts`);
  }
  return action;
}

const NARROWING_PARAMETER = /^(Filter|VolumeId|InstanceId|SnapshotId|Owner|RestorableBy)\.|^(MaxResults|NextToken)$/;
/** The describes EC2 lists among its "unfiltered and unpaginated" actions, which have a bucket of their own. */
const HAS_UNFILTERED_BUCKET = new Set(['DescribeVolumes', 'DescribeInstances', 'DescribeSnapshots']);

/** The bucket a Query API call draws from, given the names of its parameters. */
export function bucketForCall(action: string, parameterNames: readonly string[]): BucketName {
  const bucket = bucketFor(action);
  if (!HAS_UNFILTERED_BUCKET.has(action) || parameterNames.some((k) => NARROWING_PARAMETER.test(k))) return bucket;
  return `${bucket}:unfiltered` as BucketName;
}
