/**
 * The forwarder's volume report (lib/contract/report.ts): kept as the cluster's latest, for the
 * audit (lib/audit). A digest alone confirms the report kept under it is still the cluster's;
 * a digest the backend does not hold asks for the report. A report sent in parts is kept part
 * by part under its digest and becomes the cluster's report only once every part of that
 * digest is in and they make up that digest; until then the audit keeps the last whole one.
 * Each report is dated by the backend's clock too (when it received it, or its first part),
 * and the disks and snapshots it no longer names under a Retain PV or content are remembered
 * as the user's (lib/reports/retained.ts) before it replaces the one that named them.
 * The answer carries the Warning Events an audit left for the cluster (a PV whose disk is lost),
 * and how soon the backend needs the next report: every resync while the audit holds marks of
 * the cluster, else within REPORT_WITHIN_MAX_SECONDS (lib/audit/marks.ts `reportWithinSeconds`).
 */
import { reportWithinSeconds } from '../audit/marks.js';
import { assembleReport, reportDigest, type VolumeReport, type VolumeReportItem } from '../contract/index.js';
import { retainedChange } from '../reports/retained.js';
import type { ReportStore, StoredReportPart } from '../reports/index.js';
import type { Scope } from './context.js';
import { Requeue } from './outcomes.js';
import { failed, requeue, type Settled } from './plan.js';

/** What the forwarder is told when the backend holds no report under the digest it sent. */
export const SEND_WHOLE_REPORT = 'no report with this digest is kept: send the whole report';

export async function reconcileReport(item: VolumeReportItem, scope: Scope): Promise<Settled> {
  const reports = scope.reports;
  if (!reports) return failed('ReportsNotKept', 'this backend keeps no volume reports (no report store configured)', Requeue.failedSlow);
  // What the report speaks for: when the forwarder read it, and never later than it signed.
  const observedAt = Math.min(scope.signedAt.getTime(), item.observedAt);
  // And by the backend's own clock: never later than it arrived.
  const receivedAt = scope.now().getTime();
  const { clusterId } = scope;
  if (item.report && item.part && item.part.count > 1) {
    const { count } = item.part;
    const sent = [{ index: item.part.index, report: item.report }, ...(item.more ?? [])];
    const kept = `part${sent.length > 1 ? 's' : ''} ${sent.map((p) => p.index).join(', ')} of ${count} of report ${item.digest} kept`;
    // A part of the report already kept (a forwarder that restarted sends the parts again): nothing
    // to keep, and its arrival dates nothing (the part was read with the others, earlier).
    if (await reports.confirm(clusterId, item.digest, observedAt)) return answer(scope, reports);
    let held = 0;
    for (const { index, report } of sent) held = await reports.putPart({ clusterId, digest: item.digest, index, count, observedAt, receivedAt, report });
    if (held < count) return requeue(Requeue.recorded, `${kept}; ${count - held} to come`);
    const parts = await reports.parts(clusterId, item.digest, count);
    const missing = parts.flatMap((p, i) => (p ? [] : [i]));
    if (missing.length > 0) return requeue(Requeue.recorded, `${kept}; parts ${missing.join(', ')} to come`);
    const whole = parts as StoredReportPart[];
    const report = assembleReport(whole.map((p) => p.report));
    const refused = wrongDigest(item.digest, report);
    if (refused) return refused;
    // The parts of one reading of the caches: the report speaks for the earliest they claim, and
    // was read before its first part arrived.
    const first = { observedAt: Math.min(...whole.map((p) => p.observedAt)), receivedAt: Math.min(...whole.map((p) => p.receivedAt)) };
    await keep(reports, clusterId, report, () => reports.complete(clusterId, item.digest, count, first.observedAt, first.receivedAt));
  } else if (item.report) {
    const refused = wrongDigest(item.digest, item.report);
    if (refused) return refused;
    const report = item.report;
    await keep(reports, clusterId, report, () => reports.put({ clusterId, digest: item.digest, observedAt, receivedAt, report }));
  } else if (!(await reports.confirm(clusterId, item.digest, observedAt, receivedAt))) {
    return requeue(Requeue.recorded, SEND_WHOLE_REPORT);
  }
  return answer(scope, reports);
}

/** Done: with the queued Events, and how soon the next report is needed. */
async function answer(scope: Scope, reports: ReportStore): Promise<Settled> {
  const [events, marks] = await Promise.all([reports.takeEvents(scope.clusterId), reports.marks(scope.clusterId)]);
  const asked = reportWithinSeconds(marks);
  const within = asked === undefined ? undefined : asked / (scope.reportTimeScale ?? 1);
  return { writes: events, verdict: { outcome: 'done', ...(within !== undefined && { reportWithinSeconds: within }) } };
}

/**
 * Keeps `next` (`store`) with what it changes in the retained resources. What it no longer
 * names under Retain is remembered first: should that fail, the report is not kept either, and
 * the kept one still names them. What it names under Delete is let go only once it is kept.
 */
async function keep(reports: ReportStore, clusterId: string, next: VolumeReport, store: () => Promise<boolean>): Promise<void> {
  const previous = await reports.get(clusterId);
  const { retain, release } = retainedChange(previous?.report, next);
  if (retain.length > 0) await reports.retain(clusterId, retain);
  if ((await store()) && release.length > 0) await reports.release(clusterId, release);
}

function wrongDigest(sent: string, report: VolumeReport): Settled | undefined {
  const digest = reportDigest(report);
  if (digest === sent) return undefined;
  return failed('InvalidItem', `the report's digest ${sent} is not the digest of its content (${digest}); it was not kept`, Requeue.failedSlow);
}
