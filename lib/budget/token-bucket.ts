/**
 * The budget's arithmetic, pure: a token bucket whose refill rate is scaled by an AIMD
 * factor. Both stores run these functions on the state they hold, so memory and DynamoDB
 * grant exactly alike.
 *
 * The factor recovers linearly (additive increase) from where the last decrease left it, so the
 * tokens refilled between two moments are the integral of a ramp capped at 1, computed exactly
 * rather than at either end's rate.
 */
import type { AimdOptions, BucketLimits } from './options.js';

export interface BucketState {
  /** Tokens at `at` (never above capacity; 0 after EC2 said the bucket is empty). */
  tokens: number;
  /** Epoch ms the state was settled at. Never goes back, whatever the caller's clock says. */
  at: number;
  /** AIMD rate factor at `at`, in [minFactor, 1]. */
  factor: number;
  /** Epoch ms of the last multiplicative decrease, if any. */
  decreasedAt?: number;
  /**
   * Epoch ms of the last token promised to a refused item: each refused item is told a slot
   * of its own, after every slot already told, so items refused by concurrent requests (other
   * backends, other clusters) do not all come back for the same tokens and be refused again.
   */
  promisedUntil?: number;
}

/** A bucket never used yet: full, at the full rate, as EC2's are. */
export function fullBucket(limits: BucketLimits, now: number): BucketState {
  return { tokens: limits.capacity, at: now, factor: 1 };
}

/** The AIMD factor `elapsedMs` after a state with factor `factor`. */
export function recoveredFactor(factor: number, elapsedMs: number, aimd: AimdOptions): number {
  return Math.min(1, factor + (aimd.increasePerSecond / 1000) * Math.max(0, elapsedMs));
}

/** ∫ factor dt over `elapsedMs` while it ramps up from `factor` and stays at 1 once there. */
function factorIntegral(factor: number, elapsedMs: number, aimd: AimdOptions): number {
  const slope = aimd.increasePerSecond / 1000;
  const e = Math.max(0, elapsedMs);
  const toFull = (1 - factor) / slope;
  if (e <= toFull) return factor * e + (slope * e * e) / 2;
  return factor * toFull + (slope * toFull * toFull) / 2 + (e - toFull);
}

/** The state brought forward to `now`: refilled up to capacity, factor recovered. */
export function settle(state: BucketState, limits: BucketLimits, aimd: AimdOptions, now: number): BucketState {
  const elapsed = Math.max(0, now - state.at);
  const tokens = Math.min(limits.capacity, state.tokens + limits.refillPerMs * factorIntegral(state.factor, elapsed, aimd));
  return { ...state, tokens, at: state.at + elapsed, factor: recoveredFactor(state.factor, elapsed, aimd) };
}

export interface TakeResult {
  state: BucketState;
  granted: number;
  /** ms from `now` until the token for the i-th refused item is there at the current rate. */
  waitMs(i: number): number;
}

/** Tokens a fraction short of a whole one through floating-point sums still count. */
const EPSILON = 1e-9;

/**
 * How late an item may come back for its promised slot and still count as on time: the
 * forwarder's send cadence (1.5 s) and the way to the backend.
 */
export const PROMISE_GRACE_MS = 2_000;

/**
 * The end of the promised slots once those that passed unclaimed are given back. Every take
 * settles the state, so no item took a token between `state.at` and `now`: a slot promised in
 * that span (and more than {@link PROMISE_GRACE_MS} ago) was not claimed — its item's answer
 * was lost, its forwarder's leader died, its object changed and was sent again and given a
 * slot at the end. Without this the slots after it would stay promised to nobody, and items
 * refused now would be told to wait behind them while the bucket refills for no one.
 */
export function releaseMissedSlots(state: BucketState, limits: BucketLimits, now: number): number | undefined {
  const until = state.promisedUntil;
  if (until === undefined) return undefined;
  const perMs = limits.refillPerMs * state.factor;
  const missed = Math.floor((Math.min(until, now - PROMISE_GRACE_MS) - state.at) * perMs + EPSILON);
  return missed > 0 ? until - missed / perMs : until;
}

/** Takes up to `wanted` whole tokens at `now`. */
export function take(state: BucketState, limits: BucketLimits, aimd: AimdOptions, wanted: number, now: number): TakeResult {
  if (!Number.isInteger(wanted) || wanted < 0) throw new RangeError(`wanted must be a whole number ≥ 0, got ${wanted}`);
  const promisedUntil = releaseMissedSlots(state, limits, now);
  const settled = { ...settle(state, limits, aimd, now), ...(promisedUntil !== undefined && { promisedUntil }) };
  const granted = Math.min(wanted, Math.max(0, Math.floor(settled.tokens + EPSILON)));
  const next: BucketState = { ...settled, tokens: settled.tokens - granted };
  const perMs = limits.refillPerMs * next.factor;
  const fromNow = waits(next.tokens, perMs, next.at - now);
  const refused = wanted - granted;
  if (refused === 0) return { state: next, granted, waitMs: fromNow };
  // The refused items' slots: one token interval apart, after the slots already promised.
  const interval = 1 / perMs;
  const firstFromNow = Math.max(0, next.at - now) + Math.max(0, 1 - next.tokens - EPSILON) / perMs;
  const first = Math.max(now + firstFromNow, (settled.promisedUntil ?? -Infinity) + interval);
  const slots = (i: number) => {
    if (!Number.isInteger(i) || i < 0) throw new RangeError(`i must be a whole number ≥ 0, got ${i}`);
    return Math.ceil(first + i * interval - now);
  };
  return { state: { ...next, promisedUntil: first + (refused - 1) * interval }, granted, waitMs: slots };
}

/**
 * Waits for refused items when the bucket holds `tokens` now: the i-th needs i + 1 whole
 * tokens more than are there, refilled at `perMs`. Whole ms, rounded up, so a caller that
 * comes back after the wait finds its token there.
 */
export function waits(tokens: number, perMs: number, aheadMs = 0): (i: number) => number {
  return (i) => {
    if (!Number.isInteger(i) || i < 0) throw new RangeError(`i must be a whole number ≥ 0, got ${i}`);
    return Math.ceil(Math.max(0, aheadMs) + Math.max(0, i + 1 - tokens - EPSILON) / perMs);
  };
}

/**
 * EC2 answered RequestLimitExceeded: its bucket is empty now, so ours is too, and the rate
 * factor steps down — once per `holdMs`, since the calls granted before the step down are
 * still coming back and tell nothing new.
 */
export function throttle(state: BucketState, limits: BucketLimits, aimd: AimdOptions, now: number): BucketState {
  const settled = settle(state, limits, aimd, now);
  const emptied = { ...settled, tokens: 0 };
  if (settled.decreasedAt !== undefined && settled.at - settled.decreasedAt < aimd.holdMs) return emptied;
  return { ...emptied, factor: Math.max(aimd.minFactor, settled.factor * aimd.decrease), decreasedAt: settled.at };
}
