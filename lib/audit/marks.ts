/**
 * The audit's two phases, as pure functions. An audit that finds a disk or snapshot provably
 * orphaned only marks it, with the time of marking by the auditor's clock (never earlier than
 * the report it judged by); only a later audit deletes it, and only when the report it judges
 * by was received after the mark and still names nothing of it. What the first audit could not
 * see — a PV made for the disk after the last report — is in the report the second one waits
 * for. The report a deletion rests on must also be fresh when the deletion happens
 * ({@link FRESH_REPORT_MS}): a report received after the mark but an hour ago says nothing of a
 * PV made since — and received after the latest request of the cluster the backend refused
 * ({@link refusedSinceWhy}), which may have carried one. So while the cluster has marks the
 * backend asks its forwarder for a report every resync ({@link reportWithinSeconds}). A mark whose resource is not provably orphaned any more (named again,
 * attached, gone) is dropped; the report store keeps the marks per cluster.
 */
import { REPORT_WITHIN_MAX_SECONDS } from '../contract/report.js';
import { REFUSAL_RECORD_INTERVAL_MS, type Refusal } from '../reports/refusals.js';
import { reportTime, type StoredReport } from '../reports/store.js';

export interface MarkState {
  /** When it was (or is now) marked (ISO 8601). */
  at: string;
  /** A report received after the mark still names nothing of it: a --delete audit may delete it now. */
  due: boolean;
}

/** The time of a mark set now: the auditor's clock, and never before the report it was judged by. */
export function newMarkTime(report: StoredReport, now: number): number {
  return Math.max(now, reportTime(report));
}

/**
 * The forwarder's resync period (its `resyncSeconds` default, the chart's `resyncSeconds`): while
 * the cluster has marks it sends the cluster's report, or the report's digest alone, at least
 * this often ({@link reportWithinSeconds}), and the backend dates each one it takes by its own
 * clock (`receivedAt`).
 */
export const REPORT_RESYNC_SECONDS = 300;

/**
 * How old (as the audit dates it: {@link reportTime}) the report a deletion rests on may be when
 * the deletion happens: two resyncs, so one lost round is no reason to wait, while a forwarder
 * whose requests stopped arriving or are refused (pods down, a wrongly rotated Secret, a network
 * fault) stops every deletion within two rounds — a PV made meanwhile is in no report.
 */
export const FRESH_REPORT_MS = 2 * REPORT_RESYNC_SECONDS * 1000;

/**
 * How soon the backend asks the cluster's forwarder for its next report, in the answer to each
 * one (the contract's `reportWithinSeconds`): every resync (undefined, the contract's default)
 * while the audit holds a mark of the cluster, since a deletion rests on a report received after
 * the mark and at most {@link FRESH_REPORT_MS} old when it happens; otherwise within
 * REPORT_WITHIN_MAX_SECONDS — with no mark no deletion rests on the report (an audit only marks,
 * and dates its marks by its own clock, never before the report: {@link newMarkTime}), and a
 * report that changed goes at the forwarder's next resync whatever it was told.
 */
export function reportWithinSeconds(marks: ReadonlyMap<string, number>): number | undefined {
  return marks.size > 0 ? undefined : REPORT_WITHIN_MAX_SECONDS;
}

/**
 * How long a forwarder that still runs may go without a request reaching the backend: the
 * longest it waits between reports (REPORT_WITHIN_MAX_SECONDS), and two resyncs more — one lost
 * round, as {@link FRESH_REPORT_MS} allows. What `release` and `rotate-secret --finish` wait for
 * before taking away what a running forwarder needs.
 */
export const FORWARDER_SILENCE_MS = REPORT_WITHIN_MAX_SECONDS * 1000 + FRESH_REPORT_MS;

/** Why `report` is too old for a deletion at `now` (epoch ms, the backend's clock), if it is. */
export function staleReportWhy(report: StoredReport, now: number): string | undefined {
  const age = now - reportTime(report);
  if (age <= FRESH_REPORT_MS) return undefined;
  return (
    `the report is ${Math.floor(age / 1000)} s old (received ${new Date(report.receivedAt).toISOString()}), older than ${FRESH_REPORT_MS / 1000} s ` +
    `(two resyncs of ${REPORT_RESYNC_SECONDS} s): the forwarder's reports are not arriving or are refused, so a PV made since may name it; nothing is deleted until a fresh report`
  );
}

/**
 * Why `report` cannot carry a deletion because the backend refused a request of the cluster
 * since, if it did: the refused request may have carried what the report lacks (a PV made after
 * it was read). The refusal held lags the latest by up to REFUSAL_RECORD_INTERVAL_MS (the stores
 * record at most one in that long), so a report counts as newer only when it is dated (as the
 * audit dates it) more than that after the refusal.
 */
export function refusedSinceWhy(report: StoredReport, refusal: Refusal | undefined): string | undefined {
  if (refusal === undefined || reportTime(report) > refusal.at + REFUSAL_RECORD_INTERVAL_MS) return undefined;
  return (
    `a request of the cluster was refused (${refusal.status} ${refusal.code}) at ${new Date(refusal.at).toISOString()}, not before the report it would be deleted on ` +
    `(of ${new Date(reportTime(report)).toISOString()}): what it carried may name it; nothing is deleted until a report received over ${REFUSAL_RECORD_INTERVAL_MS / 1000} s after the last refusal`
  );
}

/** Whether `report` was received (and, by the forwarder's clock, read) after the mark. */
export function isDue(markedAt: number, report: StoredReport): boolean {
  return reportTime(report) > markedAt;
}

/** The mark `markedAt` (epoch ms) as findings show it, or the one this audit sets now. */
export function markOf(markedAt: number | undefined, report: StoredReport, now: number): MarkState {
  if (markedAt === undefined) return { at: new Date(newMarkTime(report, now)).toISOString(), due: false };
  return { at: new Date(markedAt).toISOString(), due: isDue(markedAt, report) };
}

/**
 * What an audit changes in the marks of one kind of resource (those `ofKind` says): the
 * provably orphaned ones not marked yet are marked; marks of the others are dropped.
 */
export function markChanges(
  marks: ReadonlyMap<string, number>,
  provable: readonly string[],
  ofKind: (id: string) => boolean,
  report: StoredReport | undefined,
  now: number,
): { mark: Map<string, number>; unmark: string[] } {
  const keep = new Set(provable);
  const unmark = [...marks.keys()].filter((id) => ofKind(id) && !keep.has(id));
  const mark = new Map(report ? provable.filter((id) => !marks.has(id)).map((id) => [id, newMarkTime(report, now)] as const) : []);
  return { mark, unmark };
}

/** What a --delete audit says of a candidate it only marked: when it may go. */
export function markedWhy(mark: MarkState): string {
  return `marked ${mark.at}: deleted by the first --delete audit after a report received after that still names nothing of it, while the latest report is at most ${FRESH_REPORT_MS / 1000} s old and no request of the cluster was refused since (while the cluster has marks, the backend asks its forwarder for a report every resync)`;
}
