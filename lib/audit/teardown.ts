/**
 * What a cluster leaves behind when it is removed (`npm run cluster -- remove <id>
 * --delete-volumes`): every disk still tagged for it. Those that are `available` are deleted;
 * an attached disk or one in transition is never deleted, nor one a Retain PV named in the
 * cluster's last report or whose last known PV had Retain (the report store's memory of disks
 * kept for their users) — they are listed with the reason, for a person to decide; nor one volhook
 * may not act on (`tagOwnership`: made before volumes carried `volhook.io/cluster`, say — the
 * reason names the adopt run). Its snapshots likewise: those settled are deleted, never one
 * being taken nor one a Retain content named.
 */
import { TagKeys, tagOwnership } from '../contract/index.js';
import { isGone, type Disk, type Ec2Gateway, type Snapshot } from '../ec2/types.js';
import { keepsResource } from '../reports/retained.js';
import type { StoredReport } from '../reports/store.js';
import { describedAgainWhy, untaggedWhy } from './findings.js';
import { monthlyCost, monthlySnapshotCost } from './prices.js';
import type { DeletionOutcome, SnapshotDeletionOutcome } from './run.js';

/** What teardown judges by: the cluster's last report, and what the store keeps for its users after their PV or content went. */
export interface TeardownEvidence {
  clusterId: string;
  report: StoredReport | undefined;
  retained: ReadonlySet<string>;
}

export interface LeftBehind {
  volumeId: string;
  sizeGiB: number;
  type: string;
  zone: string;
  state: string;
  name?: string;
  monthlyUsd?: number;
  /** Deleted on confirmation, or kept (and why). */
  action: 'delete' | 'keep';
  why?: string;
}

/** The disk as teardown sees it: deletable when available, unattached, named by no Retain PV and not kept for its user. */
export function teardownVerdict(disk: Disk, { clusterId, report, retained }: TeardownEvidence): { action: 'delete' | 'keep'; why?: string } {
  const untagged = untaggedWhy({ kind: 'volume', id: disk.volumeId }, tagOwnership(disk.tags, clusterId), clusterId);
  if (untagged) return { action: 'keep', why: untagged.why };
  if (disk.attachments.some((a) => a.state !== 'detached')) return { action: 'keep', why: `attached to ${disk.attachments.map((a) => a.instanceId).join(', ')}` };
  if (disk.state !== 'available') return { action: 'keep', why: `state ${disk.state}` };
  const named = report?.report.volumes.find((v) => v.volumeId === disk.volumeId && keepsResource(v.reclaimPolicy));
  if (named) return { action: 'keep', why: `PersistentVolume ${named.pv} (${named.reclaimPolicy}) names it` };
  if (retained.has(disk.volumeId)) return { action: 'keep', why: 'its last known PersistentVolume had reclaimPolicy Retain: the disk is its user\'s' };
  return { action: 'delete' };
}

export function leftBehind(disks: readonly Disk[], evidence: TeardownEvidence, region: string): LeftBehind[] {
  return disks
    .filter((d) => !isGone(d))
    .map((disk) => {
      const usd = monthlyCost(disk, region);
      const name = disk.tags[TagKeys.csiVolumeName];
      return {
        volumeId: disk.volumeId,
        sizeGiB: disk.sizeGiB,
        type: disk.type,
        zone: disk.zone,
        state: disk.state,
        ...(name && { name }),
        ...(usd !== undefined && { monthlyUsd: usd }),
        ...teardownVerdict(disk, evidence),
      };
    });
}

/** Deletes the `delete` entries, each described anew right before its DeleteVolume and judged again. */
export async function deleteLeftBehind(
  gateway: Ec2Gateway,
  clusterId: string,
  entries: readonly LeftBehind[],
  evidence: TeardownEvidence,
): Promise<DeletionOutcome[]> {
  const outcomes: DeletionOutcome[] = [];
  for (const entry of entries.filter((e) => e.action === 'delete')) {
    const { volumeId } = entry;
    try {
      const disk = await gateway.getDisk(volumeId);
      if (!disk || isGone(disk)) {
        outcomes.push({ volumeId, outcome: 'deleted' });
        continue;
      }
      const untagged = describedAgainWhy({ kind: 'volume', id: volumeId }, disk.tags, clusterId);
      if (untagged) {
        outcomes.push({ volumeId, outcome: 'kept', why: untagged });
        continue;
      }
      const verdict = teardownVerdict(disk, { ...evidence, clusterId });
      if (verdict.action === 'keep') {
        outcomes.push({ volumeId, outcome: 'kept', why: verdict.why ?? 'changed' });
        continue;
      }
      await gateway.deleteDisk(volumeId);
      outcomes.push({ volumeId, outcome: 'deleted' });
    } catch (err) {
      outcomes.push({ volumeId, outcome: 'failed', why: err instanceof Error ? err.message : String(err) });
    }
  }
  return outcomes;
}

