/**
 * The audit's thin shell: read the cluster's latest report and its disks, judge them
 * (findings.ts), queue the Warning Events of lost volumes for the cluster, and — only when
 * asked — delete the provably orphaned disks, each on live evidence: the disk described anew
 * and the report read anew right before its DeleteVolume, and judged again.
 */
import { TagKeys } from '../contract/index.js';
import type { Ec2Gateway } from '../ec2/types.js';
import type { ReportStore } from '../reports/store.js';
import { lostEvents } from './events.js';
import { auditFindings, judgeOrphan, lostCandidates, namedVolumes, type AuditFindings } from './findings.js';

/**
 * DeleteVolume calls one audit makes at most. EC2's DeleteVolume bucket (100, 5 a second) is
 * shared with every reclaim of the account; the rest wait for the next audit.
 */
export const MAX_DELETES_PER_AUDIT = 50;

export interface AuditRequest {
  clusterId: string;
  region: string;
  gateway: Ec2Gateway;
  reports: ReportStore;
  graceMs: number;
  /** Delete the provably orphaned disks. */
  delete: boolean;
  maxDeletes?: number;
  /** Epoch ms; default the wall clock. */
  now?(): number;
}

export type DeletionOutcome =
  | { volumeId: string; outcome: 'deleted' }
  | { volumeId: string; outcome: 'kept'; why: string }
  | { volumeId: string; outcome: 'failed'; why: string };

export interface AuditResult extends AuditFindings {
  deletions: DeletionOutcome[];
}

export async function runAudit(request: AuditRequest): Promise<AuditResult> {
  const now = request.now ?? Date.now;
  const { gateway, reports, clusterId } = request;
  const report = await reports.get(clusterId);
  const disks = await gateway.listClusterDisks();
  const missing = lostCandidates(disks, report);
  const found = await Promise.all(missing.map((id) => gateway.getDisk(id)));
  const findings = auditFindings({
    clusterId,
    region: request.region,
    disks,
    report,
    lookedUp: new Map(missing.map((id, n) => [id, found[n]])),
    now: now(),
    graceMs: request.graceMs,
  });
  const events = lostEvents(findings.lost, findings.at);
  if (events.length > 0) await reports.queueEvents(clusterId, events);

  const deletions: DeletionOutcome[] = [];
  if (request.delete) {
    const candidates = findings.orphans.filter((o) => o.deletable).map((o) => o.volumeId);
    for (const volumeId of candidates.slice(0, request.maxDeletes ?? MAX_DELETES_PER_AUDIT)) {
      deletions.push(await deleteIfStillOrphaned(request, volumeId, now));
    }
  }
  return { ...findings, deletions };
}

/** Describes the disk and reads the report again, judges anew, and deletes only if still provably orphaned. */
async function deleteIfStillOrphaned(request: AuditRequest, volumeId: string, now: () => number): Promise<DeletionOutcome> {
  try {
    const report = await request.reports.get(request.clusterId);
    const disk = await request.gateway.getDisk(volumeId);
    if (!disk || !report) return { volumeId, outcome: 'kept', why: disk ? 'the report is gone' : 'the disk is gone already' };
    if (disk.tags[TagKeys.cluster(request.clusterId)] !== 'owned') return { volumeId, outcome: 'kept', why: `no longer tagged for cluster "${request.clusterId}"` };
    const verdict = judgeOrphan(disk, report, namedVolumes(report), now(), request.graceMs);
    if (!verdict?.deletable) return { volumeId, outcome: 'kept', why: verdict?.why ?? 'no longer an orphan' };
    await request.gateway.deleteDisk(volumeId);
    return { volumeId, outcome: 'deleted' };
  } catch (err) {
    return { volumeId, outcome: 'failed', why: err instanceof Error ? err.message : String(err) };
  }
}
