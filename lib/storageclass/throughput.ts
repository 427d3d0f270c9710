import { ParameterError } from './errors.js';
import { positiveInteger, type ClassParameters } from './parameters.js';
import { VOLUME_TYPE_LIMITS, type VolumeType } from './volume-types.js';

/**
 * gp3 throughput in MiB/s, `undefined` when not asked for (EC2 default 125).
 * The 0.25 MiB/s-per-IOPS ceiling uses the IOPS the volume will really have: the capped
 * figure, or gp3's 3,000 baseline when none was given (so at most 750 MiB/s by default).
 *
 * @throws ParameterError for another type, a non-integer, or a value out of range.
 */
export function resolveThroughput(params: ClassParameters, type: VolumeType, iops: number | undefined): number | undefined {
  const entry = params.get('throughput');
  if (!entry) return undefined;
  const limits = VOLUME_TYPE_LIMITS[type].throughput;
  if (!limits) throw new ParameterError(entry.key, `volume type ${type} has no throughput setting (only gp3 does)`);

  const throughput = positiveInteger(entry, 'MiB/s');
  if (throughput < limits.min || throughput > limits.max) {
    throw new ParameterError(entry.key, `${throughput} MiB/s is outside ${type}'s range of ${limits.min} to ${limits.max} MiB/s`);
  }
  const effectiveIops = iops ?? VOLUME_TYPE_LIMITS[type].iops?.default ?? 0;
  const ceiling = Math.floor(effectiveIops * limits.maxPerIops);
  if (throughput > ceiling) {
    throw new ParameterError(
      entry.key,
      `${throughput} MiB/s is more than ${limits.maxPerIops} MiB/s per IOPS allows at ${effectiveIops} IOPS (at most ${ceiling} MiB/s); raise iops or lower throughput`,
    );
  }
  return throughput;
}
