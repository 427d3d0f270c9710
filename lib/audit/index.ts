export { auditFindings, claimUidOf, DEFAULT_GRACE_MS, judgeOrphan, lostCandidates, namedVolumes, type AuditFindings, type AuditInput, type DriftFinding, type LostFinding, type OrphanFinding } from './findings.js';
export { judgeSnapshotOrphan, lostSnapshotCandidates, snapshotFindings, type LostSnapshotFinding, type SnapshotFindings, type SnapshotOrphanFinding } from './snapshot-findings.js';
export { EBS_PRICES, monthlyCost, monthlySnapshotCost, PRICES_AS_OF } from './prices.js';
export { lostEvents, lostSnapshotEvents, LOST_REASON, LOST_SNAPSHOT_REASON } from './events.js';
export { MAX_DELETES_PER_AUDIT, runAudit, type AuditRequest, type AuditResult, type DeletionOutcome, type SnapshotDeletionOutcome } from './run.js';
export {
  deleteLeftBehind,
  deleteSnapshotsLeftBehind,
  leftBehind,
  snapshotsLeftBehind,
  snapshotTeardownVerdict,
  teardownVerdict,
  type LeftBehind,
  type SnapshotLeftBehind,
} from './teardown.js';
export { auditSummary, auditTable, leftBehindTable, snapshotsLeftBehindTable } from './format.js';
export { AUDIT_METRICS, auditMetricValues, publishAuditMetrics } from './metrics.js';
export { auditAllClusters, type ClusterAuditOutcome, type ScheduledAuditDeps } from './scheduled.js';
