/**
 * The parameters of a VolumeAttributesClass for the EBS CSI driver (its
 * `parseModifyVolumeParameters`, pkg/driver/controller_modify_volume.go): what a volume may be
 * changed to in place, and checked against EBS's rules at the size the volume will have.
 */
import { ParameterError } from './errors.js';
import { int32Parameter, type ParameterEntry } from './parameters.js';
import { tagsFrom, type TagTemplateValues } from './tags.js';
import { isVolumeType, VOLUME_TYPE_LIMITS, VOLUME_TYPES, type VolumeType } from './volume-types.js';
import { isReservedTagKey, RESERVED_TAG_KEYS_TEXT } from '../contract/tags.js';

/** What a VolumeAttributesClass asks of a volume; a field left out keeps the volume's value. */
export interface VolumeAttributes {
  type?: VolumeType;
  iops?: number;
  throughput?: number;
  /** `tagSpecification_N`: tags added (or overwritten) with CreateTags. */
  tagsToAdd: Record<string, string>;
  /** `tagDeletion_N`: tag keys removed with DeleteTags. */
  tagsToDelete: string[];
}

/** The driver's keys, exactly as it spells them (VolumeAttributesClass keys are case-sensitive). */
export const VAC_PARAMETER_KEYS = {
  type: 'type',
  /** Deprecated spelling of `type`; `type` wins when both are given, as in the driver. */
  volumeType: 'volumeType',
  iops: 'iops',
  throughput: 'throughput',
  tagSpecificationPrefix: 'tagSpecification',
  tagDeletionPrefix: 'tagDeletion',
} as const;

/** Keys the driver takes that volhook does not act on yet: refused by name, never ignored. */
const NOT_SUPPORTED = ['iopsPerGB', 'allowAutoIOPSIncreaseOnModify'];

const KNOWN_TEXT = 'type, iops, throughput, tagSpecification_N, tagDeletion_N';

/**
 * Reads a VolumeAttributesClass's parameters. Tag values are Go templates over the claim's
 * and PV's names, as in a StorageClass.
 *
 * @throws ParameterError naming the key at fault: an unknown key, a number that is not one,
 * a type EBS does not have, a reserved tag key.
 */
export function readVolumeAttributes(parameters: Record<string, string> | undefined, values: TagTemplateValues): VolumeAttributes {
  const entries = Object.entries(parameters ?? {}).map(([key, value]) => ({ key, value }));
  const specs: ParameterEntry[] = [];
  const tagsToDelete: string[] = [];
  let type: ParameterEntry | undefined;
  let iops: number | undefined;
  let throughput: number | undefined;
  for (const entry of entries) {
    const { key, value } = entry;
    if (key === VAC_PARAMETER_KEYS.type || (key === VAC_PARAMETER_KEYS.volumeType && !(parameters ?? {})[VAC_PARAMETER_KEYS.type])) {
      type = entry;
    } else if (key === VAC_PARAMETER_KEYS.volumeType) {
      continue;
    } else if (key === VAC_PARAMETER_KEYS.iops) {
      iops = positive(entry);
    } else if (key === VAC_PARAMETER_KEYS.throughput) {
      throughput = positive(entry);
    } else if (key.startsWith(VAC_PARAMETER_KEYS.tagSpecificationPrefix)) {
      specs.push(entry);
    } else if (key.startsWith(VAC_PARAMETER_KEYS.tagDeletionPrefix)) {
      if (isReservedTagKey(value)) throw new ParameterError(key, `cannot delete reserved tag "${value}" (${RESERVED_TAG_KEYS_TEXT})`);
      if (value === '') throw new ParameterError(key, 'names no tag key');
      tagsToDelete.push(value);
    } else if (NOT_SUPPORTED.includes(key)) {
      throw new ParameterError(key, `is not supported in a VolumeAttributesClass by volhook yet (supported: ${KNOWN_TEXT})`);
    } else {
      throw new ParameterError(key, `is not a mutable parameter of the EBS CSI driver (${KNOWN_TEXT})`);
    }
  }
  const result: VolumeAttributes = { tagsToAdd: tagsFrom(specs, values), tagsToDelete };
  if (type && type.value !== '') {
    if (!isVolumeType(type.value)) throw new ParameterError(type.key, `"${type.value}" is not an EBS volume type (${VOLUME_TYPES.join(', ')})`);
    result.type = type.value;
  }
  if (iops !== undefined) result.iops = iops;
  if (throughput !== undefined) result.throughput = throughput;
  return result;
}

function positive(entry: ParameterEntry): number {
  const value = int32Parameter(entry);
  if (value === undefined || value <= 0) throw new ParameterError(entry.key, `${entry.value} must be above 0`);
  return value;
}

/** The performance a volume would have: its type, size, and IOPS / throughput if it has them. */
export interface Performance {
  type: string;
  sizeGiB: number;
  iops?: number;
  throughput?: number;
}

/**
 * Why EC2 would refuse to modify a volume to `target`, or undefined when it would not. EC2's
 * per-type rules (ebs.md): the size range, IOPS only on gp3/io1/io2 and within their minimum,
 * maximum and per-GiB ratio, throughput only on gp3, within its range and at most 0.25 MiB/s
 * per IOPS. Checked before any call, so a class EBS cannot honour is Infeasible at once.
 */
export function infeasibility(target: Performance): string | undefined {
  if (!isVolumeType(target.type)) return `"${target.type}" is not an EBS volume type (${VOLUME_TYPES.join(', ')})`;
  const limits = VOLUME_TYPE_LIMITS[target.type];
  if (target.sizeGiB < limits.minSizeGiB || target.sizeGiB > limits.maxSizeGiB) {
    return `${target.sizeGiB} GiB is outside ${target.type}'s range of ${limits.minSizeGiB} to ${limits.maxSizeGiB} GiB`;
  }
  if (target.iops !== undefined) {
    const iopsLimits = limits.iops;
    if (!iopsLimits) return `volume type ${target.type} has no IOPS setting (iops is for gp3, io1 and io2)`;
    if (target.iops < iopsLimits.min || target.iops > iopsLimits.max) {
      return `${target.iops} IOPS is outside ${target.type}'s range of ${iopsLimits.min} to ${iopsLimits.max}`;
    }
    const perGiB = iopsLimits.maxPerGiB * target.sizeGiB;
    if (target.iops > Math.max(perGiB, iopsLimits.min)) {
      return `${target.iops} IOPS is more than ${iopsLimits.maxPerGiB} IOPS per GiB allows for ${target.sizeGiB} GiB of ${target.type} (at most ${perGiB})`;
    }
  } else if (limits.iops && limits.iops.default === undefined) {
    return `volume type ${target.type} needs iops`;
  }
  if (target.throughput !== undefined) {
    const throughputLimits = limits.throughput;
    if (!throughputLimits) return `volume type ${target.type} has no throughput setting (only gp3 does)`;
    if (target.throughput < throughputLimits.min || target.throughput > throughputLimits.max) {
      return `${target.throughput} MiB/s is outside ${target.type}'s range of ${throughputLimits.min} to ${throughputLimits.max} MiB/s`;
    }
    const iops = target.iops ?? limits.iops?.default ?? 0;
    const ceiling = Math.floor(iops * throughputLimits.maxPerIops);
    if (target.throughput > ceiling) {
      return `${target.throughput} MiB/s is more than ${throughputLimits.maxPerIops} MiB/s per IOPS allows at ${iops} IOPS (at most ${ceiling} MiB/s)`;
    }
  }
  return undefined;
}
