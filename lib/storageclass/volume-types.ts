/** The EBS volume types a StorageClass may ask for (`type`) and a registration may allow. */
export const VOLUME_TYPES = ['gp3', 'gp2', 'io1', 'io2', 'st1', 'sc1', 'standard'] as const;
export type VolumeType = (typeof VOLUME_TYPES)[number];

/** The reference driver's default and the cheapest general-purpose type. */
export const DEFAULT_VOLUME_TYPE: VolumeType = 'gp3';

/** Provisioned-IOPS bounds of a type, as used by {@link capIops}. */
export interface IopsLimits {
  /** Lowest IOPS EC2 accepts. */
  min: number;
  /** Highest IOPS EC2 accepts, whatever the size. */
  max: number;
  /** Highest IOPS per GiB of size. */
  maxPerGiB: number;
  /** What EC2 provisions when no IOPS are given (gp3's baseline); absent when IOPS are required. */
  default?: number;
}

/** Throughput bounds (MiB/s) of a type that lets you set it. */
export interface ThroughputLimits {
  min: number;
  max: number;
  /** At most this many MiB/s per provisioned IOPS. */
  maxPerIops: number;
}

export interface VolumeTypeLimits {
  minSizeGiB: number;
  maxSizeGiB: number;
  /** Absent for types whose IOPS follow from their size (gp2, st1, sc1, standard). */
  iops?: IopsLimits;
  /** gp3 only. */
  throughput?: ThroughputLimits;
}

/**
 * The per-type table of ebs.md, with gp3's current EC2 maxima: 80,000 IOPS and 2,000 MiB/s
 * (and 64 TiB), as EC2 documents gp3 today.
 *
 * The driver learns each maximum with a dry-run CreateVolume in the chosen zone and caps to
 * what EC2 answers ("maximum is 80000"). volhook caps to this table instead: no extra EC2
 * call, and the same figure wherever EC2 has the current limits. Where an account or Region
 * still has gp3's older 16,000 IOPS / 1,000 MiB/s, a class asking for more is refused by EC2
 * with a Warning naming the maximum — a visible failure, where the driver would cap silently
 * and capping to 16,000 everywhere would shortchange every other account (docs/parameters.md).
 */
export const VOLUME_TYPE_LIMITS: Readonly<Record<VolumeType, VolumeTypeLimits>> = {
  gp3: {
    minSizeGiB: 1,
    maxSizeGiB: 65_536,
    iops: { min: 3_000, max: 80_000, maxPerGiB: 500, default: 3_000 },
    throughput: { min: 125, max: 2_000, maxPerIops: 0.25 },
  },
  gp2: { minSizeGiB: 1, maxSizeGiB: 16_384 },
  io1: { minSizeGiB: 4, maxSizeGiB: 16_384, iops: { min: 100, max: 64_000, maxPerGiB: 50 } },
  io2: { minSizeGiB: 4, maxSizeGiB: 65_536, iops: { min: 100, max: 256_000, maxPerGiB: 1_000 } },
  st1: { minSizeGiB: 125, maxSizeGiB: 16_384 },
  sc1: { minSizeGiB: 125, maxSizeGiB: 16_384 },
  standard: { minSizeGiB: 1, maxSizeGiB: 1_024 },
};

/** The largest volume of any type, GiB: no cluster can be allowed more. */
export const MAX_VOLUME_SIZE_GIB = Math.max(...Object.values(VOLUME_TYPE_LIMITS).map((limits) => limits.maxSizeGiB));

export function isVolumeType(value: string): value is VolumeType {
  return (VOLUME_TYPES as readonly string[]).includes(value);
}
