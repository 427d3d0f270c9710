import { Ec2Error, ec2Errors } from './errors.js';
import { VOLUME_TYPES, type VolumeType } from './model.js';

/** What EC2 checks a volume's type, size and performance against. */
export interface TypeLimits {
  minSize: number;
  maxSize: number;
  iops?: { min: number; max: number; perGiB: number; required: boolean; default?: number };
  throughput?: { min: number; max: number; perIops: number; default: number };
  multiAttach: boolean;
}

/**
 * Per-type limits from the EBS documentation (the figures of ebs.md: gp3 at 16,000 IOPS and
 * 1,000 MiB/s, as older accounts have). gp3's baseline of 3,000 IOPS is allowed at any size.
 */
export const VOLUME_LIMITS: Readonly<Record<VolumeType, TypeLimits>> = {
  gp3: {
    minSize: 1,
    maxSize: 65536,
    iops: { min: 3000, max: 16000, perGiB: 500, required: false, default: 3000 },
    throughput: { min: 125, max: 1000, perIops: 0.25, default: 125 },
    multiAttach: false,
  },
  gp2: { minSize: 1, maxSize: 16384, multiAttach: false },
  io1: { minSize: 4, maxSize: 16384, iops: { min: 100, max: 64000, perGiB: 50, required: true }, multiAttach: true },
  io2: { minSize: 4, maxSize: 65536, iops: { min: 100, max: 256000, perGiB: 1000, required: true }, multiAttach: true },
  st1: { minSize: 125, maxSize: 16384, multiAttach: false },
  sc1: { minSize: 125, maxSize: 16384, multiAttach: false },
  standard: { minSize: 1, maxSize: 1024, multiAttach: false },
};

export interface VolumeSpec {
  type: VolumeType;
  size: number;
  iops?: number;
  throughput?: number;
  multiAttach: boolean;
}

export interface VolumeSpecRequest {
  type?: string;
  size?: number;
  iops?: number;
  throughput?: number;
  multiAttach?: boolean;
}

export function parseVolumeType(type: string): VolumeType {
  if (!(VOLUME_TYPES as readonly string[]).includes(type)) {
    throw new Ec2Error(
      'UnknownVolumeType',
      'The specified volume type is not supported. The supported volume types are gp2, gp3, io1, io2, st1, sc1, and standard.',
    );
  }
  return type as VolumeType;
}

const ratio = (n: number) => n.toFixed(6);

/** The spec CreateVolume would give, or the error EC2 answers. EC2's default type is gp2. */
export function resolveCreateSpec(req: VolumeSpecRequest & { size: number }): VolumeSpec {
  const type = parseVolumeType(req.type ?? 'gp2');
  const limits = VOLUME_LIMITS[type];
  if (req.iops !== undefined && !limits.iops) {
    throw ec2Errors.combination(`The parameter iops is not supported for ${type} volumes.`);
  }
  if (req.throughput !== undefined && !limits.throughput) {
    throw ec2Errors.combination(`The parameter throughput is not supported for ${type} volumes.`);
  }
  if (limits.iops?.required && req.iops === undefined) {
    throw ec2Errors.combination(`The parameter iops must be specified for ${type} volumes.`);
  }
  const spec: VolumeSpec = {
    type,
    size: req.size,
    iops: limits.iops ? (req.iops ?? limits.iops.default) : undefined,
    throughput: limits.throughput ? (req.throughput ?? limits.throughput.default) : undefined,
    multiAttach: req.multiAttach ?? false,
  };
  checkSpec(spec);
  return spec;
}

/**
 * The spec ModifyVolume would move to. Unnamed values are kept when the type stays; a new
 * type with IOPS or throughput takes its defaults (3,000 IOPS, 125 MiB/s), as EC2 does.
 */
export function resolveModifySpec(current: VolumeSpec, req: VolumeSpecRequest): VolumeSpec {
  const type = req.type === undefined ? current.type : parseVolumeType(req.type);
  const limits = VOLUME_LIMITS[type];
  const sameType = type === current.type;
  if (req.iops !== undefined && !limits.iops) {
    throw ec2Errors.combination(`The parameter iops is not supported for ${type} volumes.`);
  }
  if (req.throughput !== undefined && !limits.throughput) {
    throw ec2Errors.combination(`The parameter throughput is not supported for ${type} volumes.`);
  }
  const size = req.size ?? current.size;
  if (size < current.size) throw ec2Errors.invalidValue('New size cannot be smaller than existing size.');
  const target: VolumeSpec = {
    type,
    size,
    iops: limits.iops ? (req.iops ?? (sameType ? current.iops : 3000)) : undefined,
    throughput: limits.throughput
      ? (req.throughput ?? (sameType ? current.throughput : limits.throughput.default))
      : undefined,
    multiAttach: req.multiAttach ?? current.multiAttach,
  };
  checkSpec(target);
  if (
    target.type === current.type &&
    target.size === current.size &&
    target.iops === current.iops &&
    target.throughput === current.throughput &&
    target.multiAttach === current.multiAttach
  ) {
    throw ec2Errors.invalidValue(
      'New size, volume type, IOPS, throughput and Multi-Attach setting are the same as the existing values.',
    );
  }
  return target;
}

function checkSpec(spec: VolumeSpec): void {
  const limits = VOLUME_LIMITS[spec.type];
  if (spec.size < limits.minSize) {
    throw ec2Errors.invalidValue(`Volume of ${spec.size}GiB is too small; minimum is ${limits.minSize}GiB.`);
  }
  if (spec.size > limits.maxSize) {
    throw ec2Errors.invalidValue(`Volume of ${spec.size}GiB is too large; maximum is ${limits.maxSize}GiB.`);
  }
  if (limits.iops && spec.iops !== undefined) {
    const { min, max, perGiB } = limits.iops;
    if (spec.iops < min) throw ec2Errors.invalidValue(`Volume iops of ${spec.iops} is too low; minimum is ${min}.`);
    if (spec.iops > max) throw ec2Errors.invalidValue(`Volume iops of ${spec.iops} is too high; maximum is ${max}.`);
    if (spec.iops > Math.max(min, perGiB * spec.size)) {
      throw ec2Errors.invalidValue(
        `Iops to volume size ratio of ${ratio(spec.iops / spec.size)} is too high; maximum is ${ratio(perGiB)}.`,
      );
    }
  }
  if (limits.throughput && spec.throughput !== undefined) {
    const { min, max, perIops } = limits.throughput;
    if (spec.throughput < min) {
      throw ec2Errors.invalidValue(`Throughput (MiBps) of ${spec.throughput} is too low; minimum is ${min}.`);
    }
    if (spec.throughput > max) {
      throw ec2Errors.invalidValue(`Throughput (MiBps) of ${spec.throughput} is too high; maximum is ${max}.`);
    }
    const iops = spec.iops ?? 3000;
    if (spec.throughput > perIops * iops) {
      throw ec2Errors.invalidValue(
        `Throughput (MiBps) to iops ratio of ${ratio(spec.throughput / iops)} is too high; maximum is ${ratio(perIops)} MiBps per iops.`,
      );
    }
  }
  if (spec.multiAttach && !limits.multiAttach) {
    throw ec2Errors.combination(`The parameter multiAttachEnabled is not supported for ${spec.type} volumes.`);
  }
}
