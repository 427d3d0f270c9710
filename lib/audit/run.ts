/**
 * The audit's thin shell: read the cluster's latest report, its marks and the resources it
 * keeps for its users, and its disks; judge them and its snapshots (findings.ts,
 * snapshot-findings.ts); queue the Warning Events of lost volumes and snapshots for the
 * cluster; keep the marks (marks.ts: the provably orphaned are marked, the others' marks
 * dropped) — and only when asked, delete the provably orphaned disks and snapshots whose mark
 * is due, each on live evidence: described anew and the report and marks read anew right
 * before its DeleteVolume or DeleteSnapshot, and judged again.
 */
import type { ReportedSnapshotContent } from '../contract/index.js';
import { Ec2Error, type Ec2Gateway, type Snapshot } from '../ec2/types.js';
import { RESOURCE_ID, type ReportStore, type StoredReport } from '../reports/store.js';
import { lostEvents, lostSnapshotEvents } from './events.js';
import { auditFindings, describedAgainWhy, evidenceOf, judgeOrphan, lostCandidates, type AuditFindings } from './findings.js';
import { isDue, markChanges, markedWhy, refusedSinceWhy, staleReportWhy } from './marks.js';
import { judgeSnapshotOrphan, lostSnapshotCandidates, snapshotFindings, type SnapshotFindings } from './snapshot-findings.js';
import { copiesToLookUp, snapshotCopyFindings, type SnapshotCopyFinding } from './snapshot-copies.js';

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
  /** Delete the provably orphaned disks whose mark is due. */
  delete: boolean;
  /**
   * Delete the provably orphaned snapshots whose mark is due; default: no. Asked for on its own:
   * a snapshot whose content was deleted (a backup tool keeping its snapshots) is an orphan too.
   */
  deleteSnapshots?: boolean;
  /**
   * The disks the operator named (`--volume`): only these are deleted, and those kept for their
   * users (their last known PV had Retain) among them too. Absent: every deletable disk.
   */
  volumes?: readonly string[];
  /** Likewise for snapshots (`--snapshot`). */
  snapshots?: readonly string[];
  maxDeletes?: number;
  /** Epoch ms; default the wall clock. */
  now?(): number;
}

export type DeletionOutcome =
  | { volumeId: string; outcome: 'deleted' }
  | { volumeId: string; outcome: 'marked'; markedAt: string; why: string }
  | { volumeId: string; outcome: 'kept'; why: string }
  | { volumeId: string; outcome: 'failed'; why: string };

export type SnapshotDeletionOutcome =
  | { snapshotId: string; outcome: 'deleted' }
  | { snapshotId: string; outcome: 'marked'; markedAt: string; why: string }
  | { snapshotId: string; outcome: 'kept' | 'failed'; why: string };

export interface AuditResult extends AuditFindings, Omit<SnapshotFindings, 'notes'> {
  /** The cross-Region copies the reported contents record, and what their Regions hold of them. */
  snapshotCopies: SnapshotCopyFinding[];
  deletions: DeletionOutcome[];
  snapshotDeletions: SnapshotDeletionOutcome[];
}

const isVolumeId = (id: string) => id.startsWith('vol-');
const isSnapshotId = (id: string) => id.startsWith('snap-');

/** Each recorded copy's namesakes in its Region; a Region EC2 refuses to list is that copy's error, not the audit's. */
async function lookUpCopies(gateway: AuditRequest['gateway'], contents: readonly ReportedSnapshotContent[] | undefined): Promise<Map<string, Snapshot[] | { error: string }>> {
  const found = new Map<string, Snapshot[] | { error: string }>();
  for (const { content, region } of copiesToLookUp(contents)) {
    try {
      found.set(content, await gateway.snapshotsIn(region).findSnapshotsByName(content));
    } catch (error) {
      if (!(error instanceof Ec2Error) || error.kind === 'transient') throw error;
      found.set(content, { error: error.message });
    }
  }
  return found;
}

