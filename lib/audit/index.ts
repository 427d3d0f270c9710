export { auditFindings, claimUidOf, DEFAULT_GRACE_MS, judgeOrphan, lostCandidates, namedVolumes, type AuditFindings, type AuditInput, type DriftFinding, type LostFinding, type OrphanFinding } from './findings.js';
export { EBS_PRICES, monthlyCost, PRICES_AS_OF } from './prices.js';
export { lostEvents, LOST_REASON } from './events.js';
export { MAX_DELETES_PER_AUDIT, runAudit, type AuditRequest, type AuditResult, type DeletionOutcome } from './run.js';
export { deleteLeftBehind, leftBehind, teardownVerdict, type LeftBehind } from './teardown.js';
export { auditSummary, auditTable, leftBehindTable } from './format.js';
export { AUDIT_METRICS, auditMetricValues, publishAuditMetrics } from './metrics.js';
export { auditAllClusters, type ClusterAuditOutcome, type ScheduledAuditDeps } from './scheduled.js';
