/**
 * The snapshot half of the audit, as pure functions: the EBS snapshots EC2 holds for the
 * cluster and the VolumeSnapshotContents of the cluster's latest report in, findings out.
 *
 * - orphaned snapshot: a `completed` snapshot of the cluster that no content names — neither by
 *   its snapshot handle nor by the `CSIVolumeSnapshotName` tag (a content whose CreateSnapshot is
 *   in flight, or whose handle was not written yet, names its snapshot by the tag) — older than
 *   the grace period. It is *deletable* only when the report speaks for it: taken after the
 *   snapshot was started, so a content made since cannot be missing from it.
 * - lost snapshot: a content of ours, once ready to use (its snapshot found and checked), whose
 *   snapshot handle EC2 no longer has.
 */
import { TagKeys, type ReportedSnapshotContent } from '../contract/index.js';
import type { Snapshot } from '../ec2/types.js';
import type { StoredReport } from '../reports/store.js';
import { CLOCK_SKEW_MS } from './findings.js';
import { monthlySnapshotCost } from './prices.js';

export interface SnapshotOrphanFinding {
  snapshotId: string;
  /** The volume it was taken of. */
  volumeId: string;
  sizeGiB: number;
  /** EC2's StartTime (ISO 8601). */
  startTime: string;
  /** Its `CSIVolumeSnapshotName` tag: the content it was made for. */
  name?: string;
  /** USD per month at most (priced at the volume size); absent when the table has no price for the Region. */
  monthlyUsd?: number;
  deletable: boolean;
  why: string;
}

export interface LostSnapshotFinding {
  snapshotId: string;
  content: string;
  contentUid?: string;
  deletionPolicy: string;
}

export interface SnapshotFindings {
  /** Snapshots of the cluster EC2 holds. */
  snapshots: number;
  orphanedSnapshots: SnapshotOrphanFinding[];
  lostSnapshots: LostSnapshotFinding[];
  snapshotTotals: { orphanedSnapshots: number; orphanedSnapshotGiB: number; orphanedSnapshotMonthlyUsd: number };
  notes: string[];
}

/** The handles the report's contents name that the cluster's listing lacks: to be looked up by ID before judging them lost. */
export function lostSnapshotCandidates(snapshots: readonly Snapshot[], report: StoredReport | undefined): string[] {
  const listed = new Set(snapshots.map((s) => s.snapshotId));
  const handles = (report?.report.snapshots ?? []).flatMap((c) => (c.snapshotHandle && c.readyToUse && !listed.has(c.snapshotHandle) ? [c.snapshotHandle] : []));
  return [...new Set(handles)];
}

/**
 * Whether `snapshot` is an orphan and, if so, whether it is provably one (deletable).
 * undefined: not an orphan — a content names it (by handle or by its name tag), it is not
 * `completed`, younger than the grace, or the report carries no contents to judge by. The
 * clean-up asks this again of a snapshot described anew right before deleting it.
 */
export function judgeSnapshotOrphan(snapshot: Snapshot, report: StoredReport, now: number, graceMs: number): { deletable: boolean; why: string } | undefined {
  const contents = report.report.snapshots;
  if (!contents) return undefined;
  // pending: a CreateSnapshot under way; error: EC2 failed it, and its content says so.
  if (snapshot.state !== 'completed') return undefined;
  if (namedBy(snapshot, contents)) return undefined;
  const started = Date.parse(snapshot.startTime);
  // A start EC2 did not say (mapped to the epoch) is never taken for old.
  if (Number.isNaN(started) || started <= 0 || now - started < graceMs) return undefined;
  const name = snapshot.tags[TagKeys.csiVolumeSnapshotName];
  if (!name) return { deletable: false, why: `it has no ${TagKeys.csiVolumeSnapshotName} tag: not volhook's to judge` };
  if (report.observedAt - CLOCK_SKEW_MS <= started) return { deletable: false, why: 'the latest report does not postdate the snapshot: its content may be new' };
  return { deletable: true, why: `no VolumeSnapshotContent names it (its content ${name} is gone)` };
}

/** The content that names the snapshot: by handle, or by the name tag (a CreateSnapshot in flight, a handle not written yet). */
function namedBy(snapshot: Snapshot, contents: readonly ReportedSnapshotContent[]): ReportedSnapshotContent | undefined {
  const name = snapshot.tags[TagKeys.csiVolumeSnapshotName];
  return contents.find((c) => c.snapshotHandle === snapshot.snapshotId) ?? (name === undefined ? undefined : contents.find((c) => c.content === name));
}

export function snapshotFindings(input: {
  snapshots: readonly Snapshot[];
  report: StoredReport | undefined;
  /** The handles {@link lostSnapshotCandidates} named, looked up by ID: undefined where EC2 has none. */
  lookedUp: ReadonlyMap<string, Snapshot | undefined>;
  region: string;
  now: number;
  graceMs: number;
}): SnapshotFindings {
  const { snapshots, report, lookedUp, region, now, graceMs } = input;
  const base = { snapshots: snapshots.length, orphanedSnapshots: [], lostSnapshots: [], snapshotTotals: { orphanedSnapshots: 0, orphanedSnapshotGiB: 0, orphanedSnapshotMonthlyUsd: 0 } };
  if (!report) return { ...base, notes: [] };
  if (!report.report.snapshots) {
    return { ...base, notes: ["the cluster's report carries no VolumeSnapshotContents (its forwarder predates them): snapshots are not judged"] };
  }
  const orphanedSnapshots = snapshots.flatMap((snapshot) => {
    const verdict = judgeSnapshotOrphan(snapshot, report, now, graceMs);
    if (!verdict) return [];
    const usd = monthlySnapshotCost(snapshot.sizeGiB, region);
    const name = snapshot.tags[TagKeys.csiVolumeSnapshotName];
    return [
      {
        snapshotId: snapshot.snapshotId,
        volumeId: snapshot.volumeId,
        sizeGiB: snapshot.sizeGiB,
        startTime: snapshot.startTime,
        ...(name && { name }),
        ...(usd !== undefined && { monthlyUsd: usd }),
        ...verdict,
      },
    ];
  });
  const listed = new Set(snapshots.map((s) => s.snapshotId));
  const lostSnapshots = report.report.snapshots.flatMap((c): LostSnapshotFinding[] => {
    const handle = c.snapshotHandle;
    // A content never ready may name a snapshot that never was ours (refused, with its reason).
    if (!handle || !c.readyToUse || listed.has(handle)) return [];
    // A content of the Delete policy being deleted loses its snapshot on purpose.
    if (c.deleting && c.deletionPolicy === 'Delete') return [];
    if (!lookedUp.has(handle) || lookedUp.get(handle) !== undefined) return [];
    return [{ snapshotId: handle, content: c.content, ...(c.contentUid && { contentUid: c.contentUid }), deletionPolicy: c.deletionPolicy }];
  });
  const unpriced = orphanedSnapshots.some((o) => o.monthlyUsd === undefined);
  const snapshotTotals = {
    orphanedSnapshots: orphanedSnapshots.length,
    orphanedSnapshotGiB: orphanedSnapshots.reduce((sum, o) => sum + o.sizeGiB, 0),
    orphanedSnapshotMonthlyUsd: Math.round(orphanedSnapshots.reduce((sum, o) => sum + (o.monthlyUsd ?? 0), 0) * 100) / 100,
  };
  return { ...base, orphanedSnapshots, lostSnapshots, snapshotTotals, notes: unpriced ? [`no snapshot list price for ${region}: the orphaned snapshots' cost is left out`] : [] };
}