export interface SnapshotLeftBehind {
  snapshotId: string;
  volumeId: string;
  sizeGiB: number;
  state: string;
  name?: string;
  monthlyUsd?: number;
  action: 'delete' | 'keep';
  why?: string;
}

/** The snapshot as teardown sees it: deletable once settled, named by no Retain content of the last report and not kept for its user. */
export function snapshotTeardownVerdict(snapshot: Snapshot, { clusterId, report, retained }: TeardownEvidence): { action: 'delete' | 'keep'; why?: string } {
  const untagged = untaggedWhy({ kind: 'snapshot', id: snapshot.snapshotId }, tagOwnership(snapshot.tags, clusterId), clusterId);
  if (untagged) return { action: 'keep', why: untagged.why };
  if (snapshot.state === 'pending') return { action: 'keep', why: 'state pending (a snapshot being taken)' };
  const name = snapshot.tags[TagKeys.csiVolumeSnapshotName];
  const named = report?.report.snapshots?.find((c) => keepsResource(c.deletionPolicy) && (c.snapshotHandle === snapshot.snapshotId || c.content === name));
  if (named) return { action: 'keep', why: `VolumeSnapshotContent ${named.content} (${named.deletionPolicy}) names it` };
  if (retained.has(snapshot.snapshotId)) return { action: 'keep', why: 'its last known VolumeSnapshotContent had deletionPolicy Retain: the snapshot is its user\'s' };
  return { action: 'delete' };
}

export function snapshotsLeftBehind(snapshots: readonly Snapshot[], evidence: TeardownEvidence, region: string): SnapshotLeftBehind[] {
  return snapshots.map((snapshot) => {
    const usd = monthlySnapshotCost(snapshot.sizeGiB, region);
    const name = snapshot.tags[TagKeys.csiVolumeSnapshotName];
    return {
      snapshotId: snapshot.snapshotId,
      volumeId: snapshot.volumeId,
      sizeGiB: snapshot.sizeGiB,
      state: snapshot.state,
      ...(name && { name }),
      ...(usd !== undefined && { monthlyUsd: usd }),
      ...snapshotTeardownVerdict(snapshot, evidence),
    };
  });
}

/** Deletes the `delete` entries, each described anew right before its DeleteSnapshot and judged again. */
export async function deleteSnapshotsLeftBehind(
  gateway: Ec2Gateway,
  clusterId: string,
  entries: readonly SnapshotLeftBehind[],
  evidence: TeardownEvidence,
): Promise<SnapshotDeletionOutcome[]> {
  const outcomes: SnapshotDeletionOutcome[] = [];
  for (const { snapshotId } of entries.filter((e) => e.action === 'delete')) {
    try {
      const snapshot = await gateway.getSnapshot(snapshotId);
      if (!snapshot) {
        outcomes.push({ snapshotId, outcome: 'deleted' });
        continue;
      }
      const untagged = describedAgainWhy({ kind: 'snapshot', id: snapshotId }, snapshot.tags, clusterId);
      if (untagged) {
        outcomes.push({ snapshotId, outcome: 'kept', why: untagged });
        continue;
      }
      const verdict = snapshotTeardownVerdict(snapshot, { ...evidence, clusterId });
      if (verdict.action === 'keep') {
        outcomes.push({ snapshotId, outcome: 'kept', why: verdict.why ?? 'changed' });
        continue;
      }
      await gateway.deleteSnapshot(snapshotId);
      outcomes.push({ snapshotId, outcome: 'deleted' });
    } catch (err) {
      outcomes.push({ snapshotId, outcome: 'failed', why: err instanceof Error ? err.message : String(err) });
    }
  }
  return outcomes;
}
