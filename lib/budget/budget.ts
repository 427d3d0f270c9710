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

/**
 * The budget's answer as the gateway may take it: a whole number of tokens in 0..wanted, and
 * for each refused item a wait of a finite number of ms ≥ 0. Anything else — NaN or an endless
 * wait from a store's state (a rate factor of 0, a corrupt item) — is the store's fault and
 * throws BudgetUnavailableError naming the bucket and the value: never a wait that would
 * reach the forwarder as `requeueAfterSeconds: null`, nor one of 0 that would loop.
 */
export function checkedGrant(bucket: string, wanted: number, grant: Grant): Grant {
  const { granted } = grant;
  const refuse = (what: string) =>
    new BudgetUnavailableError(`the rate budget of bucket ${bucket} answered ${what}; no EC2 call is made on such an answer`);
  if (!Number.isInteger(granted) || granted < 0 || granted > wanted) throw refuse(`a grant of ${granted} tokens for ${wanted} asked`);
  const waits = Array.from({ length: wanted - granted }, (_, i) => {
    const ms = grant.waitMs(i);
    if (!Number.isFinite(ms) || ms < 0) throw refuse(`a wait of ${ms} ms for refused item ${i}`);
    return ms;
  });
  return {
    granted,
    waitMs(i) {
      const ms = waits[i];
      if (ms === undefined) throw new RangeError(`i must be a whole number in 0..${waits.length - 1}, got ${i}`);
      return ms;
    },
  };
}
