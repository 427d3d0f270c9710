/**
 * What a store answers is checked where it enters the budget: a grant that is not a whole
 * number of tokens within what was asked, or a wait that is not a finite number of ms ≥ 0,
 * is the store's fault, never a wait to pass on — BudgetUnavailableError, naming the bucket
 * and the value, as for a store that cannot be reached.
 */
import { describe, expect, it } from 'vitest';
import { BudgetUnavailableError } from '../../lib/budget/index.js';
import { createBudget } from '../../lib/budget/shared-budget.js';
import type { BucketStore } from '../../lib/budget/store.js';
import type { BucketState } from '../../lib/budget/token-bucket.js';
import { keyOf, scriptedClock } from './budget-contract.js';

/** A store that holds `state` for every bucket and answers from it (never written). */
function storeHolding(state: (now: number) => BucketState, contended = false): BucketStore {
  const clock = scriptedClock();
  return {
    async update(_id, step, onContention) {
      return contended ? onContention(state(clock.at())) : step(state(clock.at())).result;
    },
  };
}

const clock = scriptedClock();
const sound = (now: number): BucketState => ({ tokens: 0.5, at: now, factor: 1 });

describe('the budget checks what its store answers', () => {
  it.each<[string, (now: number) => BucketState, boolean]>([
    ['tokens NaN', (now) => ({ tokens: NaN, at: now, factor: 1 }), false],
    ['settled at NaN', () => ({ tokens: 0, at: NaN, factor: 1 }), false],
    ['rate factor 0 (an endless wait)', (now) => ({ tokens: 0, at: now, factor: 0 }), false],
    ['rate factor below 0 (a wait before now)', (now) => ({ tokens: 0, at: now, factor: -0.5 }), false],
    ['contended, the last state seen at factor 0', (now) => ({ tokens: 0, at: now, factor: 0 }), true],
  ])('%s -> BudgetUnavailableError naming the bucket and the value; a sound state -> a finite wait', async (_name, state, contended) => {
    const key = keyOf('AttachVolume');
    const err = await createBudget(storeHolding(state, contended), { now: clock.now }).take(key, 3).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BudgetUnavailableError);
    expect((err as Error).message).toMatch(new RegExp(`rate budget of bucket ${key.account}#eu-west-1#AttachVolume answered (a grant|a wait) of (NaN|-?Infinity|-\\d+)`));

    const grant = await createBudget(storeHolding(sound, contended), { now: clock.now }).take(key, 3);
    expect(grant.granted).toBe(0);
    for (const i of [0, 1, 2]) {
      expect(Number.isFinite(grant.waitMs(i))).toBe(true);
      expect(grant.waitMs(i)).toBeGreaterThan(0);
    }
  });
});
