import type { Ec2IamConfig } from './iam.js';
import type { BucketSpec } from './buckets.js';
import type { LatencySpec } from './random.js';

/** A zone of the simulated Region. */
export interface ZoneInfo {
  name: string;
  /** e.g. `use1-az1`. */
  id: string;
}

/** How long each simulated operation takes, in simulated milliseconds (divided by timeScale). */
export interface LatencyTable {
  /** CreateVolume to `available` (EBS: median ≈ 1.5 s, p99 ≈ 4 s). */
  create: LatencySpec;
  /** `deleting` to gone. */
  delete: LatencySpec;
  /** `attaching` to `attached` (1–4 s). */
  attach: LatencySpec;
  /** `detaching` to detached (1–4 s). */
  detach: LatencySpec;
  /** A modification's `modifying` phase. */
  modify: LatencySpec;
  /** A modification's `optimizing` phase. */
  optimize: LatencySpec;
  /** RunInstances: `pending` to `running`. */
  instanceStart: LatencySpec;
  /** TerminateInstances: `shutting-down` to `terminated`. */
  instanceTerminate: LatencySpec;
  /** CreateSnapshot: `pending` to `completed`. */
  snapshot: LatencySpec;
  /** Fast snapshot restore: `enabling` to `optimizing` (counted from the snapshot's completion). */
  fsrEnable: LatencySpec;
  /** Fast snapshot restore: `optimizing` to `enabled`, per TiB of the snapshot (at least one TiB's worth). */
  fsrOptimizePerTiB: LatencySpec;
}

export const DEFAULT_LATENCY: Readonly<LatencyTable> = {
  create: { kind: 'lognormal', medianMs: 1500, p99Ms: 4000, maxMs: 15000 },
  delete: { kind: 'uniform', minMs: 500, maxMs: 2000 },
  attach: { kind: 'uniform', minMs: 1000, maxMs: 4000 },
  detach: { kind: 'uniform', minMs: 1000, maxMs: 4000 },
  modify: { kind: 'uniform', minMs: 2000, maxMs: 5000 },
  optimize: { kind: 'uniform', minMs: 5000, maxMs: 30000 },
  instanceStart: { kind: 'uniform', minMs: 5000, maxMs: 15000 },
  instanceTerminate: { kind: 'uniform', minMs: 5000, maxMs: 10000 },
  // A snapshot stays `pending` until every written block is in S3: AWS says "several hours" for
  // large first snapshots; the small, mostly empty volumes of a test cluster take a minute or
  // a few. Median 90 s, p99 10 min, cut at 1 h.
  snapshot: { kind: 'lognormal', medianMs: 90_000, p99Ms: 600_000, maxMs: 3_600_000 },
  fsrEnable: { kind: 'uniform', minMs: 30_000, maxMs: 120_000 },
  // "60 minutes per TiB to optimize" (EBS user guide, fast snapshot restore).
  fsrOptimizePerTiB: { kind: 'fixed', ms: 3_600_000 },
};

/**
 * An injected failure of one action. `{ rate: 0.2, code: 'InternalError' }` fails a fifth of
 * the calls; `{ rate: 0.05, delayMs: 3000 }` only slows them down (a latency spike).
 */
export interface ActionFault {
  /** Chance in [0, 1] that the fault fires on a call. */
  rate: number;
  /** The EC2 error code to answer with; none means the fault only adds delay. */
  code?: string;
  message?: string;
  /** HTTP status; by default what EC2 uses for the code (503 throttling, 500 internal, else 400). */
  status?: number;
  /** Extra response delay in simulated milliseconds. */
  delayMs?: number;
  /**
   * `after`: carry the action out, then answer with the error — the lost-response case that
   * idempotency tokens exist for. Default `before`: nothing happens.
   */
  phase?: 'before' | 'after';
}

/** Per action name (or `*` for every action). */
export type FaultConfig = Record<string, ActionFault | ActionFault[]>;

/** What becomes of a new volume that matches: `error` state, or gone (a refused KMS key). */
export interface CreateFaultRule {
  kmsKeyIdContains?: string;
  tag?: { key: string; value?: string };
  /** Chance the rule fires on a match; default 1. */
  rate?: number;
  outcome: 'error' | 'vanish';
}

