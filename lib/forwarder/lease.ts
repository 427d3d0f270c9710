/**
 * Leader election's decisions, as client-go's `tools/leaderelection` makes them on a
 * `coordination.k8s.io/v1` Lease (LeaseLock), as pure functions; leader-election.ts is the
 * loop that reads and writes the Lease.
 *
 * - A lease's record is `holderIdentity`, `leaseDurationSeconds`, `acquireTime`,
 *   `renewTime`, `leaseTransitions` (LeaderElectionRecord ⇄ LeaseSpec).
 * - Expiry is judged on the local clock only: a record is valid until `leaseDurationSeconds`
 *   after the moment *this process* last saw it change (observedTime), never by the
 *   timestamps written in it, which another node's clock produced. So clock skew between
 *   nodes does not matter, only their rate.
 * - A candidate writes when the lease has no holder, has expired, or is its own; renewing
 *   keeps `acquireTime` and `leaseTransitions`, taking over bumps `leaseTransitions`.
 * - Every write is a PUT of the object last read, carrying its resourceVersion: of two
 *   candidates racing for an expired lease, the API server lets one win and answers the
 *   other 409 Conflict.
 * - Release (ReleaseOnCancel) writes an empty holder with `leaseDurationSeconds: 1`, so a
 *   standby takes over at its next try instead of a lease duration later.
 */
import type { V1LeaseSpec } from '@kubernetes/client-node';

/** client-go's defaults (and kube-controller-manager's, kube-scheduler's). */
export const DEFAULT_LEASE_TIMING = { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 } as const;

/** client-go's JitterFactor: a candidate waits retryPeriod × (1 + rand × 1.2) between tries. */
export const JITTER_FACTOR = 1.2;

export interface LeaseTiming {
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
}

/** client-go's NewLeaderElector checks; a message naming the first violated, or undefined. */
export function timingError(t: LeaseTiming): string | undefined {
  if (t.leaseDurationMs < 1000) return 'leaseDuration must be at least 1 s (the Lease holds whole seconds)';
  if (t.leaseDurationMs <= t.renewDeadlineMs) return 'leaseDuration must be greater than renewDeadline';
  if (t.renewDeadlineMs <= JITTER_FACTOR * t.retryPeriodMs) return 'renewDeadline must be greater than retryPeriod*JitterFactor';
  if (t.retryPeriodMs < 1) return 'retryPeriod must be greater than zero';
  return undefined;
}

/** client-go's LeaderElectionRecord, as a Lease's spec holds it. */
export interface LeaderRecord {
  holderIdentity: string;
  leaseDurationSeconds: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions: number;
}

/** LeaseSpecToLeaderElectionRecord: absent fields read as zero values. */
export function recordOf(spec: V1LeaseSpec | undefined): LeaderRecord {
  const record: LeaderRecord = {
    holderIdentity: spec?.holderIdentity ?? '',
    leaseDurationSeconds: spec?.leaseDurationSeconds ?? 0,
    leaseTransitions: spec?.leaseTransitions ?? 0,
  };
  if (spec?.acquireTime) record.acquireTime = microTime(spec.acquireTime);
  if (spec?.renewTime) record.renewTime = microTime(spec.renewTime);
  return record;
}

/** LeaderElectionRecordToLeaseSpec: every field written. */
export function specOf(record: LeaderRecord): V1LeaseSpec {
  return {
    holderIdentity: record.holderIdentity,
    leaseDurationSeconds: record.leaseDurationSeconds,
    // MicroTime on the wire, as strings: the generated client passes them through.
    acquireTime: record.acquireTime as unknown as Date,
    renewTime: record.renewTime as unknown as Date,
    leaseTransitions: record.leaseTransitions,
  };
}

/** metav1.MicroTime's RFC 3339 form with six fractional digits, e.g. `2026-12-01T15:52:27.123000Z`. */
export function microTime(time: Date | string | number): string {
  if (typeof time === 'string') return time;
  return `${new Date(time).toISOString().slice(0, -1)}000Z`;
}

/** What a candidate last saw of the lease, and when (local clock, ms) that last changed. */
export interface Observation {
  record: LeaderRecord;
  /** The record serialized, to tell a change (client-go compares the raw bytes). */
  raw: string;
  observedAt: number;
}

/** The observation after reading `record` at `now`: its time moves only when the record changed. */
export function observe(previous: Observation | undefined, record: LeaderRecord, now: number): Observation {
  const raw = JSON.stringify(record);
  return previous?.raw === raw ? previous : { record, raw, observedAt: now };
}

/** The observation after writing `record` ourselves (setObservedRecord): seen now. */
export function wrote(record: LeaderRecord, now: number): Observation {
  return { record, raw: JSON.stringify(record), observedAt: now };
}

/** isLeaseValid: not yet `leaseDurationSeconds` since the record was last seen to change. */
export function isLeaseValid(observation: Observation, now: number): boolean {
  return observation.observedAt + observation.record.leaseDurationSeconds * 1000 > now;
}

/** IsLeader: the last record seen names us. */
export function isLeader(observation: Observation | undefined, identity: string): boolean {
  return observation?.record.holderIdentity === identity;
}

/** What one try (tryAcquireOrRenew's slow path, after reading the lease) does. */
export type Decision =
  | { action: 'create'; record: LeaderRecord }
  | { action: 'update'; record: LeaderRecord }
  | { action: 'wait'; holder: string };

/**
 * Given the lease as just read (undefined: it does not exist) and what was observed of it,
 * what to write: create it, take it over or renew it, or wait while another holds it.
 */
export function decide(options: {
  observation: Observation | undefined;
  exists: boolean;
  identity: string;
  leaseDurationSeconds: number;
  now: number;
}): Decision {
  const { observation, identity, now } = options;
  const time = microTime(now);
  const fresh: LeaderRecord = { holderIdentity: identity, leaseDurationSeconds: options.leaseDurationSeconds, acquireTime: time, renewTime: time, leaseTransitions: 0 };
  if (!options.exists || !observation) return { action: 'create', record: fresh };
  const seen = observation.record;
  if (seen.holderIdentity !== '' && isLeaseValid(observation, now) && seen.holderIdentity !== identity) {
    return { action: 'wait', holder: seen.holderIdentity };
  }
  if (seen.holderIdentity === identity) {
    return { action: 'update', record: renewed(seen, identity, options.leaseDurationSeconds, now) };
  }
  return { action: 'update', record: { ...fresh, leaseTransitions: seen.leaseTransitions + 1 } };
}

/** The leader's renewal: a new renewTime, the same acquireTime and transitions. */
export function renewed(seen: LeaderRecord, identity: string, leaseDurationSeconds: number, now: number): LeaderRecord {
  const record: LeaderRecord = { holderIdentity: identity, leaseDurationSeconds, renewTime: microTime(now), leaseTransitions: seen.leaseTransitions };
  if (seen.acquireTime !== undefined) record.acquireTime = seen.acquireTime;
  return record;
}

/** release(): no holder, a one-second duration, both times now, transitions kept. */
export function released(seen: LeaderRecord, now: number): LeaderRecord {
  const time = microTime(now);
  return { holderIdentity: '', leaseDurationSeconds: 1, acquireTime: time, renewTime: time, leaseTransitions: seen.leaseTransitions };
}

/** wait.Jitter: `period` plus up to `factor` × `period` more, at random. */
export function jittered(periodMs: number, random: number, factor = JITTER_FACTOR): number {
  return periodMs + random * factor * periodMs;
}
