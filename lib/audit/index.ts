export {
  auditFindings,
  claimUidOf,
  DEFAULT_GRACE_MS,
  evidenceOf,
  judgeOrphan,
  lostCandidates,
  namedVolumes,
  UNDATED_REPORT,
  type AuditFindings,
  type AuditInput,
  type DriftFinding,
  type Evidence,
  type LostFinding,
  type OrphanFinding,
  type OrphanVerdict,
  type UnknownFinding,
  type UntaggedFinding,
} from './findings.js';
export { FORWARDER_SILENCE_MS, FRESH_REPORT_MS, isDue, markChanges, markedWhy, markOf, newMarkTime, refusedSinceWhy, REPORT_RESYNC_SECONDS, reportWithinSeconds, staleReportWhy, type MarkState } from './marks.js';
export {
  judgeSnapshotOrphan,
  lostSnapshotCandidates,
  snapshotFindings,
  type LostSnapshotFinding,
  type SnapshotEvidence,
  type SnapshotFindings,
  type SnapshotOrphanFinding,
  type SnapshotVerdict,
  type UnknownSnapshotFinding,
  type UntaggedSnapshotFinding,
} from './snapshot-findings.js';
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
  type TeardownEvidence,
} from './teardown.js';
export { age, auditSummary, auditTable, leftBehindTable, reportLine, snapshotsLeftBehindTable } from './format.js';
export { AUDIT_METRICS, auditMetricValues, publishAuditMetrics } from './metrics.js';
export { auditAllClusters, type ClusterAuditOutcome, type ScheduledAuditDeps } from './scheduled.js';
