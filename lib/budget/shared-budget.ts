/** The RateBudget over any BucketStore: the token-bucket steps, run atomically by the store. */
import { checkedGrant, type Grant, type RateBudget } from './budget.js';
import { resolveOptions, type BudgetOptions } from './options.js';
import type { BucketStore } from './store.js';
import { bucketId } from './store.js';
import { fullBucket, settle, take, throttle, waits } from './token-bucket.js';

export function createBudget(store: BucketStore, options?: BudgetOptions): RateBudget {
  const { now, aimd, limits: limitsOf } = resolveOptions(options);
  return {
    async take(key, wanted) {
      const id = bucketId(key);
      const limits = limitsOf(key.region, key.bucket);
      // Checked inside the step, before its state is written back: a state whose arithmetic
      // gives no sound answer is not stored either.
      return store.update<Grant>(
        id,
        (current) => {
          const t = now();
          const taken = take(current ?? fullBucket(limits, t), limits, aimd, wanted, t);
          const grant = checkedGrant(id, wanted, { granted: taken.granted, waitMs: taken.waitMs });
          // A grant takes tokens; a refusal promises slots (promisedUntil): both are written.
          return wanted > 0 ? { next: taken.state, result: grant } : { result: grant };
        },
        // Others kept taking from this bucket: refuse, and wait as if it were empty.
        (last) => {
          const t = now();
          const factor = last ? settle(last, limits, aimd, t).factor : 1;
          return checkedGrant(id, wanted, { granted: 0, waitMs: waits(0, limits.refillPerMs * factor) });
        },
      );
    },
    async throttled(key) {
      const id = bucketId(key);
      const limits = limitsOf(key.region, key.bucket);
      await store.update(
        id,
        (current) => {
          const t = now();
          return { next: throttle(current ?? fullBucket(limits, t), limits, aimd, t), result: undefined };
        },
        // Others kept writing this bucket, after throttles of their own most likely: theirs count.
        () => undefined,
      );
    },
  };
}