export async function runAudit(request: AuditRequest): Promise<AuditResult> {
  const now = request.now ?? Date.now;
  const { gateway, reports, clusterId } = request;
  const report = await reports.get(clusterId);
  const [marks, retained] = await Promise.all([reports.marks(clusterId), reports.retained(clusterId)]);
  const at = now();
  const chosenVolumes = new Set(request.volumes ?? []);
  const chosenSnapshots = new Set(request.snapshots ?? []);
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
    retained,
    marks,
    chosen: chosenVolumes,
  });
  // Snapshots are judged only by a report that carries the cluster's contents.
  const judgesSnapshots = report?.report.snapshots !== undefined;
  const snapshots = judgesSnapshots ? await gateway.listClusterSnapshots() : [];
  const missingSnapshots = lostSnapshotCandidates(snapshots, report);
  const foundSnapshots = await Promise.all(missingSnapshots.map((id) => gateway.getSnapshot(id)));
  const { notes: snapshotNotes, ...ofSnapshots } = snapshotFindings({
    clusterId,
    snapshots,
    report,
    lookedUp: new Map(missingSnapshots.map((id, n) => [id, foundSnapshots[n]])),
    region: request.region,
    now: at,
    graceMs: request.graceMs,
    retained,
    marks,
    chosen: chosenSnapshots,
  });
  const snapshotCopies = snapshotCopyFindings(report?.report.snapshots, await lookUpCopies(gateway, report?.report.snapshots));
  const events = [...lostEvents(findings.lost, findings.at), ...lostSnapshotEvents(ofSnapshots.lostSnapshots, findings.at)];
  if (events.length > 0) await reports.queueEvents(clusterId, events);

  // The first phase, before any deletion: the provably orphaned marked, the others' marks dropped.
  const volumeMarks = markChanges(marks, findings.orphans.flatMap((o) => (o.mark ? [o.volumeId] : [])), isVolumeId, report, at);
  const snapshotMarks = markChanges(marks, ofSnapshots.orphanedSnapshots.flatMap((o) => (o.mark ? [o.snapshotId] : [])), isSnapshotId, report, at);
  const newMarks = new Map([...volumeMarks.mark, ...snapshotMarks.mark].filter(([id]) => RESOURCE_ID.test(id)));
  if (newMarks.size > 0) await reports.mark(clusterId, newMarks);
  const dropped = [...volumeMarks.unmark, ...snapshotMarks.unmark];
  if (dropped.length > 0) await reports.unmark(clusterId, dropped);
  // Resources kept for their users that the cluster no longer has (deleted, or no longer tagged for it) are let go.
  const listed = new Set([...disks.map((d) => d.volumeId), ...snapshots.map((s) => s.snapshotId)]);
  const gone = [...retained].filter((id) => !listed.has(id) && (isVolumeId(id) || (judgesSnapshots && isSnapshotId(id))));
  if (gone.length > 0) await reports.release(clusterId, gone);

  const maxDeletes = request.maxDeletes ?? MAX_DELETES_PER_AUDIT;
  const deletions: DeletionOutcome[] = [];
  if (request.delete) {
    const candidates = findings.orphans.filter((o) => o.deletable && (chosenVolumes.size === 0 || chosenVolumes.has(o.volumeId)));
    const due: string[] = [];
    for (const o of candidates) {
      if (o.mark?.due) due.push(o.volumeId);
      else if (o.mark) deletions.push({ volumeId: o.volumeId, outcome: 'marked', markedAt: o.mark.at, why: markedWhy(o.mark) });
    }
    for (const volumeId of due.slice(0, maxDeletes)) deletions.push(await deleteIfStillOrphaned(request, volumeId, now, chosenVolumes));
    for (const volumeId of chosenVolumes) {
      if (candidates.some((o) => o.volumeId === volumeId)) continue;
      const finding =
        findings.orphans.find((o) => o.volumeId === volumeId) ?? findings.unknown.find((u) => u.volumeId === volumeId) ?? findings.untagged.find((u) => u.volumeId === volumeId);
      deletions.push({ volumeId, outcome: 'kept', why: finding?.why ?? NOT_AN_ORPHAN });
    }
  }
  const snapshotDeletions: SnapshotDeletionOutcome[] = [];
  if (request.deleteSnapshots === true) {
    const candidates = ofSnapshots.orphanedSnapshots.filter((o) => o.deletable && (chosenSnapshots.size === 0 || chosenSnapshots.has(o.snapshotId)));
    const due: string[] = [];
    for (const o of candidates) {
      if (o.mark?.due) due.push(o.snapshotId);
      else if (o.mark) snapshotDeletions.push({ snapshotId: o.snapshotId, outcome: 'marked', markedAt: o.mark.at, why: markedWhy(o.mark) });
    }
    for (const snapshotId of due.slice(0, maxDeletes)) snapshotDeletions.push(await deleteSnapshotIfStillOrphaned(request, snapshotId, now, chosenSnapshots));
    for (const snapshotId of chosenSnapshots) {
      if (candidates.some((o) => o.snapshotId === snapshotId)) continue;
      const finding =
        ofSnapshots.orphanedSnapshots.find((o) => o.snapshotId === snapshotId) ??
        ofSnapshots.unknownSnapshots.find((u) => u.snapshotId === snapshotId) ??
        ofSnapshots.untaggedSnapshots.find((u) => u.snapshotId === snapshotId);
      snapshotDeletions.push({ snapshotId, outcome: 'kept', why: finding?.why ?? NOT_AN_ORPHAN });
    }
  }
  const deleted = [...deletions, ...snapshotDeletions].flatMap((d) => (d.outcome === 'deleted' ? ['volumeId' in d ? d.volumeId : d.snapshotId] : []));
  if (deleted.length > 0) {
    await reports.unmark(clusterId, deleted);
    await reports.release(clusterId, deleted.filter((id) => retained.has(id)));
  }
  return { ...findings, ...ofSnapshots, snapshotCopies, notes: [...findings.notes, ...snapshotNotes], deletions, snapshotDeletions };
}

