/**
 * The snapshot half of the audit, as pure functions: the EBS snapshots EC2 holds for the
 * cluster and the VolumeSnapshotContents of the cluster's latest report in, findings out.
 *
 * - orphaned snapshot: a `completed` snapshot of the cluster that no content names — neither by
 *   its snapshot handle nor by the `CSIVolumeSnapshotName` tag (a content whose CreateSnapshot is
 *   in flight, or whose handle was not written yet, names its snapshot by the tag) — older than
 *   the grace period and than the report (dated as for disks, findings.ts): a content made
 *   since it was started cannot be missing from the report. It is *deletable* unless its last
 *   known content had the Retain policy (then only when the operator names it), and — as
 *   disks — deleted by a later audit than the one that marks it (marks.ts).
 * - unknown snapshot: one no content names that is newer than the report.
 * - lost snapshot: a content of ours, once ready to use (its snapshot found and checked), whose
 *   snapshot handle EC2 no longer has.
 * - untagged snapshot: as for disks (findings.ts), one listed for the cluster that volhook may
 *   not act on — taken before snapshots carried `volhook.io/cluster` (`cluster adopt --apply`
 *   tags it), or another cluster's by that tag: never judged an orphan, never deleted.
 */
import { TagKeys, tagOwnership, type ReportedSnapshotContent } from '../contract/index.js';
import type { Snapshot } from '../ec2/types.js';
import { reportTime, type StoredReport } from '../reports/store.js';
import { CLOCK_SKEW_MS, untaggedWhy, type UntaggedFinding } from './findings.js';
import { markOf, type MarkState } from './marks.js';
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
  /** Provably orphaned, and not retained unless the operator named it. */
  deletable: boolean;
  why: string;
  /** Its last known content had the Retain policy: kept unless the operator names it. */
  retained?: true;
  /** Of a provably orphaned snapshot: since when it is marked, and whether it is due. */
  mark?: MarkState;
}

/** A snapshot no content names that is newer than the latest report. */
export interface UnknownSnapshotFinding {
  snapshotId: string;
  volumeId: string;
  sizeGiB: number;
  startTime: string;
  name?: string;
  why: string;
}

/** A snapshot listed for the cluster that volhook may not act on: reported, never deleted. */
export interface UntaggedSnapshotFinding extends Pick<UntaggedFinding, 'ownership' | 'why'> {
  snapshotId: string;
  volumeId: string;
  sizeGiB: number;
  name?: string;
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
  unknownSnapshots: UnknownSnapshotFinding[];
  lostSnapshots: LostSnapshotFinding[];
  /** Snapshots listed for the cluster that volhook may not act on. */
  untaggedSnapshots: UntaggedSnapshotFinding[];
  snapshotTotals: { orphanedSnapshots: number; orphanedSnapshotGiB: number; orphanedSnapshotMonthlyUsd: number };
  notes: string[];
}

/** The handles the report's contents name that the cluster's listing lacks: to be looked up by ID before judging them lost. */
export function lostSnapshotCandidates(snapshots: readonly Snapshot[], report: StoredReport | undefined): string[] {
  const listed = new Set(snapshots.map((s) => s.snapshotId));
  const handles = (report?.report.snapshots ?? []).flatMap((c) => (c.snapshotHandle && c.readyToUse && !listed.has(c.snapshotHandle) ? [c.snapshotHandle] : []));
  return [...new Set(handles)];
}

/** What a snapshot is judged against: the report, what the cluster keeps for its users, what the operator chose. */
export interface SnapshotEvidence {
  report: StoredReport;
  retained: ReadonlySet<string>;
  chosen: ReadonlySet<string>;
}

export type SnapshotVerdict = { kind: 'unknown'; why: string } | { kind: 'orphan'; provable: boolean; retained: boolean; deletable: boolean; why: string };

/**
 * Whether `snapshot` is an orphan (or unknown to the report) and, if so, whether it is provably
 * one and deletable. undefined: not an orphan — a content names it (by handle or by its name
 * tag), it is not `completed`, younger than the grace, or the report carries no contents to
 * judge by. The clean-up asks this again of a snapshot described anew right before deleting it.
 */
