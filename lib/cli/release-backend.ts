/**
 * Whether the backend still hears from a cluster `release --apply` is about to deregister:
 * a forwarder release cannot see (no Lease, another kubeconfig, a copy elsewhere) that still
 * sends would, once the registration is gone, get 404 and tell its cluster's users to
 * register it again. The evidence is the backend's own, dated by its clock: the latest report
 * it received from the cluster (every forwarder sends or confirms one at least every
 * REPORT_WITHIN_MAX_SECONDS, and at once when its volumes change)
 * and the latest request it refused, both kept per cluster in the report store (lib/reports).
 */
import { FORWARDER_SILENCE_MS } from '../audit/index.js';
import type { ReportStore } from '../reports/index.js';

/** How long the backend must have heard nothing: longer than a running forwarder stays silent. */
export const QUIET_MS = FORWARDER_SILENCE_MS;

export type BackendHeard =
  /** No report store to ask: the backend's evidence is not known. */
  | { known: false; why: string }
  | { known: true; where: string; reportReceivedAt?: number; refusedAt?: number };

/** The backend's evidence about `clusterId`, read from its report store. */
export async function readBackendHeard(reports: ReportStore, where: string, clusterId: string): Promise<BackendHeard> {
  const [report, refusal] = await Promise.all([reports.get(clusterId), reports.lastRefusal(clusterId)]);
  return { known: true, where, ...(report && { reportReceivedAt: report.receivedAt }), ...(refusal && { refusedAt: refusal.at }) };
}

/** Why --apply must not deregister now, or undefined when the backend has been quiet long enough. */
export function backendHeardRefusal(heard: BackendHeard, now: number): string | undefined {
  if (!heard.known) return `cannot tell whether the backend still hears from the cluster (${heard.why}); give --reports-table <volhook-<stage>-reports> (or --reports-dir for a local backend)`;
  const times = [heard.reportReceivedAt, heard.refusedAt].filter((t): t is number => t !== undefined && t > 0);
  if (times.length === 0) return undefined;
  const latest = Math.max(...times);
  const age = now - latest;
  if (age > QUIET_MS) return undefined;
  const what = latest === heard.reportReceivedAt ? 'received a report from the cluster' : 'refused a request of the cluster';
  return (
    `the backend ${what} ${Math.max(0, Math.round(age / 1000))} s ago (${new Date(latest).toISOString()}, ${heard.where}): a forwarder still sends. ` +
    `Uninstall every forwarder of the cluster (helm uninstall …), wait until the backend has heard nothing for ${QUIET_MS / 1000} s ` +
    `(${new Date(latest + QUIET_MS).toISOString()} at the earliest), and run release --apply again; deregistered now, that forwarder would get 404 and ask for the cluster to be registered again`
  );
}