/** What a named resource that is no orphan at all is kept with. */
const NOT_AN_ORPHAN = 'not an orphan of the cluster: named by the report, attached, in transition, younger than the grace, or not tagged for the cluster';

/**
 * Why the mark read anew does not let the resource go, if it does not: deleted only while it is still there (no other audit found the resource
 * referenced again meanwhile), due by the report read anew, that report fresh now, and no request of the cluster refused since it
 * (the latest refusal read anew too).
 */
async function notDue(request: AuditRequest, id: string, report: StoredReport, now: number): Promise<string | undefined> {
  const stale = staleReportWhy(report, now);
  if (stale) return stale;
  const refused = refusedSinceWhy(report, await request.reports.lastRefusal(request.clusterId));
  if (refused) return refused;
  const markedAt = (await request.reports.marks(request.clusterId)).get(id);
  if (markedAt === undefined) return 'its mark is gone: another audit found it referenced again';
  if (!isDue(markedAt, report)) return `no report received after its mark (${new Date(markedAt).toISOString()}) yet`;
  return undefined;
}

/** As for disks: the snapshot described, the report and marks read again, judged anew, deleted only if still provably orphaned and due. */
async function deleteSnapshotIfStillOrphaned(request: AuditRequest, snapshotId: string, now: () => number, chosen: ReadonlySet<string>): Promise<SnapshotDeletionOutcome> {
  try {
    const report = await request.reports.get(request.clusterId);
    const snapshot = await request.gateway.getSnapshot(snapshotId);
    if (!snapshot || !report) return { snapshotId, outcome: 'kept', why: snapshot ? 'the report is gone' : 'the snapshot is gone already' };
    const untagged = describedAgainWhy({ kind: 'snapshot', id: snapshotId }, snapshot.tags, request.clusterId);
    if (untagged) return { snapshotId, outcome: 'kept', why: untagged };
    const retained = await request.reports.retained(request.clusterId);
    const verdict = judgeSnapshotOrphan(snapshot, { report, retained, chosen }, now(), request.graceMs);
    if (verdict?.kind !== 'orphan' || !verdict.deletable) return { snapshotId, outcome: 'kept', why: verdict?.why ?? 'no longer an orphan' };
    const why = await notDue(request, snapshotId, report, now());
    if (why) return { snapshotId, outcome: 'kept', why };
    await request.gateway.deleteSnapshot(snapshotId);
    return { snapshotId, outcome: 'deleted' };
  } catch (err) {
    return { snapshotId, outcome: 'failed', why: err instanceof Error ? err.message : String(err) };
  }
}

/** Describes the disk and reads the report and marks again, judges anew, and deletes only if still provably orphaned and due. */
async function deleteIfStillOrphaned(request: AuditRequest, volumeId: string, now: () => number, chosen: ReadonlySet<string>): Promise<DeletionOutcome> {
  try {
    const report = await request.reports.get(request.clusterId);
    const disk = await request.gateway.getDisk(volumeId);
    if (!disk || !report) return { volumeId, outcome: 'kept', why: disk ? 'the report is gone' : 'the disk is gone already' };
    const untagged = describedAgainWhy({ kind: 'volume', id: volumeId }, disk.tags, request.clusterId);
    if (untagged) return { volumeId, outcome: 'kept', why: untagged };
    const retained = await request.reports.retained(request.clusterId);
    const verdict = judgeOrphan(disk, evidenceOf(report, { retained, chosen }), now(), request.graceMs);
    if (verdict?.kind !== 'orphan' || !verdict.deletable) return { volumeId, outcome: 'kept', why: verdict?.why ?? 'no longer an orphan' };
    const why = await notDue(request, volumeId, report, now());
    if (why) return { volumeId, outcome: 'kept', why };
    await request.gateway.deleteDisk(volumeId);
    return { volumeId, outcome: 'deleted' };
  } catch (err) {
    return { volumeId, outcome: 'failed', why: err instanceof Error ? err.message : String(err) };
  }
}
