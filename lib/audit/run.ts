/**
 * The audit's thin shell: read the cluster's latest report and its disks, judge them
 * and its snapshots (findings.ts, snapshot-findings.ts), queue the Warning Events of lost
 * volumes and snapshots for the cluster, and — only when asked — delete the provably orphaned
 * disks and snapshots, each on live evidence: described anew and the report read anew right
 * before its DeleteVolume or DeleteSnapshot, and judged again.
 */
import { TagKeys } from '../contract/index.js';
import type { Ec2Gateway } from '../ec2/types.js';
import type { ReportStore } from '../reports/store.js';
import { lostEvents, lostSnapshotEvents } from './events.js';
import { auditFindings, judgeOrphan, lostCandidates, namedVolumes, type AuditFindings } from './findings.js';
import { judgeSnapshotOrphan, lostSnapshotCandidates, snapshotFindings, type SnapshotFindings } from './snapshot-findings.js';

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
  /**
   * Delete the provably orphaned snapshots; default: no. Asked for on its own: a snapshot whose
   * content was deleted under Retain (a backup tool keeping its snapshots) is an orphan too.
   */
  deleteSnapshots?: boolean;
  maxDeletes?: number;
  /** Epoch ms; default the wall clock. */
  now?(): number;
}

export type DeletionOutcome =
  | { volumeId: string; outcome: 'deleted' }
  | { volumeId: string; outcome: 'kept'; why: string }
  | { volumeId: string; outcome: 'failed'; why: string };

export type SnapshotDeletionOutcome =
  | { snapshotId: string; outcome: 'deleted' }
  | { snapshotId: string; outcome: 'kept' | 'failed'; why: string };

export interface AuditResult extends AuditFindings, Omit<SnapshotFindings, 'notes'> {
  deletions: DeletionOutcome[];
  snapshotDeletions: SnapshotDeletionOutcome[];
}

export async function runAudit(request: AuditRequest): Promise<AuditResult> {
  const now = request.now ?? Date.now;
  const { gateway, reports, clusterId } = request;
  const report = await reports.get(clusterId);
  const at = now();
  const disks = await gateway.listClusterDisks();
  const missing = lostCandidates(disks, report);
  const found = await Promise.all(missing.map((id) => gateway.getDisk(id)));
  const findings = auditFindings({
    clusterId,
    region: request.region,
    disks,
    report,
    lookedUp: new Map(missing.map((id, n) => [id, found[n]])),
    now: at,
    graceMs: request.graceMs,
  });
  // Snapshots are judged only by a report that carries the cluster's contents.
  const snapshots = report?.report.snapshots ? await gateway.listClusterSnapshots() : [];
  const missingSnapshots = lostSnapshotCandidates(snapshots, report);
  const foundSnapshots = await Promise.all(missingSnapshots.map((id) => gateway.getSnapshot(id)));
  const { notes: snapshotNotes, ...ofSnapshots } = snapshotFindings({
    snapshots,
    report,
    lookedUp: new Map(missingSnapshots.map((id, n) => [id, foundSnapshots[n]])),
    region: request.region,
    now: at,
    graceMs: request.graceMs,
  });
  const events = [...lostEvents(findings.lost, findings.at), ...lostSnapshotEvents(ofSnapshots.lostSnapshots, findings.at)];
  if (events.length > 0) await reports.queueEvents(clusterId, events);

  const deletions: DeletionOutcome[] = [];
  if (request.delete) {
    const candidates = findings.orphans.filter((o) => o.deletable).map((o) => o.volumeId);
    for (const volumeId of candidates.slice(0, request.maxDeletes ?? MAX_DELETES_PER_AUDIT)) {
      deletions.push(await deleteIfStillOrphaned(request, volumeId, now));
    }
  }
  const snapshotDeletions: SnapshotDeletionOutcome[] = [];
  if (request.deleteSnapshots === true) {
    const candidates = ofSnapshots.orphanedSnapshots.filter((o) => o.deletable).map((o) => o.snapshotId);
    for (const snapshotId of candidates.slice(0, request.maxDeletes ?? MAX_DELETES_PER_AUDIT)) {
      snapshotDeletions.push(await deleteSnapshotIfStillOrphaned(request, snapshotId, now));
    }
  }
  return { ...findings, ...ofSnapshots, notes: [...findings.notes, ...snapshotNotes], deletions, snapshotDeletions };
}

/** As for disks: the snapshot described and the report read again, judged anew, deleted only if still provably orphaned. */
async function deleteSnapshotIfStillOrphaned(request: AuditRequest, snapshotId: string, now: () => number): Promise<SnapshotDeletionOutcome> {
  try {
    const report = await request.reports.get(request.clusterId);
    const snapshot = await request.gateway.getSnapshot(snapshotId);
    if (!snapshot || !report) return { snapshotId, outcome: 'kept', why: snapshot ? 'the report is gone' : 'the snapshot is gone already' };
    if (snapshot.tags[TagKeys.cluster(request.clusterId)] !== 'owned') return { snapshotId, outcome: 'kept', why: `no longer tagged for cluster "${request.clusterId}"` };
    const verdict = judgeSnapshotOrphan(snapshot, report, now(), request.graceMs);
    if (!verdict?.deletable) return { snapshotId, outcome: 'kept', why: verdict?.why ?? 'no longer an orphan' };
    await request.gateway.deleteSnapshot(snapshotId);
    return { snapshotId, outcome: 'deleted' };
  } catch (err) {
    return { snapshotId, outcome: 'failed', why: err instanceof Error ? err.message : String(err) };
  }
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
