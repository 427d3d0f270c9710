import { ParameterError } from './errors.js';
import { isTrue, positiveInt32Parameter, type ClassParameters } from './parameters.js';
import { VOLUME_TYPE_LIMITS, type IopsLimits, type VolumeType } from './volume-types.js';

/**
 * Fits a requested IOPS figure into a type's limits, in the driver's order (`capIOPS`,
 * pkg/cloud/cloud.go):
 * 1. below the minimum: raised to it when `allowIncrease`, else `undefined` (too low);
 * 2. above the maximum: lowered to it;
 * 3. above maxPerGiB × size: lowered to that, but only when that is at least the minimum —
 *    a small volume keeps its figure and EC2 decides.
 *
 * io1 4 GiB at 4 IOPS with auto-increase → 100; io1 4 GiB at 40,000 → 200;
 * io2 4 GiB at 40,000 → 4,000; gp3 10 GiB at 16,000 → 5,000.
 */
export function capIops(requested: number, sizeGiB: number, limits: IopsLimits, allowIncrease: boolean): number | undefined {
  let iops = requested;
  if (iops < limits.min) {
    if (!allowIncrease) return undefined;
    iops = limits.min;
  }
  if (iops > limits.max) iops = limits.max;
  const bySize = limits.maxPerGiB * sizeGiB;
  if (iops > bySize && bySize >= limits.min) iops = bySize;
  return iops;
}

/** IOPS changed from what the class asked: the figures and the bound that moved it, in words. */
export interface IopsAdjustment {
  requested: number;
  given: number;
  why: string;
}

const figure = (n: number) => n.toLocaleString('en-US');

/** Why `capIops` moved `requested` to `given` (the same order of bounds), or undefined if it did not. */
export function iopsAdjustment(requested: number, given: number, sizeGiB: number, type: VolumeType, limits: IopsLimits): IopsAdjustment | undefined {
  if (given === requested) return undefined;
  const why =
    requested < limits.min ? `${type} needs at least ${figure(limits.min)} IOPS, and allowAutoIOPSPerGBIncrease raised it`
    : given === limits.maxPerGiB * sizeGiB && given < limits.max ? `${type} allows at most ${figure(limits.maxPerGiB)} IOPS per GiB: ${figure(given)} for ${sizeGiB} GiB`
    : `${type} allows at most ${figure(limits.max)} IOPS`;
  return { requested, given, why };
}

/** The adjustment in one line, the same every time (an Event repeated aggregates). */
export function describeIopsAdjustment(adjustment: IopsAdjustment): string {
  return `${figure(adjustment.requested)} IOPS asked, ${figure(adjustment.given)} given: ${adjustment.why}`;
}

/**
 * The IOPS to create the volume with: from `iops`, or `iopsPerGB` × size, then capped, with
 * what was asked when the cap changed it (for the Event and annotation that say so).
 * `undefined` when the class asks for none, so EC2 applies its default (gp3: 3,000). As in
 * the driver, a value of 0 or less counts as not given, and
 * `allowAutoIOPSPerGBIncrease: "true"` raises a too-low figure from either key.
 *
 * @throws ParameterError when a value is not an int32, both keys are above zero, the type has
 * no IOPS setting, or the figure is below the minimum without auto-increase. The driver
 * leaves the last two to EC2, which refuses them (`InvalidParameterCombination` /
 * `InvalidParameterValue`); volhook refuses them before the call, with the same outcome.
 */
export function resolveIops(params: ClassParameters, type: VolumeType, sizeGiB: number): { iops: number; adjustment?: IopsAdjustment } | undefined {
  const fixed = positiveInt32Parameter(params.get('iops'));
  const perGiB = positiveInt32Parameter(params.get('iopsPerGB'));
  if (fixed && perGiB) {
    throw new ParameterError(perGiB.entry.key, `cannot be combined with "${fixed.entry.key}"; give a fixed figure or a per-GiB one`);
  }
  const given = fixed ?? perGiB;
  if (!given) return undefined;

  const limits = VOLUME_TYPE_LIMITS[type].iops;
  if (!limits) {
    throw new ParameterError(given.entry.key, `volume type ${type} has no IOPS setting (only gp3, io1 and io2 do)`);
  }
  const requested = fixed ? fixed.value : given.value * sizeGiB;
  const iops = capIops(requested, sizeGiB, limits, isTrue(params.get('allowAutoIOPSPerGBIncrease')));
  if (iops === undefined) {
    const what = fixed ? `${requested} IOPS` : `${given.value} × ${sizeGiB} GiB = ${requested} IOPS`;
    throw new ParameterError(
      given.entry.key,
      `${what} is below the minimum of ${limits.min} for ${type}; ask for more, or set allowAutoIOPSPerGBIncrease: "true" to raise it`,
    );
  }
  const adjustment = iopsAdjustment(requested, iops, sizeGiB, type, limits);
  return { iops, ...(adjustment && { adjustment }) };
}