/** What becomes of a new snapshot that matches: it ends in `error` instead of `completed`. */
export interface SnapshotFaultRule {
  /** Matches when the source volume has this tag (any value unless one is given). */
  volumeTag?: { key: string; value?: string };
  /** Matches when the snapshot is created with this tag. */
  tag?: { key: string; value?: string };
  /** Chance the rule fires on a match; default 1. */
  rate?: number;
  outcome: 'error';
}

/** An attachment that never leaves `attaching`. */
export interface AttachFaultRule {
  instanceId?: string;
  volumeTag?: { key: string; value?: string };
  rate?: number;
  outcome: 'stuck';
}

/**
 * Deterministic triggers that need no configuration: a KmsKeyId containing `sim-vanish`
 * makes the volume disappear while creating, one containing `sim-error` ends in `error`.
 */
export const DEFAULT_CREATE_FAULTS: readonly CreateFaultRule[] = [
  { kmsKeyIdContains: 'sim-vanish', outcome: 'vanish' },
  { kmsKeyIdContains: 'sim-error', outcome: 'error' },
];

export interface ThrottlingConfig {
  enabled?: boolean;
  /** Bucket name (see DEFAULT_BUCKETS) to spec. */
  buckets?: Record<string, BucketSpec>;
}

/** Options of {@link startEc2Simulator}; plain data, JSON-friendly. */
export interface Ec2SimulatorOptions {
  /** 0 (default) picks a free port. */
  port?: number;
  host?: string;
  region?: string;
  /** Zone names (ids derived) or full zone records. Default: `<region>a`, `b`, `c`. */
  zones?: (string | ZoneInfo)[];
  /**
   * Further Regions behind the same endpoint (the home Region is `region`), each with its own
   * resources, buckets and counters in every account, and zones `<region>a`, `b`, `c`. A call is
   * served in the Region of its SigV4 credential scope (`Credential=<key>/<date>/<region>/ec2/…`),
   * as the SDK client of that Region signs it; with further Regions held, a scope naming a Region
   * the simulator does not hold is refused (AuthFailure). Without any, every call is served in
   * the home Region, whatever its scope, as before Regions existed.
   */
  regions?: readonly string[];
  /** The simulator's own account (12 digits); default 123456789012. */
  accountId?: string;
  /**
   * Further accounts (12 digits each) behind the same endpoint, each with its own resources,
   * token buckets and counters; the credentials of a call pick its account (iam.ts).
   */
  accounts?: readonly string[];
  /** 10 = latencies and modification windows ÷ 10, bucket refill × 10. Default 1. */
  timeScale?: number;
  /** `false` turns throttling off; on by default with EC2's buckets. */
  throttling?: boolean | ThrottlingConfig;
  faults?: FaultConfig;
  createFaults?: CreateFaultRule[];
  attachFaults?: AttachFaultRule[];
  snapshotFaults?: SnapshotFaultRule[];
  /** Seed of the PRNG behind latencies and faults. */
  seed?: number;
  /**
   * Directory for `ec2-state.json` (the own account; each further account's in
   * `accounts/<id>/`); state is loaded at start and written on change.
   */
  stateDir?: string;
  latency?: Partial<LatencyTable>;
  /** Attachment slots of a new instance, shared by volumes (root included) and ENIs. Default 28. */
  attachmentSlots?: number;
  /** The rolling window (simulated time) in which a volume may be modified four times. Default 24 h. */
  modificationWindowMs?: number;
  /** IAM: the principal each access key signs for, evaluated on every call it makes (iam.ts). */
  iam?: Ec2IamConfig;
}

/** What `POST /_sim/config` and `sim.configure` accept: the options that may change at run time. */
export interface Ec2RuntimeConfig {
  timeScale?: number;
  throttling?: boolean | ThrottlingConfig;
  faults?: FaultConfig;
  createFaults?: CreateFaultRule[];
  attachFaults?: AttachFaultRule[];
  snapshotFaults?: SnapshotFaultRule[];
  latency?: Partial<LatencyTable>;
  seed?: number;
  modificationWindowMs?: number;
}

const ZONE_IDS: Record<string, string> = { 'us-east-1': 'use1', 'us-west-2': 'usw2', 'eu-west-1': 'euw1' };

export function zoneInfo(region: string, zone: string | ZoneInfo, index: number): ZoneInfo {
  if (typeof zone !== 'string') return zone;
  const prefix = ZONE_IDS[region] ?? region.replace(/-/g, '').slice(0, 5);
  return { name: zone, id: `${prefix}-az${index + 1}` };
}
