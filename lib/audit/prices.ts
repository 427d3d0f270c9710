/**
 * EBS list prices per Region, USD per month, for what a finding costs while it is left as it
 * is. Storage per GiB-month by type; gp3 adds IOPS above 3,000 and throughput above 125 MiB/s;
 * io1 and io2 add provisioned IOPS (io2 in tiers). Snapshots per GB-month of the standard tier. Prices change: the table says when it was
 * taken, and a Region or type it does not hold is reported as unpriced, never as $0.
 */

/** When the figures below were taken from the Amazon EBS pricing page (on-demand list prices). */
export const PRICES_AS_OF = '2025-06-01';

export interface RegionPrices {
  /** USD per GiB-month, by volume type. */
  storage: Record<string, number>;
  /** gp3: USD per provisioned IOPS-month above the 3,000 included. */
  gp3Iops: number;
  /** gp3: USD per MiB/s-month above the 125 MiB/s included. */
  gp3Throughput: number;
  /** io1: USD per provisioned IOPS-month. */
  io1Iops: number;
  /** io2: USD per provisioned IOPS-month, up to 32,000, 32,001–64,000, above 64,000. */
  io2Iops: [number, number, number];
  /** Snapshots, standard tier: USD per GB-month of data stored. */
  snapshotStorage: number;
}

const US: RegionPrices = {
  storage: { gp3: 0.08, gp2: 0.1, io1: 0.125, io2: 0.125, st1: 0.045, sc1: 0.015, standard: 0.05 },
  gp3Iops: 0.005,
  gp3Throughput: 0.04,
  io1Iops: 0.065,
  io2Iops: [0.065, 0.0455, 0.032],
  snapshotStorage: 0.05,
};

export const EBS_PRICES: Readonly<Record<string, RegionPrices>> = {
  'us-east-1': US,
  'us-east-2': US,
  'us-west-2': US,
  'eu-west-1': {
    storage: { gp3: 0.088, gp2: 0.11, io1: 0.138, io2: 0.138, st1: 0.05, sc1: 0.0168, standard: 0.055 },
    gp3Iops: 0.0055,
    gp3Throughput: 0.044,
    io1Iops: 0.072,
    io2Iops: [0.072, 0.05, 0.035],
    snapshotStorage: 0.05,
  },
  'eu-central-1': {
    storage: { gp3: 0.0952, gp2: 0.119, io1: 0.149, io2: 0.149, st1: 0.054, sc1: 0.018, standard: 0.059 },
    gp3Iops: 0.006,
    gp3Throughput: 0.048,
    io1Iops: 0.078,
    io2Iops: [0.078, 0.0546, 0.0382],
    snapshotStorage: 0.054,
  },
};

export interface PricedVolume {
  type: string;
  sizeGiB: number;
  iops?: number;
  throughput?: number;
}

/** USD per month for the volume in `region`; undefined when the table has no price for it. */
export function monthlyCost(volume: PricedVolume, region: string): number | undefined {
  const prices = EBS_PRICES[region];
  const perGiB = prices?.storage[volume.type];
  if (!prices || perGiB === undefined) return undefined;
  let cost = perGiB * volume.sizeGiB;
  const iops = volume.iops ?? 0;
  if (volume.type === 'gp3') {
    cost += Math.max(0, iops - 3000) * prices.gp3Iops;
    cost += Math.max(0, (volume.throughput ?? 125) - 125) * prices.gp3Throughput;
  } else if (volume.type === 'io1') {
    cost += iops * prices.io1Iops;
  } else if (volume.type === 'io2') {
    const [t1, t2, t3] = prices.io2Iops;
    cost += Math.min(iops, 32_000) * t1 + Math.max(0, Math.min(iops, 64_000) - 32_000) * t2 + Math.max(0, iops - 64_000) * t3;
  }
  return Math.round(cost * 100) / 100;
}

/**
 * USD per month for a snapshot of `sizeGiB` in `region`, at most: EBS bills the blocks a
 * snapshot holds, which for an incremental snapshot is less than its volume's size — the figure
 * is what deleting it saves at the most. Undefined when the table has no price for the Region.
 */
export function monthlySnapshotCost(sizeGiB: number, region: string): number | undefined {
  const prices = EBS_PRICES[region];
  if (!prices) return undefined;
  return Math.round(prices.snapshotStorage * sizeGiB * 100) / 100;
}
