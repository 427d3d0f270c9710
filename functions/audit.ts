/**
 * Lambda entry point of the scheduled audit (EventBridge schedule in serverless.yml): every
 * cluster with a volume report is audited (lib/audit), its findings logged and published as
 * EMF metrics per cluster (OrphanedVolumes, OrphanedGiB, LostVolumes, DriftedAttachments,
 * DeletedOrphans), and its provably orphaned disks deleted when its registration allows it.
 */
import type { EC2Client } from '@aws-sdk/client-ec2';
import { auditAllClusters, publishAuditMetrics } from '../lib/audit/index.js';
import { budgetFromEnvironment } from '../lib/budget/from-environment.js';
import { budgetAccount, createEc2Client, createEc2Gateway } from '../lib/ec2/index.js';
import { createLogger, createMetrics } from '../lib/observability/index.js';
import { registryFromEnvironment } from '../lib/registry/index.js';
import { reportStoreFromEnvironment } from '../lib/reports/index.js';

const logger = createLogger();
const metrics = createMetrics();
const registry = registryFromEnvironment(process.env);
const reports = reportStoreFromEnvironment(process.env);
// The audit's describes and deletes take their tokens from the budget the API shares, waiting for them.
const budget = budgetFromEnvironment(process.env);
const account = budgetAccount(process.env);
const clients = new Map<string, EC2Client>();
/** Time kept back from the invocation's end so the last metrics and logs get out. */
const MARGIN_MS = 30_000;

export async function handler(_event: unknown, context?: { getRemainingTimeInMillis?(): number; functionName?: string }) {
  const deadline = Date.now() + (context?.getRemainingTimeInMillis?.() ?? 900_000) - MARGIN_MS;
  const clientFor = (region: string) => {
    let client = clients.get(region);
    if (!client) clients.set(region, (client = createEc2Client({ region, endpoint: process.env.AWS_ENDPOINT_URL_EC2 ?? process.env.AWS_ENDPOINT_URL })));
    return client;
  };
  const outcomes = await auditAllClusters({
    registry,
    reports,
    gatewayFor: (registration) =>
      createEc2Gateway({
        client: clientFor(registration.region),
        clusterId: registration.clusterId,
        deadline,
        pacing: { budget, account, region: registration.region, waitForTokens: true },
      }),
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
