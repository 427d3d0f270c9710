import { describe, expect, it } from 'vitest';
import { createMemoryBudget } from '../../lib/budget/index.js';
import { budgetContract, keyOf, scriptedClock } from './budget-contract.js';

budgetContract('memory budget', (options) => createMemoryBudget(options));

describe('memory budget', () => {
  it('two budgets in one process -> separate buckets (memory paces one process only)', async () => {
    const clock = scriptedClock();
    const a = createMemoryBudget({ now: clock.now, share: 1 });
    const b = createMemoryBudget({ now: clock.now, share: 1 });
    const key = keyOf('AttachVolume');
    expect((await a.take(key, 50)).granted).toBe(50);
    expect((await b.take(key, 50)).granted).toBe(50);
  });

  it('concurrent takes -> never more than the bucket, together', async () => {
    const clock = scriptedClock();
    const budget = createMemoryBudget({ now: clock.now, share: 1 });
    const key = keyOf('AttachVolume');
    const grants = await Promise.all(Array.from({ length: 20 }, () => budget.take(key, 7)));
    expect(grants.reduce((n, g) => n + g.granted, 0)).toBe(50);
  });

  it('timeScale 10 (simulator run 10× faster) -> refill ×10, capacity unchanged', async () => {
    const clock = scriptedClock();
    const budget = createMemoryBudget({ now: clock.now, share: 1, timeScale: 10 });
    const key = keyOf('CreateVolume');
    const grant = await budget.take(key, 150);
    expect(grant.granted).toBe(100);
    expect(grant.waitMs(0)).toBe(20);
  });

  it.each([
    [{ share: 0 }, /share must be in \(0, 1\]/],
    [{ share: 1.2 }, /share must be in \(0, 1\]/],
    [{ aimd: { decrease: 1 } }, /aimd.decrease/],
    [{ rates: { 'eu-west-1': { buckets: { CreateVolum: { capacity: 1, refillPerSecond: 1 } } } } }, /eu-west-1\.buckets\.CreateVolum: unknown throttling bucket/],
    [{ rates: { 'eu-west-1': { buckets: { CreateVolume: { capacity: -1, refillPerSecond: 1 } } } } }, /eu-west-1\.buckets\.CreateVolume\.capacity/],
    [{ rates: { Ireland: {} } }, /Ireland: not a Region name/],
  ])('bad options %j -> refused, naming the field', (options, message) => {
    expect(() => createMemoryBudget(options as never)).toThrow(message);
  });
});
