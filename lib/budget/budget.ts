/** The rate budget's interface: what the gateway and reconcilers see, whatever the store. */

/** One shared bucket: EC2 throttles per account, Region and bucket. */
export interface BucketKey {
  account: string;
  region: string;
  /** A throttling-bucket name from lib/ec2/throttling.ts (see {@link bucketFor}). */
  bucket: string;
}

export interface Grant {
  /** Tokens taken now, 0..wanted. */
  granted: number;
  /** ms from now until the token for the i-th refused item (i = 0, 1, …) will be there, at the current shared rate. */
  waitMs(i: number): number;
}

export interface RateBudget {
  /** Atomically take up to `wanted` tokens in one step. Throws BudgetUnavailableError when the store can't be reached. */
  take(key: BucketKey, wanted: number): Promise<Grant>;
  /**
   * EC2 still answered RequestLimitExceeded for this bucket: step the shared rate down
   * (multiplicative decrease), shared through the store; it recovers additively over time.
   */
  throttled(key: BucketKey): Promise<void>;
}

/** The budget's store could not be reached or refused the request: pace nothing, call nothing. */
export class BudgetUnavailableError extends Error {
  override name = 'BudgetUnavailableError';
}
