/**
 * The audit's metrics, per cluster (EMF, namespace `volhook`, dimension `clusterId` as the
 * reconcile metrics): what the dashboard and the orphan alarm read.
 */
import { MetricUnit, type Metrics } from '@aws-lambda-powertools/metrics';
import type { AuditResult } from './run.js';

export const AUDIT_METRICS = {
  orphanedVolumes: 'OrphanedVolumes',
  orphanedGiB: 'OrphanedGiB',
  lostVolumes: 'LostVolumes',
  driftedAttachments: 'DriftedAttachments',
  deletedVolumes: 'DeletedOrphans',
  orphanedSnapshots: 'OrphanedSnapshots',
  orphanedSnapshotGiB: 'OrphanedSnapshotGiB',
  lostSnapshots: 'LostSnapshots',
  deletedSnapshots: 'DeletedOrphanedSnapshots',
} as const;

/** The audit's figures as metric values, by name. */
export function auditMetricValues(result: AuditResult): Record<string, number> {
  return {
    [AUDIT_METRICS.orphanedVolumes]: result.orphans.length,
    [AUDIT_METRICS.orphanedGiB]: result.totals.orphanedGiB,
    [AUDIT_METRICS.lostVolumes]: result.lost.length,
    [AUDIT_METRICS.driftedAttachments]: result.drift.length,
    [AUDIT_METRICS.deletedVolumes]: result.deletions.filter((d) => d.outcome === 'deleted').length,
    [AUDIT_METRICS.orphanedSnapshots]: result.orphanedSnapshots.length,
    [AUDIT_METRICS.orphanedSnapshotGiB]: result.snapshotTotals.orphanedSnapshotGiB,
    [AUDIT_METRICS.lostSnapshots]: result.lostSnapshots.length,
    [AUDIT_METRICS.deletedSnapshots]: result.snapshotDeletions.filter((d) => d.outcome === 'deleted').length,
  };
}

/** One EMF document per cluster: its own dimension set, flushed at once. */
export function publishAuditMetrics(metrics: Metrics, result: AuditResult): void {
  metrics.addDimension('clusterId', result.clusterId);
  for (const [name, value] of Object.entries(auditMetricValues(result))) {
    metrics.addMetric(name, name === AUDIT_METRICS.orphanedGiB || name === AUDIT_METRICS.orphanedSnapshotGiB ? MetricUnit.Gigabytes : MetricUnit.Count, value);
  }
  metrics.publishStoredMetrics();
}
