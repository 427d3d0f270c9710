import { describe, expect, it } from 'vitest';
import { DEFAULT_AIMD, type AimdOptions, type BucketLimits } from '../../lib/budget/options.js';
import { fullBucket, PROMISE_GRACE_MS, recoveredFactor, releaseMissedSlots, settle, take, throttle, waits, type BucketState } from '../../lib/budget/token-bucket.js';

// CreateVolume at full share: 100 tokens, 5 per second.
const create: BucketLimits = { capacity: 100, refillPerMs: 5 / 1000 };
const aimd: AimdOptions = { decrease: 0.5, increasePerSecond: 0.1, minFactor: 0.1, holdMs: 1_000 };

describe('token bucket arithmetic', () => {
  it('take of 130 from a full bucket of 100 -> 100 granted; refused items wait 200 ms, 400 ms, … (5/s)', () => {
    const r = take(fullBucket(create, 0), create, aimd, 130, 0);
    expect(r.granted).toBe(100);
    expect(r.state.tokens).toBe(0);
    expect([0, 1, 2, 29].map(r.waitMs)).toEqual([200, 400, 600, 6_000]);
  });

  it('a refused item that comes back after its wait -> its token is there', () => {
    const first = take(fullBucket(create, 0), create, aimd, 101, 0);
    const wait = first.waitMs(0);
    expect(take(first.state, create, aimd, 1, wait - 1).granted).toBe(0);
    expect(take(first.state, create, aimd, 1, wait).granted).toBe(1);
  });

  it('two requests refused one after the other -> each item gets a slot of its own, after those already promised', () => {
    const first = take(fullBucket(create, 0), create, aimd, 103, 0); // 100 granted, 3 refused: 200, 400, 600 ms
    expect([0, 1, 2].map(first.waitMs)).toEqual([200, 400, 600]);
    expect(first.state.promisedUntil).toBeCloseTo(600, 3);
    const second = take(first.state, create, aimd, 2, 50); // nothing left: slots after 600 ms, not 200 ms again
    expect(second.granted).toBe(0);
    expect([0, 1].map(second.waitMs)).toEqual([750, 950]);
    expect(second.state.promisedUntil).toBeCloseTo(1_000, 3);
    // The promises take no token: the first refused item, back at its slot, finds its token there.
    expect(take(second.state, create, aimd, 1, 200).granted).toBe(1);
  });

  it('100 slots promised up to 20 s, none claimed by 10 s (the items gone) -> the 40 past the 2 s grace are given back: a refusal now waits 2.2 s, not 10.2 s', () => {
    const state = { tokens: 0, at: 0, factor: 1, promisedUntil: 20_000 };
    const r = take(state, create, aimd, 150, 10_000);
    expect(r.granted).toBe(50); // what refilled meanwhile, as before
    expect(r.waitMs(0)).toBe(2_200);
    expect(r.state.promisedUntil).toBeCloseTo(12_000 + 100 * 200, 3);
    expect(releaseMissedSlots(state, create, 10_000)).toBeCloseTo(12_000, 3);
  });

  it('the same slots, each claimed on time -> nothing given back: a refusal waits behind every promise (control)', () => {
    let state: BucketState = { tokens: 0, at: 0, factor: 1, promisedUntil: 20_000 };
    for (let slot = 200; slot <= 10_000; slot += 200) {
      const back = take(state, create, aimd, 1, slot);
      expect(back.granted).toBe(1);
      state = back.state;
    }
    const r = take(state, create, aimd, 1, 10_000);
    expect(r.granted).toBe(0);
    expect(r.waitMs(0)).toBe(10_200);
  });

  it('a promised item back within the grace -> its slot is not given back', () => {
    const state = { tokens: 0, at: 0, factor: 1, promisedUntil: 20_000 };
    expect(releaseMissedSlots(state, create, PROMISE_GRACE_MS)).toBe(20_000);
  });

  it('promised slots long past -> a refusal waits from the bucket as it is now', () => {
    const r = take({ tokens: 0, at: 10_000, factor: 1, promisedUntil: 600 }, create, aimd, 1, 10_000);
    expect(r.granted).toBe(0);
    expect(r.waitMs(0)).toBe(200);
  });

  it('partial tokens carry over: 0.5 token left -> the next whole one 100 ms away', () => {
    const r = take({ tokens: 2.5, at: 0, factor: 1 }, create, aimd, 3, 0);
    expect(r.granted).toBe(2);
    expect(r.waitMs(0)).toBe(100);
    expect(r.waitMs(1)).toBe(300);
  });

  it('refill stops at capacity: an hour idle -> 100 tokens, not 18,100', () => {
    expect(settle({ tokens: 0, at: 0, factor: 1 }, create, aimd, 3_600_000).tokens).toBe(100);
  });

  it('a caller whose clock is behind the state -> nothing refilled, the state does not go back, waits count from its now', () => {
    const state = { tokens: 0, at: 10_000, factor: 1 };
    const r = take(state, create, aimd, 1, 9_000);
    expect(r.granted).toBe(0);
    expect(r.state.at).toBe(10_000);
    expect(r.waitMs(0)).toBe(1_000 + 200);
  });

  it('wanted that is not a whole number ≥ 0 -> refused', () => {
    expect(() => take(fullBucket(create, 0), create, aimd, 1.5, 0)).toThrow(RangeError);
    expect(() => take(fullBucket(create, 0), create, aimd, -1, 0)).toThrow(RangeError);
    expect(() => waits(0, 1)(-1)).toThrow(RangeError);
  });
});

