/**
 * DescribeVolumeStatus: each volume's status checks and, for a volume made from a snapshot or
 * copied from a volume, its initialization (blocks fetched from S3 on first read until done).
 * The EBS CSI driver polls it before it reports an attach done when a claim asks
 * `blockAttachUntilInitialized`.
 *
 * Initialization, from the volume's creation: a fast-restored volume is initialized at once;
 * one created with VolumeInitializationRate takes its size at that rate (AWS: "provisioned
 * rate", with an estimate of the time left); any other takes its size at
 * {@link UNPROVISIONED_RATE_MIB_S}: AWS gives no figure for the default rate nor for copies,
 * so the simulator takes the lowest provisioned rate. An empty volume needs none and has no
 * initialization details (AWS: "not available for empty volumes").
 */
import { compileFilters, type FilterTable } from './filters.js';
import type { Volume } from './model.js';
import type { QueryFilter } from './query.js';
import { findVolumes } from './volumes.js';
import type { World } from './world.js';

export const UNPROVISIONED_RATE_MIB_S = 100;

export interface Initialization {
  type: 'default' | 'provisioned-rate' | 'volume-copy';
  progress: number;
  /** Wall seconds left; AWS gives it for provisioned-rate only. */
  secondsLeft?: number;
  done: boolean;
}

export interface VolumeStatus {
  volume: Volume;
  status: 'ok' | 'insufficient-data';
  details: { name: 'io-enabled' | 'io-performance' | 'initialization-state'; status: string }[];
  initialization?: Initialization;
}

/** The initialization of a volume at `now`, or undefined for an empty volume. */
export function initializationOf(world: World, v: Volume, now: number): Initialization | undefined {
  const copied = v.sourceVolumeId !== undefined;
  if (v.snapshotId === undefined && !copied) return undefined;
  const type = copied ? 'volume-copy' : v.volumeInitializationRate !== undefined ? 'provisioned-rate' : 'default';
  if (v.fastRestored) return { type, progress: 100, done: true };
  const rate = v.volumeInitializationRate ?? UNPROVISIONED_RATE_MIB_S;
  const total = world.wall(((v.size * 1024) / rate) * 1000);
  const elapsed = Math.max(0, now - v.createTime);
  const done = elapsed >= total;
  const progress = done ? 100 : Math.floor((100 * elapsed) / total);
  const secondsLeft = type === 'provisioned-rate' ? Math.ceil(Math.max(0, total - elapsed) / 1000) : undefined;
  return { type, progress, done, ...(secondsLeft === undefined ? {} : { secondsLeft }) };
}

export function volumeStatusOf(world: World, v: Volume, now: number): VolumeStatus {
  const usable = v.state === 'available' || v.state === 'in-use';
  const initialization = initializationOf(world, v, now);
  return {
    volume: v,
    status: usable ? 'ok' : 'insufficient-data',
    details: [
      { name: 'io-enabled', status: usable ? 'passed' : 'insufficient-data' },
      { name: 'io-performance', status: 'not-applicable' },
      ...(initialization ? [{ name: 'initialization-state' as const, status: initialization.done ? 'completed' : 'initializing' }] : []),
    ],
    ...(initialization ? { initialization } : {}),
  };
}

const statusFilters: FilterTable<VolumeStatus> = {
  fields: {
    'availability-zone': (s) => [s.volume.zone],
    'volume-status.status': (s) => [s.status],
    'volume-status.details-name': (s) => s.details.map((d) => d.name),
    'volume-status.details-status': (s) => s.details.map((d) => d.status),
  },
};

/** The statuses of the volumes named (all when none are; a missing one is InvalidVolume.NotFound), filtered. */
export function findVolumeStatuses(world: World, ids: readonly string[], filters: readonly QueryFilter[]): (VolumeStatus & { seq: number })[] {
  const keep = compileFilters(filters, statusFilters);
  const now = world.now();
  return findVolumes(world, ids, [])
    .map((v) => ({ ...volumeStatusOf(world, v, now), seq: v.seq }))
    .filter(keep);
}
