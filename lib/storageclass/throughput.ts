import { ParameterError } from './errors.js';
import { positiveInt32Parameter, type ClassParameters } from './parameters.js';
import { VOLUME_TYPE_LIMITS, type VolumeType } from './volume-types.js';

/**
 * gp3 throughput in MiB/s, `undefined` when not asked for (EC2 default 125). As in the
 * driver, a value of 0 or less counts as not given.
 *
 * The driver sends any value to EC2 and lets EC2 refuse it. volhook refuses, before the call,
 * what EC2 refuses in every account and Region — throughput on a type other than gp3, below
 * 125, above 2,000, or above 0.25 MiB/s per IOPS the volume will have (the capped figure, or
 * gp3's 3,000 baseline when none was given) — so the outcome is the driver's, without the
 * failed call.
 *
 * @throws ParameterError for an int32 parse error or a value EC2 refuses.
 */
export function resolveThroughput(params: ClassParameters, type: VolumeType, iops: number | undefined): number | undefined {
  const given = positiveInt32Parameter(params.get('throughput'));
  if (!given) return undefined;
  const { entry, value: throughput } = given;
  const limits = VOLUME_TYPE_LIMITS[type].throughput;
  if (!limits) throw new ParameterError(entry.key, `volume type ${type} has no throughput setting (only gp3 does)`);

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
