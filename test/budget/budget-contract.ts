/**
 * What every RateBudget does, whatever its store: one suite, run against the memory budget
 * (test/budget/memory.test.ts) and the DynamoDB budget over moto (test/e2e/budget-moto.test.ts).
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { BucketKey, BudgetOptions, RateBudget } from '../../lib/budget/index.js';

export type MakeBudget = (options: BudgetOptions) => Promise<RateBudget> | RateBudget;

/** A clock the test moves by hand. */
export function scriptedClock(start = 1_800_000_000_000) {
  let t = start;
  return { now: () => t, advance: (ms: number) => void (t += ms), at: () => t };
}

/** A fresh account per test, so tests sharing one store don't see each other's buckets. */
export const keyOf = (bucket: string, region = 'eu-west-1', account = `acct-${randomUUID().slice(0, 8)}`): BucketKey => ({ account, region, bucket });

export function budgetContract(name: string, make: MakeBudget): void {
  describe(`${name}: the rate budget contract`, () => {
    it('take for more tokens than the bucket holds -> exactly what is there; waits follow the refill rate', async () => {
      const clock = scriptedClock();
      const budget = await make({ now: clock.now, share: 0.9 });
      const key = keyOf('CreateVolume');
      // 100 × 0.9 = 90 tokens, refilled at 5 × 0.9 = 4.5 per second.
      const grant = await budget.take(key, 130);
      expect(grant.granted).toBe(90);
      expect([0, 1, 8, 39].map((i) => grant.waitMs(i))).toEqual([223, 445, 2_000, 8_889]);
      // Nothing left now; after the first wait, exactly one.
      expect((await budget.take(key, 5)).granted).toBe(0);
      clock.advance(grant.waitMs(0));
      expect((await budget.take(key, 5)).granted).toBe(1);
      clock.advance(2_000);
      expect((await budget.take(key, 50)).granted).toBe(9);
    });

    it('a take within the bucket -> all granted; the rest of the bucket stays for the next', async () => {
      const clock = scriptedClock();
      const budget = await make({ now: clock.now, share: 1 });
      const key = keyOf('AttachVolume');
      expect((await budget.take(key, 30)).granted).toBe(30);
      expect((await budget.take(key, 30)).granted).toBe(20);
    });

    it('buckets are per account, Region and bucket name', async () => {
      const clock = scriptedClock();
      const budget = await make({ now: clock.now, share: 1 });
      const key = keyOf('AttachVolume');
      expect((await budget.take(key, 50)).granted).toBe(50);
      expect((await budget.take({ ...key, account: `${key.account}-other` }, 50)).granted).toBe(50);
      expect((await budget.take({ ...key, region: 'us-east-1' }, 50)).granted).toBe(50);
      expect((await budget.take({ ...key, bucket: 'DetachVolume' }, 50)).granted).toBe(50);
      expect((await budget.take(key, 1)).granted).toBe(0);
    });

    it('a Region override -> that Region paces at its own buckets and share; others at the defaults', async () => {
      const clock = scriptedClock();
      const budget = await make({ now: clock.now, share: 1, rates: { 'ap-south-1': { share: 0.5, buckets: { CreateVolume: { capacity: 40, refillPerSecond: 2 } } } } });
      const key = keyOf('CreateVolume', 'ap-south-1');
      const grant = await budget.take(key, 100);
      expect(grant.granted).toBe(20);
      expect(grant.waitMs(0)).toBe(1_000);
      expect((await budget.take({ ...key, region: 'eu-west-1' }, 200)).granted).toBe(100);
    });

    it('throttled -> the rate steps down (bucket emptied, waits longer), then recovers additively to the full rate', async () => {
      const clock = scriptedClock();
      const budget = await make({ now: clock.now, share: 1, aimd: { decrease: 0.5, increasePerSecond: 0.05, minFactor: 0.1, holdMs: 1_000 } });
      const key = keyOf('AttachVolume');
      expect((await budget.take(key, 10)).granted).toBe(10);
      await budget.throttled(key);
      // Emptied, and refilled at 2.5/s instead of 5/s.
      const after = await budget.take(key, 3);
      expect(after.granted).toBe(0);
      expect(after.waitMs(0)).toBe(400);
      // 10 s at a factor ramping 0.5 → 1 (+0.05/s): 5/s × (0.5 × 10 + 0.05 × 10² / 2) = 37.5 tokens.
      clock.advance(10_000);
      const recovered = await budget.take(key, 100);
      expect(recovered.granted).toBe(37);
      expect(recovered.waitMs(0)).toBe(100); // 0.5 token left at the full 5/s again
    });

    it('an action with no throttling bucket -> refused, never unpaced', async () => {
      const budget = await make({});
      await expect(budget.take(keyOf('CreateFleet'), 1)).rejects.toThrow(/"CreateFleet"/);
    });

    it('wanted 0 -> granted 0, nothing taken', async () => {
      const clock = scriptedClock();
      const budget = await make({ now: clock.now, share: 1 });
      const key = keyOf('AttachVolume');
      expect((await budget.take(key, 0)).granted).toBe(0);
      expect((await budget.take(key, 50)).granted).toBe(50);
    });
  });
}

export { expect };
