import { bucketForCall, bucketSpec, THROTTLING_BUCKETS, type BucketSpec } from '../../ec2/throttling.js';

export type { BucketSpec };

/**
 * The default buckets of the simulated account and Region: EC2's, from the one table the
 * backend's rate budget paces against (lib/ec2/throttling.ts).
 */
export const DEFAULT_BUCKETS: Readonly<Record<string, BucketSpec>> = THROTTLING_BUCKETS;

export function bucketSpecFor(
  name: string,
  overrides: Readonly<Record<string, BucketSpec>> = {},
): BucketSpec {
  return overrides[name] ?? bucketSpec(name);
}

/** Which bucket a call draws from: unfiltered, unpaginated describes have their own. */
export function bucketName(action: string, paramNames: readonly string[]): string {
  return bucketForCall(action, paramNames);
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
