/**
 * Where bucket states live. A store only applies a step atomically; what the step does
 * (lib/budget/token-bucket.ts) is the same for every store.
 */
import type { BucketKey } from './budget.js';
import type { BucketState } from './token-bucket.js';

export interface Step<R> {
  /** The state to store, or none when nothing changed worth a write. */
  next?: BucketState;
  result: R;
}

export interface BucketStore {
  /**
   * Runs `step` on the bucket's current state (undefined: never used) and stores its `next`
   * only if nobody changed the bucket in between. Under lasting contention, gives up after a
   * bounded number of attempts and answers `contended(last state seen)` instead.
   * Throws BudgetUnavailableError when the store can't be reached.
   */
  update<R>(id: string, step: (current: BucketState | undefined) => Step<R>, contended: (last: BucketState | undefined) => R): Promise<R>;
}

/** One bucket per account, Region and bucket name. */
export function bucketId(key: BucketKey): string {
  for (const field of ['account', 'region', 'bucket'] as const) {
    const value = key[field];
    if (!value || value.includes('#')) throw new Error(`budget key: ${field} must be a non-empty name without '#', got ${JSON.stringify(value)}`);
  }
  return `${key.account}#${key.region}#${key.bucket}`;
}
