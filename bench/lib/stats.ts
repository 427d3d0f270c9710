/** Small numeric helpers of the benchmark: percentiles and the EC2 token-bucket floor. */

/** The q-quantile (0..1) by nearest rank; undefined for no values. */
export function percentile(values: readonly number[], q: number): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil(q * sorted.length)));
  return sorted[rank - 1];
}

/**
 * The fewest seconds any provisioner needs for `n` new, attached volumes on a default account
 * (docs: reference/ebs.md, "Request throttling"): CreateVolume drains a bucket of 100 refilled
 * at 5/s, AttachVolume one of 50 at 5/s, and the two overlap, so the floor is the slower one.
 * The simulator's time scale multiplies the refill (capacities stay), dividing the floor.
 *
 * @example tokenBucketFloorSeconds(1000, 1) === 190
 */
export function tokenBucketFloorSeconds(n: number, timeScale: number): number {
  const create = (n - 100) / 5;
  const attach = (n - 50) / 5;
  return Math.max(create, attach, 0) / timeScale;
}
