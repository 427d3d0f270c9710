/** A token bucket as EC2 documents it: `capacity` tokens, refilled continuously. */
export interface BucketSpec {
  capacity: number;
  refillPerSecond: number;
}

const each = (capacity: number, refillPerSecond: number): BucketSpec => ({ capacity, refillPerSecond });

/**
 * The default buckets, one per name, for one account and Region (the simulator is both).
 * Every action has its own bucket; DescribeVolumes and DescribeInstances have two, one for
 * calls with filters, IDs or pagination and one (`:unfiltered`) for calls with none, and a
 * call draws only from the one it falls in. Names not listed fall back by kind in
 * {@link bucketSpecFor}.
 */
export const DEFAULT_BUCKETS: Readonly<Record<string, BucketSpec>> = {
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
  RunInstances: each(50, 5),
  TerminateInstances: each(50, 5),
  DescribeVolumes: each(100, 20),
  DescribeInstances: each(100, 20),
  DescribeAvailabilityZones: each(100, 20),
  DescribeVolumesModifications: each(100, 20),
  DescribeSnapshots: each(100, 20),
  DescribeFastSnapshotRestores: each(100, 20),
  EnableFastSnapshotRestores: each(50, 5),
  'DescribeVolumes:unfiltered': each(50, 10),
  'DescribeInstances:unfiltered': each(50, 10),
  'DescribeSnapshots:unfiltered': each(50, 10),
};

const DESCRIBE = each(100, 20);
const MUTATING = each(50, 5);

export function bucketSpecFor(
  name: string,
  overrides: Readonly<Record<string, BucketSpec>> = {},
): BucketSpec {
  return overrides[name] ?? DEFAULT_BUCKETS[name] ?? (name.startsWith('Describe') ? DESCRIBE : MUTATING);
}

/** The describes EC2 lists among its "unfiltered and unpaginated" actions, which have a bucket of their own. */
const SPLIT_DESCRIBES = new Set(['DescribeVolumes', 'DescribeInstances', 'DescribeSnapshots']);

/** Which bucket a call draws from: unfiltered, unpaginated describes have their own. */
export function bucketName(action: string, paramNames: readonly string[]): string {
  if (!SPLIT_DESCRIBES.has(action)) return action;
  const narrowed = paramNames.some((k) =>
    /^(Filter|VolumeId|InstanceId|SnapshotId|Owner|RestorableBy)\.|^(MaxResults|NextToken)$/.test(k),
  );
  return narrowed ? action : `${action}:unfiltered`;
}

export class TokenBucket {
  private tokens: number;
  private last: number;

  constructor(
    readonly spec: BucketSpec,
    now: number,
  ) {
    this.tokens = spec.capacity;
    this.last = now;
  }

  /** Brings the level up to `now` at `scale` times the documented refill rate. */
  settle(now: number, scale: number): void {
    const elapsed = Math.max(0, now - this.last);
    this.tokens = Math.min(this.spec.capacity, this.tokens + (elapsed / 1000) * this.spec.refillPerSecond * scale);
    this.last = Math.max(this.last, now);
  }

  take(now: number, scale: number): boolean {
    this.settle(now, scale);
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  level(now: number, scale: number): number {
    this.settle(now, scale);
    return this.tokens;
  }
}

/** All buckets of the simulated account. */
export class Throttle {
  private buckets = new Map<string, TokenBucket>();

  constructor(
    public enabled: boolean,
    private overrides: Record<string, BucketSpec>,
    private scale: number,
  ) {}

  take(name: string, now: number): boolean {
    if (!this.enabled) return true;
    let bucket = this.buckets.get(name);
    if (!bucket) {
      bucket = new TokenBucket(bucketSpecFor(name, this.overrides), now);
      this.buckets.set(name, bucket);
    }
    return bucket.take(now, this.scale);
  }

  /** Changing the scale first settles every bucket at the old rate, so no tokens appear or vanish. */
  setScale(scale: number, now: number): void {
    for (const b of this.buckets.values()) b.settle(now, this.scale);
    this.scale = scale;
  }

  /** New specs take effect with full buckets. */
  setOverrides(overrides: Record<string, BucketSpec>): void {
    this.overrides = overrides;
    this.buckets.clear();
  }

  reset(): void {
    this.buckets.clear();
  }

  levels(now: number): Record<string, { tokens: number } & BucketSpec> {
    const out: Record<string, { tokens: number } & BucketSpec> = {};
    for (const [name, b] of this.buckets) out[name] = { ...b.spec, tokens: b.level(now, this.scale) };
    return out;
  }
}