describe('AIMD', () => {
  it('RequestLimitExceeded -> bucket emptied, factor × decrease; refill and waits at the lowered rate', () => {
    const t = throttle(fullBucket(create, 0), create, aimd, 0);
    expect(t).toEqual({ tokens: 0, at: 0, factor: 0.5, decreasedAt: 0 });
    // Rate 2.5/s right after: the first token is 400 ms away, not 200.
    expect(take(t, create, aimd, 1, 0).waitMs(0)).toBe(400);
  });

  it('a second throttle within holdMs -> emptied again but no second step down; after holdMs -> steps down', () => {
    const once = throttle(fullBucket(create, 0), create, aimd, 0);
    const held = throttle(once, create, aimd, 999);
    expect(held.factor).toBeCloseTo(0.5 + 0.1 * 0.999, 9);
    expect(held.tokens).toBe(0);
    expect(held.decreasedAt).toBe(0);
    const again = throttle(held, create, aimd, 1_000);
    expect(again.factor).toBeCloseTo((0.5 + 0.1) * 0.5, 9);
    expect(again.decreasedAt).toBe(1_000);
  });

  it('never below minFactor, however often throttled', () => {
    let s = fullBucket(create, 0);
    for (let t = 0; t < 20_000; t += 1_000) s = throttle(s, create, aimd, t);
    expect(s.factor).toBeGreaterThanOrEqual(aimd.minFactor);
    expect(s.factor).toBeLessThan(0.2);
  });

  it('additive increase: from 0.5 at +0.1/s -> 0.8 after 3 s, 1 (not more) after 5 s and later', () => {
    expect(recoveredFactor(0.5, 3_000, aimd)).toBeCloseTo(0.8, 9);
    expect(recoveredFactor(0.5, 5_000, aimd)).toBe(1);
    expect(recoveredFactor(0.5, 60_000, aimd)).toBe(1);
  });

  it('tokens refilled while the factor ramps -> the exact integral (ramp, then full rate)', () => {
    const low = { tokens: 0, at: 0, factor: 0.5 };
    // 0..5 s: factor 0.5 → 1, mean 0.75 → 5 s × 5/s × 0.75 = 18.75; then 5 s at 5/s = 25.
    expect(settle(low, create, aimd, 5_000).tokens).toBeCloseTo(18.75, 9);
    expect(settle(low, create, aimd, 10_000).tokens).toBeCloseTo(43.75, 9);
    // Settling in steps gives what settling once does.
    let stepped = low;
    for (let t = 250; t <= 10_000; t += 250) stepped = settle(stepped, create, aimd, t);
    expect(stepped.tokens).toBeCloseTo(43.75, 6);
  });

  it('the default parameters: one step (0.7) back to full in 30 s', () => {
    expect(recoveredFactor(DEFAULT_AIMD.decrease, 29_000, DEFAULT_AIMD)).toBeLessThan(1);
    expect(recoveredFactor(DEFAULT_AIMD.decrease, 30_000, DEFAULT_AIMD)).toBeCloseTo(1, 9);
  });
});
