/**
 * The budget in one process's memory (`npm start`, unit tests): a step runs synchronously,
 * so it is atomic without any condition.
 */
import type { RateBudget } from './budget.js';
import type { BudgetOptions } from './options.js';
import { createBudget } from './shared-budget.js';
import type { BucketStore } from './store.js';
import type { BucketState } from './token-bucket.js';

export function createMemoryBudget(options?: BudgetOptions): RateBudget {
  const states = new Map<string, BucketState>();
  const store: BucketStore = {
    async update(id, step) {
      const { next, result } = step(states.get(id));
      if (next) states.set(id, next);
      return result;
    },
  };
  return createBudget(store, options);
}
