import { describe, expect, it } from 'vitest';
import { budgetFromEnvironment, budgetOptionsFromEnvironment } from '../../lib/budget/index.js';
import { keyOf, scriptedClock } from './budget-contract.js';

describe('budget from the environment', () => {
  it('no VOLHOOK_BUDGET_TABLE -> the memory budget, at the default share 0.98', async () => {
    const clock = scriptedClock();
    const budget = budgetFromEnvironment({}, { now: clock.now });
    const grant = await budget.take(keyOf('CreateVolume'), 200);
    expect(grant.granted).toBe(98);
    expect([grant.waitMs(0), grant.waitMs(1)]).toEqual([205, 409]); // 5 × 0.98 = 4.9 per second
  });

  it('VOLHOOK_BUDGET_RATES and VOLHOOK_BUDGET_SHARE -> applied, the environment over the defaults given in code', async () => {
    const clock = scriptedClock();
    const env = {
      VOLHOOK_BUDGET_SHARE: '0.5',
      VOLHOOK_BUDGET_RATES: JSON.stringify({ 'us-east-1': { share: 1, buckets: { AttachVolume: { capacity: 200, refillPerSecond: 20 } } } }),
    };
    const budget = budgetFromEnvironment(env, { now: clock.now, share: 0.9 });
    expect((await budget.take(keyOf('AttachVolume', 'us-east-1'), 500)).granted).toBe(200);
    expect((await budget.take(keyOf('AttachVolume', 'eu-west-1'), 500)).granted).toBe(25);
  });

  it('VOLHOOK_BUDGET_TIME_SCALE -> refill scaled for a faster simulator', async () => {
    const clock = scriptedClock();
    const budget = budgetFromEnvironment({ VOLHOOK_BUDGET_TIME_SCALE: '100', VOLHOOK_BUDGET_SHARE: '1' }, { now: clock.now });
    const grant = await budget.take(keyOf('AttachVolume'), 51);
    expect(grant.waitMs(0)).toBe(2);
  });

  it.each([
    [{ VOLHOOK_BUDGET_RATES: '{"eu-west-1": ' }, /^VOLHOOK_BUDGET_RATES is not JSON/],
    [{ VOLHOOK_BUDGET_RATES: '{"eu-west-1": {"share": 2}}' }, /^VOLHOOK_BUDGET_RATES: eu-west-1\.share: /],
    [{ VOLHOOK_BUDGET_RATES: '{"eu-west-1": {"shares": 0.5}}' }, /^VOLHOOK_BUDGET_RATES: eu-west-1: Unrecognized key: "shares"/],
    [{ VOLHOOK_BUDGET_RATES: '{"eu-west-1": {"buckets": {"AttachVolume": {"capacity": "50", "refillPerSecond": 5}}}}' }, /^VOLHOOK_BUDGET_RATES: eu-west-1\.buckets\.AttachVolume\.capacity: /],
    [{ VOLHOOK_BUDGET_RATES: '[]' }, /^VOLHOOK_BUDGET_RATES: \(root\): /],
    [{ VOLHOOK_BUDGET_SHARE: 'most' }, /^VOLHOOK_BUDGET_SHARE must be a number, got "most"/],
    [{ VOLHOOK_BUDGET_SHARE: '1.5' }, /^VOLHOOK_BUDGET_SHARE must be in \(0, 1\]/],
    [{ VOLHOOK_BUDGET_TIME_SCALE: '0' }, /^VOLHOOK_BUDGET_TIME_SCALE must be positive/],
  ])('%j -> refused, naming the variable and field', (env, message) => {
    expect(() => budgetOptionsFromEnvironment(env)).toThrow(message);
    expect(() => budgetFromEnvironment({ ...env, VOLHOOK_BUDGET_TABLE: 't' })).toThrow(message);
  });
});
