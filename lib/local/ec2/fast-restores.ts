import { ec2Errors } from './errors.js';
import { compileFilters, type FilterTable } from './filters.js';
import type { FastSnapshotRestore } from './model.js';
import type { QueryFilter } from './query.js';
import type { World } from './world.js';

/** One refusal inside an otherwise successful EnableFastSnapshotRestores. */
export interface FastRestoreError {
  snapshotId: string;
  errors: { zone: string; code: string; message: string }[];
}

export interface EnableFastRestoresResult {
  successful: FastSnapshotRestore[];
  unsuccessful: FastRestoreError[];
}

const REASON = 'Client.UserInitiated';

/**
 * EnableFastSnapshotRestores: per snapshot and zone, `enabling` (until the snapshot is
 * `completed`, plus the `fsrEnable` latency), then `optimizing` (`fsrOptimizePerTiB` × the
 * snapshot's size in TiB, at least one), then `enabled`. Enabling again what is already on
 * answers its current state. A snapshot that does not exist, or a zone outside the Region, is
 * reported under `unsuccessful` while the rest goes ahead, as EC2 does.
 */
export function enableFastRestores(
  world: World,
  snapshotIds: readonly string[],
  zoneNames: readonly string[],
  zoneIds: readonly string[],
): EnableFastRestoresResult {
  if (snapshotIds.length === 0) throw ec2Errors.missing('SourceSnapshotId');
  if (zoneNames.length > 0 && zoneIds.length > 0) {
    throw ec2Errors.combination('Either AvailabilityZone or AvailabilityZoneId must be specified in the request, but not both.');
  }
  if (zoneNames.length === 0 && zoneIds.length === 0) throw ec2Errors.missing('AvailabilityZone');
  const zones = zoneNames.length > 0
    ? zoneNames.map((name) => ({ asked: name, zone: world.zone(name)?.name }))
    : zoneIds.map((id) => ({ asked: id, zone: world.env.zones.find((z) => z.id === id)?.name }));
  const result: EnableFastRestoresResult = { successful: [], unsuccessful: [] };
  const now = world.now();
  for (const snapshotId of snapshotIds) {
    const snap = world.snapshots.get(snapshotId);
    if (!snap || snap.deleteRequested || snap.state === 'error') {
      const err = snap
        ? ec2Errors.incorrectState(`Snapshot is in invalid state - ${snap.deleteRequested ? 'deleting' : snap.state}`)
        : /^snap-[0-9a-f]+$/.test(snapshotId)
          ? ec2Errors.snapshotNotFound(snapshotId)
          : ec2Errors.snapshotMalformed(snapshotId);
      result.unsuccessful.push({ snapshotId, errors: zones.map((z) => ({ zone: z.asked, code: err.code, message: err.message })) });
      continue;
    }
    const failed: FastRestoreError['errors'] = [];
    for (const { asked, zone } of zones) {
      if (!zone) {
        failed.push({ zone: asked, code: 'InvalidParameterValue', message: `Invalid availability zone: [${asked}]` });
        continue;
      }
      const key = `${snap.id} ${zone}`;
      const existing = world.fastRestores.get(key);
      if (existing && existing.state !== 'disabled') {
        result.successful.push(existing);
        continue;
      }
      const f: FastSnapshotRestore = {
        snapshotId: snap.id,
        zone,
        seq: world.nextSeq(),
        state: 'enabling',
        stateTransitionReason: REASON,
        enablingTime: now,
      };
      world.fastRestores.set(key, f);
      if (snap.state === 'completed') {
        world.schedule({ kind: 'fsr-optimizing', snapshotId: snap.id, zone, epoch: f.seq }, world.latency('fsrEnable'));
      }
      result.successful.push(f);
    }
    if (failed.length > 0) result.unsuccessful.push({ snapshotId: snap.id, errors: failed });
  }
  world.changed();
  return result;
}

/** Whether a volume restored in `zone` from the snapshot is fully initialized at creation. */
export function fastRestored(world: World, snapshotId: string, zone: string): boolean {
  return world.fastRestores.get(`${snapshotId} ${zone}`)?.state === 'enabled';
}

function filters(world: World): FilterTable<FastSnapshotRestore> {
  return {
    fields: {
      'availability-zone': (f) => [f.zone],
      'availability-zone-id': (f) => [world.zone(f.zone)?.id ?? ''],
      'owner-id': () => [world.env.accountId],
      'snapshot-id': (f) => [f.snapshotId],
      state: (f) => [f.state],
    },
  };
}

/** DescribeFastSnapshotRestores before pagination, in the order they were enabled. */
export function findFastRestores(world: World, query: readonly QueryFilter[]): FastSnapshotRestore[] {
  const keep = compileFilters(query, filters(world));
  return [...world.fastRestores.values()].sort((a, b) => a.seq - b.seq).filter(keep);
}
