/**
 * The scheduled audit: every cluster with a report, one after the other, each with its
 * registration's settings (`audit.deleteOrphans`, `audit.graceSeconds`). A cluster whose
 * registration is gone or broken is reported and skipped; one cluster's failure never stops
 * the others. `gatewayFor` gives each cluster the gateway of its own EC2 session
 * (lib/ec2/cluster-clients.ts, as the API's); one that throws — no role for the cluster — fails
 * that cluster alone, with the reason.
 */
import type { Ec2Gateway } from '../ec2/types.js';
import { RegistrationError, type ClusterRegistration, type ClusterRegistry } from '../registry/registration.js';
import type { ReportStore } from '../reports/store.js';
import { DEFAULT_GRACE_MS } from './findings.js';
import { runAudit, type AuditResult } from './run.js';

export interface ScheduledAuditDeps {
  registry: ClusterRegistry;
  reports: ReportStore;
  gatewayFor(registration: ClusterRegistration): Ec2Gateway;
  onResult(result: AuditResult): void;
  onSkipped(clusterId: string, why: string): void;
  now?(): number;
}

export type ClusterAuditOutcome = { clusterId: string; outcome: 'audited' | 'skipped' | 'failed'; detail?: string };

export async function auditAllClusters(deps: ScheduledAuditDeps): Promise<ClusterAuditOutcome[]> {
  const outcomes: ClusterAuditOutcome[] = [];
  for (const clusterId of await deps.reports.clusters()) {
    let registration: ClusterRegistration | undefined;
    try {
      registration = await deps.registry.get(clusterId);
    } catch (err) {
      if (!(err instanceof RegistrationError)) throw err;
      deps.onSkipped(clusterId, err.message);
      outcomes.push({ clusterId, outcome: 'skipped', detail: err.message });
      continue;
    }
    if (!registration) {
      const why = `cluster "${clusterId}" has a report but no registration (removed?): its disks are left for npm run cluster -- remove ${clusterId} --delete-volumes`;
      deps.onSkipped(clusterId, why);
      outcomes.push({ clusterId, outcome: 'skipped', detail: why });
      continue;
    }
    try {
      const grace = registration.audit?.graceSeconds;
      const result = await runAudit({
        clusterId,
        region: registration.region,
        gateway: deps.gatewayFor(registration),
        reports: deps.reports,
        graceMs: grace === undefined ? DEFAULT_GRACE_MS : grace * 1000,
        delete: registration.audit?.deleteOrphans === true,
        deleteSnapshots: registration.audit?.deleteOrphanedSnapshots === true,
        ...(deps.now && { now: deps.now }),
      });
      deps.onResult(result);
      outcomes.push({ clusterId, outcome: 'audited' });
    } catch (err) {
      const detail = err instanceof Error ? err.message : String(err);
      deps.onSkipped(clusterId, `audit failed: ${detail}`);
      outcomes.push({ clusterId, outcome: 'failed', detail });
    }
  }
  return outcomes;
}