export function judgeSnapshotOrphan(snapshot: Snapshot, evidence: SnapshotEvidence, now: number, graceMs: number): SnapshotVerdict | undefined {
  const { report } = evidence;
  const contents = report.report.snapshots;
  if (!contents) return undefined;
  // pending: a CreateSnapshot under way; error: EC2 failed it, and its content says so.
  if (snapshot.state !== 'completed') return undefined;
  if (namedBy(snapshot, contents)) return undefined;
  const started = Date.parse(snapshot.startTime);
  // A start EC2 did not say (mapped to the epoch) is never taken for old.
  if (Number.isNaN(started) || started <= 0 || now - started < graceMs) return undefined;
  const at = reportTime(report);
  if (at - CLOCK_SKEW_MS <= started) return { kind: 'unknown', why: `newer than the latest report (of ${new Date(at).toISOString()}): its content may be new` };
  const name = snapshot.tags[TagKeys.csiVolumeSnapshotName];
  if (!name) return { kind: 'orphan', provable: false, retained: false, deletable: false, why: `it has no ${TagKeys.csiVolumeSnapshotName} tag: not volhook's to judge` };
  if (evidence.retained.has(snapshot.snapshotId)) {
    const chosen = evidence.chosen.has(snapshot.snapshotId);
    return {
      kind: 'orphan',
      provable: true,
      retained: true,
      deletable: chosen,
      why: chosen
        ? `its last known VolumeSnapshotContent had deletionPolicy Retain, and the operator named it; no content names it now`
        : `its last known VolumeSnapshotContent had deletionPolicy Retain: the snapshot is its user's (delete it by naming it: --delete-snapshots --snapshot ${snapshot.snapshotId})`,
    };
  }
  return { kind: 'orphan', provable: true, retained: false, deletable: true, why: `no VolumeSnapshotContent names it (its content ${name} is gone)` };
}

/** The content that names the snapshot: by handle, or by the name tag (a CreateSnapshot in flight, a handle not written yet). */
function namedBy(snapshot: Snapshot, contents: readonly ReportedSnapshotContent[]): ReportedSnapshotContent | undefined {
  const name = snapshot.tags[TagKeys.csiVolumeSnapshotName];
  return contents.find((c) => c.snapshotHandle === snapshot.snapshotId) ?? (name === undefined ? undefined : contents.find((c) => c.content === name));
}

export function snapshotFindings(input: {
  clusterId: string;
  snapshots: readonly Snapshot[];
  report: StoredReport | undefined;
  /** The handles {@link lostSnapshotCandidates} named, looked up by ID: undefined where EC2 has none. */
  lookedUp: ReadonlyMap<string, Snapshot | undefined>;
  region: string;
  now: number;
  graceMs: number;
  /** Snapshots whose last known content had Retain after no report names them. */
  retained?: ReadonlySet<string>;
  /** The audit's marks (resource ID → when marked, epoch ms). */
  marks?: ReadonlyMap<string, number>;
  /** Snapshots the operator named to be deleted (`--snapshot`). */
  chosen?: ReadonlySet<string>;
}): SnapshotFindings {
  const { snapshots, report, lookedUp, region, now, graceMs, clusterId } = input;
  const untaggedSnapshots = snapshots.flatMap((snapshot): UntaggedSnapshotFinding[] => {
    const why = untaggedWhy({ kind: 'snapshot', id: snapshot.snapshotId }, tagOwnership(snapshot.tags, clusterId), clusterId);
    if (!why) return [];
    const name = snapshot.tags[TagKeys.csiVolumeSnapshotName];
    return [{ snapshotId: snapshot.snapshotId, volumeId: snapshot.volumeId, sizeGiB: snapshot.sizeGiB, ...(name && { name }), ...why }];
  });
  const base = {
    snapshots: snapshots.length,
    orphanedSnapshots: [],
    unknownSnapshots: [],
    lostSnapshots: [],
    untaggedSnapshots,
    snapshotTotals: { orphanedSnapshots: 0, orphanedSnapshotGiB: 0, orphanedSnapshotMonthlyUsd: 0 },
  };
  if (!report) return { ...base, notes: [] };
  if (!report.report.snapshots) {
    return { ...base, notes: ["the cluster's report carries no VolumeSnapshotContents (its forwarder predates them): snapshots are not judged"] };
  }
  const evidence = { report, retained: input.retained ?? new Set<string>(), chosen: input.chosen ?? new Set<string>() };
  const orphanedSnapshots: SnapshotOrphanFinding[] = [];
  const unknownSnapshots: UnknownSnapshotFinding[] = [];
  for (const snapshot of snapshots) {
    if (untaggedSnapshots.some((u) => u.snapshotId === snapshot.snapshotId)) continue;
    const verdict = judgeSnapshotOrphan(snapshot, evidence, now, graceMs);
    if (!verdict) continue;
    const name = snapshot.tags[TagKeys.csiVolumeSnapshotName];
    const about = { snapshotId: snapshot.snapshotId, volumeId: snapshot.volumeId, sizeGiB: snapshot.sizeGiB, startTime: snapshot.startTime, ...(name && { name }) };
    if (verdict.kind === 'unknown') {
      unknownSnapshots.push({ ...about, why: verdict.why });
      continue;
    }
    const usd = monthlySnapshotCost(snapshot.sizeGiB, region);
    const mark = verdict.provable ? markOf(input.marks?.get(snapshot.snapshotId), report, now) : undefined;
    orphanedSnapshots.push({
      ...about,
      ...(usd !== undefined && { monthlyUsd: usd }),
      deletable: verdict.deletable,
      why: verdict.why,
      ...(verdict.retained && { retained: true as const }),
      ...(mark && { mark }),
    });
  }
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
  return { ...base, orphanedSnapshots, unknownSnapshots, lostSnapshots, snapshotTotals, notes: unpriced ? [`no snapshot list price for ${region}: the orphaned snapshots' cost is left out`] : [] };
}
