import { Ec2Error, ec2Errors } from './errors.js';
import { compileFilters, type FilterTable } from './filters.js';
import type { VolumeModification } from './model.js';
import type { QueryFilter } from './query.js';
import { resolveModifySpec, type VolumeSpecRequest } from './volume-rules.js';
import type { World } from './world.js';

/** EC2's limit of modifications of one volume per rolling window (24 h by default). */
export const MODIFICATIONS_PER_WINDOW = 4;

/**
 * ModifyVolume: `modifying`, then `optimizing` (the volume reports its new size and
 * performance from here), then `completed`. One change at a time — the next once the last is
 * `completed` or `failed` — and at most four starts in a rolling window (24 h by default); the
 * fifth is refused with a message naming when the next may start, as EC2 does since 2026.
 */
export function modifyVolume(world: World, volumeId: string, req: VolumeSpecRequest): VolumeModification {
  const volume = world.getVolume(volumeId);
  if (volume.state !== 'available' && volume.state !== 'in-use') {
    throw ec2Errors.incorrectState(`Volume '${volume.id}' is in the '${volume.state}' state.`);
  }
  const last = world.modifications.get(volume.id);
  if (last && (last.state === 'modifying' || last.state === 'optimizing')) {
    throw new Ec2Error(
      'IncorrectModificationState',
      `Volume '${volume.id}' is already being modified (state '${last.state}').`,
    );
  }
  const window = world.wall(world.env.modificationWindowMs);
  const recent = (volume.modificationStarts ?? []).filter((start) => world.now() - start < window);
  if (recent.length >= MODIFICATIONS_PER_WINDOW) {
    const nextAt = new Date(Math.min(...recent) + window).toISOString();
    throw new Ec2Error(
      'VolumeModificationRateExceeded',
      `Volume '${volume.id}' has reached the limit of four modifications in a rolling 24-hour period. ` +
        `You can modify it again after ${nextAt}.`,
    );
  }
  const original = {
    size: volume.size,
    type: volume.type,
    iops: volume.iops,
    throughput: volume.throughput,
    multiAttach: volume.multiAttach,
  };
  const target = resolveModifySpec(original, req);
  if (target.multiAttach !== original.multiAttach && volume.attachments.length > 0) {
    throw ec2Errors.invalidValue(`Multi-Attach can't be changed while volume '${volume.id}' is attached.`);
  }
  const startTime = world.now();
  const modification: VolumeModification = { volumeId: volume.id, state: 'modifying', startTime, progress: 0, original, target };
  world.modifications.set(volume.id, modification);
  volume.modificationStarts = [...recent, startTime];
  const modifying = world.latency('modify');
  world.schedule({ kind: 'modification-optimizing', volumeId: volume.id, startTime }, modifying);
  world.schedule({ kind: 'modification-completed', volumeId: volume.id, startTime }, modifying + world.latency('optimize'));
  world.changed();
  return modification;
}

const modificationFilters: FilterTable<VolumeModification> = {
  fields: {
    'volume-id': (m) => [m.volumeId],
    'modification-state': (m) => [m.state],
    'target-size': (m) => [String(m.target.size)],
    'target-iops': (m) => (m.target.iops === undefined ? [] : [String(m.target.iops)]),
    'target-volume-type': (m) => [m.target.type],
    'original-size': (m) => [String(m.original.size)],
    'original-iops': (m) => (m.original.iops === undefined ? [] : [String(m.original.iops)]),
    'original-volume-type': (m) => [m.original.type],
    'start-time': (m) => [new Date(m.startTime).toISOString()],
  },
};

/** The latest modification of each volume; a named volume never modified is an error. */
export function findModifications(
  world: World,
  ids: readonly string[],
  filters: readonly QueryFilter[],
): (VolumeModification & { seq: number })[] {
  const keep = compileFilters(filters, modificationFilters);
  let list: VolumeModification[];
  if (ids.length > 0) {
    list = ids.map((id) => {
      world.getVolume(id);
      const m = world.modifications.get(id);
      if (!m) {
        throw new Ec2Error('InvalidVolumeModification.NotFound', `Modification for volume '${id}' does not exist.`);
      }
      return m;
    });
  } else {
    list = [...world.modifications.values()];
  }
  return list
    .filter(keep)
    .map((m) => ({ ...m, seq: world.volumes.get(m.volumeId)?.seq ?? 0 }))
    .sort((a, b) => a.seq - b.seq);
}
