/**
 * When the items of a busy request come back. Every pass over an item reads EC2 (one batched
 * describe per request), so what a describe costs per volume depends on how many items share
 * it. A request of many items means many objects are in flight: their requeues are rounded up
 * to a common grid of the clock, so that the items of every request due around the same
 * moment come back together and share one describe, whatever each one's own wait was. A small
 * request is answered to the millisecond: a single volume is not held up for company.
 */
import type { Result } from '../contract/index.js';

export const Cadence = {
  /** From this many items in one request, requeues go on the grid. */
  busyItems: 8,
  /** The grid: a describe per request every this often serves all that is due meanwhile. */
  gridMs: 2_000,
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
