/**
 * When the items of a busy request are looked at. Every pass over an item reads EC2 (one
 * batched describe per request), so what a describe costs per volume depends on how many
 * items share it. A request of several items means many objects are in flight; then:
 *
 * - its requeues are rounded up to a common grid of the clock, so that the items of every
 *   request due around the same moment come back together and share one describe, whatever
 *   each one's own wait was;
 * - a busy request that arrives just before a tick (new objects, seen as they come) is not
 *   looked at now: its items are sent back for the tick, at most a quarter of the grid away,
 *   to share its describe. Requests arriving in the three quarters after a tick are looked at
 *   at once: a forwarder that is late with what was due at the tick (its requests in flight
 *   all busy) must not be sent back again and again.
 *
 * A request of one item is answered to the millisecond: a single volume is not held up.
 */
import { itemKey, type Item, type Result } from '../contract/index.js';

export const Cadence = {
  /** From this many items in one request, it is busy: requeues go on the grid. */
  busyItems: 2,
  /** The grid: a describe per request every this often serves all that is due meanwhile. */
  gridMs: 2_000,
  /** A busy request arriving later than this after a tick waits for the next one. */
  windowMs: 1_500,
} as const;

/** Seconds from `nowMs` to the first grid tick at or after `nowMs + seconds`. */
export function onGrid(seconds: number, nowMs: number, gridMs: number): number {
  const due = nowMs + seconds * 1000;
  const tick = Math.ceil(due / gridMs) * gridMs;
  return Math.round(tick - nowMs) / 1000;
}

/** Pure: the request's results with their requeues on the grid when the request is busy. */
export function withCadence(results: Result[], nowMs: number): Result[] {
  if (results.length < Cadence.busyItems) return results;
  return results.map((result) =>
    result.outcome === 'requeue' ? { ...result, requeueAfterSeconds: onGrid(result.requeueAfterSeconds, nowMs, Cadence.gridMs) } : result,
  );
}

/**
 * Pure: a busy request that arrived outside the window after a tick: every item sent back for
 * the next tick, untouched (no EC2 call, no write). Undefined when the request is to be
 * reconciled now.
 */
export function deferredToTick(items: readonly Item[], nowMs: number): Result[] | undefined {
  if (items.length < Cadence.busyItems) return undefined;
  const sinceTick = nowMs - Math.floor(nowMs / Cadence.gridMs) * Cadence.gridMs;
  if (sinceTick < Cadence.windowMs) return undefined;
  const requeueAfterSeconds = onGrid(0, nowMs, Cadence.gridMs);
  const message = `many objects in flight: EC2 is read every ${Cadence.gridMs / 1000} s for all of them at once; looked at on the next tick`;
  return items.map((item) => ({ key: itemKey(item), outcome: 'requeue', requeueAfterSeconds, message, writes: [] }));
}
