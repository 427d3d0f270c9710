/** Leader election's decisions (lib/forwarder/lease.ts), as client-go's tryAcquireOrRenew makes them. */
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_LEASE_TIMING,
  decide,
  isLeaseValid,
  jittered,
  microTime,
  observe,
  recordOf,
  released,
  specOf,
  timingError,
  wrote,
  type LeaderRecord,
} from '../../lib/forwarder/lease.js';

const T0 = Date.parse('2026-12-01T10:00:00.000Z');
const held = (holder: string, extra: Partial<LeaderRecord> = {}): LeaderRecord => ({
  holderIdentity: holder,
  leaseDurationSeconds: 15,
  acquireTime: '2026-12-01T09:00:00.000000Z',
  renewTime: '2026-12-01T09:59:58.000000Z',
  leaseTransitions: 3,
  ...extra,
});

describe('lease records', () => {
  it('a Lease spec -> the record, absent fields as zero values; and back, every field written', () => {
    expect(recordOf(undefined)).toEqual({ holderIdentity: '', leaseDurationSeconds: 0, leaseTransitions: 0 });
    const record = held('a');
    expect(recordOf(specOf(record))).toEqual(record);
    expect(Object.keys(specOf(record)).sort()).toEqual(['acquireTime', 'holderIdentity', 'leaseDurationSeconds', 'leaseTransitions', 'renewTime']);
  });

  it('a time -> MicroTime with six fractional digits, as the API server parses it', () => {
    expect(microTime(Date.parse('2026-12-01T15:52:27.123Z'))).toBe('2026-12-01T15:52:27.123000Z');
    expect(microTime('2026-12-01T15:52:27.123456Z')).toBe('2026-12-01T15:52:27.123456Z');
  });

  it('client-go defaults pass its checks; a renew deadline not above retryPeriod × 1.2 or not below the duration is refused', () => {
    expect(timingError(DEFAULT_LEASE_TIMING)).toBeUndefined();
    expect(timingError({ leaseDurationMs: 10_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 })).toMatch(/leaseDuration must be greater than renewDeadline/);
    expect(timingError({ leaseDurationMs: 15_000, renewDeadlineMs: 2_400, retryPeriodMs: 2_000 })).toMatch(/retryPeriod\*JitterFactor/);
    expect(timingError({ leaseDurationMs: 500, renewDeadlineMs: 300, retryPeriodMs: 100 })).toMatch(/at least 1 s/);
  });

  it('retry waits -> retryPeriod plus up to 1.2 × retryPeriod (wait.Jitter)', () => {
    expect(jittered(2000, 0)).toBe(2000);
    expect(jittered(2000, 1)).toBe(4400);
  });
});

describe('observation and expiry on the local clock', () => {
  it('the same record read again -> observed time unchanged; a changed one -> observed now', () => {
    const first = observe(undefined, held('a'), T0);
    expect(observe(first, held('a'), T0 + 5000)).toBe(first);
    expect(observe(first, held('a', { renewTime: '2026-12-01T10:00:02.000000Z' }), T0 + 5000).observedAt).toBe(T0 + 5000);
  });

  it('valid until leaseDurationSeconds after it was last seen to change, whatever its renewTime says', () => {
    // renewTime an hour old (another node's clock): still valid, as we only just saw it.
    const seen = observe(undefined, held('a', { renewTime: '2026-12-01T09:00:00.000000Z' }), T0);
    expect(isLeaseValid(seen, T0 + 14_999)).toBe(true);
    expect(isLeaseValid(seen, T0 + 15_000)).toBe(false);
  });
});

describe('decide (one try after reading the Lease)', () => {
  const base = { identity: 'me', leaseDurationSeconds: 15 };

  it('no Lease -> create it, holding it, no transitions', () => {
    expect(decide({ ...base, observation: undefined, exists: false, now: T0 })).toEqual({
      action: 'create',
      record: { holderIdentity: 'me', leaseDurationSeconds: 15, acquireTime: microTime(T0), renewTime: microTime(T0), leaseTransitions: 0 },
    });
  });

  it('held by another, not expired -> wait', () => {
    const observation = observe(undefined, held('other'), T0);
    expect(decide({ ...base, observation, exists: true, now: T0 + 14_000 })).toEqual({ action: 'wait', holder: 'other' });
  });

  it('held by another, expired (SIGKILLed holder) -> take over: acquired now, transitions + 1', () => {
    const observation = observe(undefined, held('other'), T0);
    const decision = decide({ ...base, observation, exists: true, now: T0 + 15_000 });
    expect(decision).toEqual({
      action: 'update',
      record: { holderIdentity: 'me', leaseDurationSeconds: 15, acquireTime: microTime(T0 + 15_000), renewTime: microTime(T0 + 15_000), leaseTransitions: 4 },
    });
  });

  it('released (empty holder) -> take over at once, not a lease duration later', () => {
    const observation = observe(undefined, released(held('other'), T0), T0);
    const decision = decide({ ...base, observation, exists: true, now: T0 + 1 });
    expect(decision).toMatchObject({ action: 'update', record: { holderIdentity: 'me', leaseTransitions: 4 } });
  });

  it('ours -> renew: renewTime now, acquireTime and transitions kept', () => {
    const observation = wrote(held('me'), T0);
    expect(decide({ ...base, observation, exists: true, now: T0 + 2000 })).toEqual({
      action: 'update',
      record: { holderIdentity: 'me', leaseDurationSeconds: 15, acquireTime: '2026-12-01T09:00:00.000000Z', renewTime: microTime(T0 + 2000), leaseTransitions: 3 },
    });
  });

  it('release -> no holder, one second, both times now, transitions kept', () => {
    expect(released(held('me'), T0)).toEqual({ holderIdentity: '', leaseDurationSeconds: 1, acquireTime: microTime(T0), renewTime: microTime(T0), leaseTransitions: 3 });
  });
});
