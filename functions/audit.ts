/**
 * Lambda entry point of the scheduled audit (EventBridge schedule in serverless.yml): every
 * cluster with a volume report is audited (lib/audit), its findings logged and published as
 * EMF metrics per cluster (OrphanedVolumes, OrphanedGiB, LostVolumes, DriftedAttachments,
 * DeletedOrphans), and its provably orphaned disks deleted when its registration allows it.
 * Each cluster is audited in its own EC2 session, as the API reconciles it (lib/ec2/sessions.ts):
 * the registration's aws.roleArn, else VOLHOOK_EC2_ROLE_ARN; a cluster with neither is reported
 * failed, naming the missing role.
 */
import { auditAllClusters, publishAuditMetrics } from '../lib/audit/index.js';
import { budgetFromEnvironment } from '../lib/budget/from-environment.js';
import { createClusterClients, createClusterSessions, createEc2Gateway, ec2FromEnvironment } from '../lib/ec2/index.js';
import { createLogger, createMetrics } from '../lib/observability/index.js';
import { registryFromEnvironment, withNodeTagKey } from '../lib/registry/index.js';
import { reportStoreFromEnvironment } from '../lib/reports/index.js';

const logger = createLogger();
const metrics = createMetrics();
const ec2 = ec2FromEnvironment(process.env);
const registry = withNodeTagKey(registryFromEnvironment(process.env), ec2.nodeTagKey);
const reports = reportStoreFromEnvironment(process.env);
// The audit's describes and deletes take their tokens from the budget the API shares, waiting for them.
const budget = budgetFromEnvironment(process.env);
// The same sessions as the API's, one cache per container; the SDK's retries are kept (3 attempts):
// the audit waits for its tokens instead of requeueing.
const clients = createClusterClients({
  sessions: createClusterSessions({ stsClient: { ...(ec2.stsEndpoint !== undefined && { endpoint: ec2.stsEndpoint }) } }),
  ...(ec2.ec2RoleArn !== undefined && { defaultRoleArn: ec2.ec2RoleArn }),
  ...(ec2.ec2Endpoint !== undefined && { endpoint: ec2.ec2Endpoint }),
});
/** Time kept back from the invocation's end so the last metrics and logs get out. */
const MARGIN_MS = 30_000;

export async function handler(_event: unknown, context?: { getRemainingTimeInMillis?(): number; functionName?: string }) {
  const deadline = Date.now() + (context?.getRemainingTimeInMillis?.() ?? 900_000) - MARGIN_MS;
  const outcomes = await auditAllClusters({
    registry,
    reports,
    gatewayFor: (registration) => {
      // Throws the missing role's error for this cluster alone: auditAllClusters reports it failed.
      const { client, account } = clients.for(registration);
      return createEc2Gateway({
        client,
        clusterId: registration.clusterId,
        deadline,
        pacing: { budget, account, region: registration.region, waitForTokens: true },
        // The cluster's cross-Region snapshot copies: the same session, signed for their Region.
        clientFor: (region) => clients.for({ ...registration, region }).client,
      });
    },
    onResult(result) {
      logger.info('audit', {
        clusterId: result.clusterId,
        disks: result.disks,
        orphans: result.orphans.length,
        orphanedGiB: result.totals.orphanedGiB,
        orphanedMonthlyUsd: result.totals.orphanedMonthlyUsd,
        lost: result.lost.map((l) => `${l.pv}:${l.volumeId}`),
        drift: result.drift.map((d) => `${d.volumeId}@${d.instanceId}:${d.direction}`),
        deletions: result.deletions,
        snapshots: result.snapshots,
        orphanedSnapshots: result.orphanedSnapshots.length,
        orphanedSnapshotGiB: result.snapshotTotals.orphanedSnapshotGiB,
        lostSnapshots: result.lostSnapshots.map((l) => `${l.content}:${l.snapshotId}`),
        snapshotDeletions: result.snapshotDeletions,
      });
      publishAuditMetrics(metrics, result);
    },
    onSkipped: (clusterId, why) => logger.warn('audit skipped', { clusterId, why }),
  });
  return { clusters: outcomes };
}
