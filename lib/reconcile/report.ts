/**
 * The forwarder's volume report (lib/contract/report.ts): kept as the cluster's latest, for the
 * audit (lib/audit). A digest alone confirms the report kept under it is still the cluster's;
 * a digest the backend does not hold asks for the whole report. The answer carries the
 * Warning Events an audit left for the cluster (a PV whose disk is lost).
 */
import { reportDigest, type VolumeReportItem } from '../contract/index.js';
import type { Scope } from './context.js';
import { Requeue } from './outcomes.js';
import { done, failed, requeue, type Settled } from './plan.js';

/** What the forwarder is told when the backend holds no report under the digest it sent. */
export const SEND_WHOLE_REPORT = 'no report with this digest is kept: send the whole report';

export async function reconcileReport(item: VolumeReportItem, scope: Scope): Promise<Settled> {
  const store = scope.reports;
  if (!store) return failed('ReportsNotKept', 'this backend keeps no volume reports (no report store configured)', Requeue.failedSlow);
  // What the report speaks for: when the forwarder read it, and never later than it signed.
  const observedAt = Math.min(scope.signedAt.getTime(), item.observedAt);
  if (item.report) {
    const digest = reportDigest(item.report);
    if (digest !== item.digest) {
      return failed('InvalidItem', `the report's digest ${item.digest} is not the digest of its content (${digest}); it was not kept`, Requeue.failedSlow);
    }
    await store.put({ clusterId: scope.clusterId, digest, observedAt, report: item.report });
  } else if (!(await store.confirm(scope.clusterId, item.digest, observedAt))) {
    return requeue(Requeue.recorded, SEND_WHOLE_REPORT);
  }
  return done(await store.takeEvents(scope.clusterId));
}
