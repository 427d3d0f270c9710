import { describe, expect, it } from 'vitest';
import { itemKey, type Item, type Result } from '../../lib/contract/index.js';
import type { Disk } from '../../lib/ec2/types.js';
import { Cadence, deferredToTick, onGrid, withCadence } from '../../lib/reconcile/cadence.js';
import { Requeue } from '../../lib/reconcile/outcomes.js';
import { attachingWait, creatingWait } from '../../lib/reconcile/timing.js';

const NOW = new Date('2026-01-01T00:00:10.000Z');
const ago = (ms: number) => new Date(NOW.getTime() - ms).toISOString();
const creating = (createTime?: string): Disk => ({
  volumeId: 'vol-1',
  zone: 'us-east-1a',
  sizeGiB: 1,
  state: 'creating',
  type: 'gp3',
  encrypted: false,
  multiAttach: false,
  tags: {},
  attachments: [],
  ...(createTime !== undefined && { createTime }),
});

describe('requeue hints from EC2 timing', () => {
  it.each([
    ['created just now -> when EC2 usually is done (1.5 s)', ago(0), 1.5],
    ['created 1 s ago -> the rest of the 1.5 s', ago(1_000), 0.5],
    ['created 10 s ago (due) -> soon (0.25 s)', ago(10_000), 0.25],
    ['create time unknown -> the fixed creating interval', undefined, Requeue.creating],
  ])('creating: %s', (_name, createTime, seconds) => {
    expect(creatingWait(creating(createTime), NOW)).toBe(seconds);
  });

  it.each([
    ['attached just now -> 2.5 s', ago(0), 2.5],
    ['attaching for 1.5 s -> 1 s', ago(1_500), 1],
    ['attaching for 30 s -> 0.25 s', ago(30_000), 0.25],
    ['attach time unknown -> the fixed attaching interval', undefined, Requeue.attaching],
  ])('attaching: %s', (_name, attachTime, seconds) => {
    expect(attachingWait({ instanceId: 'i-1', device: '/dev/xvdaa', state: 'attaching', ...(attachTime !== undefined && { attachTime }) }, NOW)).toBe(seconds);
  });
});

describe('cadence of busy requests', () => {
  const requeue = (key: string, requeueAfterSeconds: number): Result => ({ key, outcome: 'requeue', requeueAfterSeconds, message: 'm', writes: [] });

  it('onGrid rounds the due time up to the next tick of the clock', () => {
    expect(onGrid(0, 10_500, 2_000)).toBe(1.5);
    expect(onGrid(1.5, 10_500, 2_000)).toBe(1.5);
    expect(onGrid(1.6, 10_500, 2_000)).toBe(3.5);
    expect(onGrid(0, 12_000, 2_000)).toBe(0);
  });

  it('a small request is answered to the millisecond', () => {
    const results = [requeue('a', 0.25)];
    expect(withCadence(results, 10_100)).toEqual(results);
  });

  it('a busy request: every requeue lands on a common tick, done and failed untouched', () => {
    const results: Result[] = Array.from({ length: Cadence.busyItems }, (_, i) => requeue(`k${i}`, i * 0.3));
    results.push({ key: 'done', outcome: 'done', writes: [] });
    const out = withCadence(results, 10_100);
    const due = out.flatMap((r) => (r.outcome === 'requeue' ? [10_100 + r.requeueAfterSeconds * 1000] : []));
    expect(due.every((t) => t % Cadence.gridMs === 0)).toBe(true);
    out.forEach((r, i) => {
      if (r.outcome === 'requeue') expect(r.requeueAfterSeconds).toBeGreaterThanOrEqual((results[i] as { requeueAfterSeconds: number }).requeueAfterSeconds);
    });
    expect(out.at(-1)).toEqual({ key: 'done', outcome: 'done', writes: [] });
  });

  const items = (n: number) => claims(n);
  it('a busy request inside the window after a tick -> reconciled now', () => {
    expect(deferredToTick(items(3), 12_000 + Cadence.windowMs - 1)).toBeUndefined();
  });

  it('a busy request later than the window -> every item sent back for the next tick, no writes', () => {
    const out = deferredToTick(items(3), 12_000 + Cadence.windowMs + 200)!;
    expect(out).toHaveLength(3);
    for (const r of out) expect(r).toMatchObject({ outcome: 'requeue', requeueAfterSeconds: (Cadence.gridMs - Cadence.windowMs - 200) / 1000, writes: [] });
    expect(out.map((r) => r.key)).toEqual(items(3).map(itemKey));
  });

  it('a single item is never held back', () => {
    expect(deferredToTick(items(1), 12_000 + Cadence.windowMs + 200)).toBeUndefined();
  });
});

function claims(n: number): Item[] {
  return Array.from({ length: n }, (_, i) => ({ kind: 'PersistentVolumeClaimDeleted', uid: `uid-${i}`, namespace: 'default', name: `data-${i}`, pvExists: false, pvCheckedLive: true }));
}
