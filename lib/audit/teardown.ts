/**
 * What a cluster leaves behind when it is removed (`npm run cluster -- remove <id>
 * --delete-volumes`): every disk still tagged for it. Those that are `available` are deleted;
 * an attached disk or one in transition is never deleted, nor one a Retain PV named in the
 * cluster's last report — they are listed with the reason, for a person to decide. Its snapshots
 * likewise: those settled are deleted, never one being taken nor one a Retain content named.
 */
import { TagKeys } from '../contract/index.js';
import { isGone, type Disk, type Ec2Gateway, type Snapshot } from '../ec2/types.js';
import type { StoredReport } from '../reports/store.js';
import { monthlyCost, monthlySnapshotCost } from './prices.js';
import type { DeletionOutcome, SnapshotDeletionOutcome } from './run.js';

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

/** The disk as teardown sees it: deletable when available, unattached and named by no Retain PV. */
export function teardownVerdict(disk: Disk, report: StoredReport | undefined): { action: 'delete' | 'keep'; why?: string } {
  if (disk.attachments.some((a) => a.state !== 'detached')) return { action: 'keep', why: `attached to ${disk.attachments.map((a) => a.instanceId).join(', ')}` };
  if (disk.state !== 'available') return { action: 'keep', why: `state ${disk.state}` };
  const retained = report?.report.volumes.find((v) => v.volumeId === disk.volumeId && v.reclaimPolicy === 'Retain');
  if (retained) return { action: 'keep', why: `PersistentVolume ${retained.pv} (Retain) names it` };
  return { action: 'delete' };
}

export function leftBehind(disks: readonly Disk[], report: StoredReport | undefined, region: string): LeftBehind[] {
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
        ...teardownVerdict(disk, report),
      };
    });
}

/** Deletes the `delete` entries, each described anew right before its DeleteVolume and judged again. */
export async function deleteLeftBehind(
  gateway: Ec2Gateway,
  clusterId: string,
  entries: readonly LeftBehind[],
  report: StoredReport | undefined,
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
      if (disk.tags[TagKeys.cluster(clusterId)] !== 'owned') {
        outcomes.push({ volumeId, outcome: 'kept', why: `no longer tagged for cluster "${clusterId}"` });
        continue;
      }
      const verdict = teardownVerdict(disk, report);
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

/** The snapshot as teardown sees it: deletable once settled and named by no Retain content of the last report. */
export function snapshotTeardownVerdict(snapshot: Snapshot, report: StoredReport | undefined): { action: 'delete' | 'keep'; why?: string } {
  if (snapshot.state === 'pending') return { action: 'keep', why: 'state pending (a snapshot being taken)' };
  const name = snapshot.tags[TagKeys.csiVolumeSnapshotName];
  const retained = report?.report.snapshots?.find((c) => c.deletionPolicy === 'Retain' && (c.snapshotHandle === snapshot.snapshotId || c.content === name));
  if (retained) return { action: 'keep', why: `VolumeSnapshotContent ${retained.content} (Retain) names it` };
  return { action: 'delete' };
}

export function snapshotsLeftBehind(snapshots: readonly Snapshot[], report: StoredReport | undefined, region: string): SnapshotLeftBehind[] {
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
      ...snapshotTeardownVerdict(snapshot, report),
    };
  });
}

/** Deletes the `delete` entries, each described anew right before its DeleteSnapshot and judged again. */
export async function deleteSnapshotsLeftBehind(
  gateway: Ec2Gateway,
  clusterId: string,
  entries: readonly SnapshotLeftBehind[],
  report: StoredReport | undefined,
): Promise<SnapshotDeletionOutcome[]> {
  const outcomes: SnapshotDeletionOutcome[] = [];
  for (const { snapshotId } of entries.filter((e) => e.action === 'delete')) {
    try {
      const snapshot = await gateway.getSnapshot(snapshotId);
      if (!snapshot) {
        outcomes.push({ snapshotId, outcome: 'deleted' });
        continue;
      }
      if (snapshot.tags[TagKeys.cluster(clusterId)] !== 'owned') {
        outcomes.push({ snapshotId, outcome: 'kept', why: `no longer tagged for cluster "${clusterId}"` });
        continue;
      }
      const verdict = snapshotTeardownVerdict(snapshot, report);
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
