import { join } from 'node:path';
import { accountParts, Ec2Account, everyPart, type AccountParts, type AccountSettings, type SimulatorShared } from './account-view.js';
import { checkAccountIds } from './accounts.js';
import type { BucketSpec } from './buckets.js';
import { systemClock, type Clock } from './clock.js';
import {
  DEFAULT_CREATE_FAULTS,
  DEFAULT_LATENCY,
  zoneInfo,
  type Ec2RuntimeConfig,
  type Ec2SimulatorOptions,
  type FaultConfig,
  type ThrottlingConfig,
} from './config.js';
import type { IamPrincipal } from '../../iam/evaluate.js';
import { Ec2Iam } from './iam.js';
import { seededRandom } from './random.js';
import type { Ec2Role } from './sts.js';

export type { Ec2Response } from './account-view.js';

/** The settings in force, as `GET /_sim/config` reports them. */
export interface Ec2EffectiveConfig {
  region: string;
  /** The further Regions held. */
  regions: string[];
  zones: { name: string; id: string }[];
  timeScale: number;
  throttling: { enabled: boolean; buckets: Record<string, BucketSpec> };
  faults: FaultConfig;
  createFaults: Ec2SimulatorOptions['createFaults'];
  attachFaults: Ec2SimulatorOptions['attachFaults'];
  snapshotFaults: Ec2SimulatorOptions['snapshotFaults'];
  latency: typeof DEFAULT_LATENCY;
  seed: number;
  modificationWindowMs: number;
}

/** EC2's rolling window for the four modifications of a volume. */
const MODIFICATION_WINDOW_MS = 24 * 60 * 60 * 1000;

/** The simulated account, unless the options name another. */
export const DEFAULT_ACCOUNT_ID = '123456789012';

/** Where an account other than the simulator's own keeps its state, under `stateDir`. */
export function accountStateDir(stateDir: string, accountId: string): string {
  return join(stateDir, 'accounts', accountId);
}

/** Where an account keeps its state of a further Region, under its own state directory. */
export function regionStateDir(accountDir: string, region: string): string {
  return join(accountDir, 'regions', region);
}

const REGION_NAME = /^[a-z]{2}(-[a-z]+)+-\d$/;

/** The further Regions: well-formed names, none twice, not the home Region. */
function checkRegions(home: string, regions: readonly string[] = []): string[] {
  const bad = regions.filter((r) => !REGION_NAME.test(r));
  if (bad.length) throw new Error(`EC2 simulator: not Region names: ${bad.map((r) => JSON.stringify(r)).join(', ')}`);
  const twice = regions.filter((r, n) => r === home || regions.indexOf(r) !== n);
  if (twice.length) throw new Error(`EC2 simulator: Region(s) given more than once (the home Region counts): ${[...new Set(twice)].join(', ')}`);
  return [...regions];
}

/**
 * The simulated EC2 of one Region (and of the further `regions` of the options): its own account (this object is that account's view) and
 * the further `accounts` of the options, each with its own resources, buckets and counters,
 * behind one endpoint and one STS. They share the clock, the zones, the time scale, the
 * faults and latencies; `configure` changes them for all.
 */
export class Ec2Simulator extends Ec2Account {
  private bucketOverrides: Record<string, BucketSpec>;
  private seed: number;

  constructor(options: Ec2SimulatorOptions = {}, clock: Clock = systemClock) {
    const ids = checkAccountIds(options.accountId ?? DEFAULT_ACCOUNT_ID, options.accounts);
    const region = options.region ?? 'us-east-1';
    const seed = options.seed ?? Date.now() >>> 0;
    const timeScale = checkScale(options.timeScale ?? 1);
    const throttling = throttlingOf(options.throttling);
    const settings: AccountSettings = {
      env: {
        clock,
        rng: seededRandom(seed),
        region,
        zones: (options.zones ?? ['a', 'b', 'c'].map((s) => `${region}${s}`)).map((z, n) => zoneInfo(region, z, n)),
        timeScale,
        latency: { ...DEFAULT_LATENCY, ...options.latency },
        createFaults: options.createFaults ?? [...DEFAULT_CREATE_FAULTS],
        attachFaults: options.attachFaults ?? [],
        snapshotFaults: options.snapshotFaults ?? [],
        attachmentSlots: options.attachmentSlots ?? 28,
        modificationWindowMs: options.modificationWindowMs ?? MODIFICATION_WINDOW_MS,
      },
      throttling: { enabled: throttling.enabled ?? true, buckets: throttling.buckets ?? {}, timeScale },
    };
    const iam = new Ec2Iam(options.iam, clock);
    const unheld = iam.administratorAccounts().filter((a) => !ids.includes(a));
    if (unheld.length) throw new Error(`EC2 simulator: iam.administrators name account(s) it does not hold: ${unheld.join(', ')}`);
    const shared: SimulatorShared = { clock, iam, faults: options.faults ?? {}, homeRegion: region, accounts: new Map(), regions: new Map() };
    const [own, ...others] = ids as [string, ...string[]];
    super(shared, own, accountParts(own, settings, options.stateDir));
    for (const id of others) new Ec2Account(shared, id, accountParts(id, settings, options.stateDir && accountStateDir(options.stateDir, id)));
    for (const further of checkRegions(region, options.regions)) {
      const inRegion: AccountSettings = {
        ...settings,
        env: { ...settings.env, region: further, zones: ['a', 'b', 'c'].map((s, n) => zoneInfo(further, `${further}${s}`, n)) },
      };
      for (const id of ids) {
        const dir = options.stateDir && regionStateDir(id === own ? options.stateDir : accountStateDir(options.stateDir, id), further);
        new Ec2Account(shared, id, accountParts(id, inRegion, dir));
      }
    }
    this.bucketOverrides = settings.throttling.buckets;
    this.seed = seed;
  }

  /** The accounts held: the simulator's own first. */
  accountIds(): string[] {
    return [...this.shared.accounts.keys()];
  }

  /** The view of one account; the simulator's own is the simulator itself. */
  account(accountId: string): Ec2Account {
    const found = this.shared.accounts.get(accountId);
    if (!found) throw new Error(`EC2 simulator: holds no account ${accountId} (it holds ${this.accountIds().join(', ')})`);
    return found.view;
  }

  /** A role STS AssumeRole may grant sessions of from now on (throws for a malformed or already held ARN). */
  addRole(roleArn: string, role: Ec2Role): void {
    this.shared.iam.addRole(roleArn, role);
  }

  /** Holds the calls signed with `accessKeyId` to the principal's policies, in its account (throws for a key in use). */
  addPrincipal(accessKeyId: string, principal: IamPrincipal): void {
    this.shared.iam.addPrincipal(accessKeyId, principal);
  }

  /** The Regions held: the home Region first. */
  regionNames(): string[] {
    return [this.shared.homeRegion, ...this.shared.regions.keys()];
  }

  /** Forgets every resource of every account in every Region, refills every bucket and clears every counter. */
  override reset(): void {
    for (const { view } of [...this.shared.accounts.values(), ...[...this.shared.regions.values()].flatMap((m) => [...m.values()])]) view.resetAccount();
  }

  setFaults(faults: FaultConfig): void {
    this.shared.faults = structuredClone(faults);
  }

  setTimeScale(scale: number): void {
    this.configure({ timeScale: scale });
  }

  setThrottling(throttling: boolean | ThrottlingConfig): void {
    this.configure({ throttling });
  }

  /** Changes, for every account, what may change at run time; transitions already scheduled keep their times. */
  configure(cfg: Ec2RuntimeConfig): Ec2EffectiveConfig {
    const scale = cfg.timeScale === undefined ? undefined : checkScale(cfg.timeScale);
    const t = cfg.throttling === undefined ? undefined : throttlingOf(cfg.throttling);
    if (t?.buckets !== undefined) this.bucketOverrides = { ...t.buckets };
    if (cfg.seed !== undefined) this.seed = cfg.seed;
    // One generator for every account, as at construction.
    const rng = cfg.seed === undefined ? undefined : seededRandom(cfg.seed);
    for (const parts of everyPart(this.shared)) {
      const { env } = parts.world;
      if (scale !== undefined) {
        parts.throttle.setScale(scale, this.clock.now());
        env.timeScale = scale;
      }
      if (t?.enabled !== undefined) parts.throttle.enabled = t.enabled;
      if (t?.buckets !== undefined) parts.throttle.setOverrides(this.bucketOverrides);
      if (cfg.createFaults !== undefined) env.createFaults = structuredClone(cfg.createFaults);
      if (cfg.attachFaults !== undefined) env.attachFaults = structuredClone(cfg.attachFaults);
      if (cfg.snapshotFaults !== undefined) env.snapshotFaults = structuredClone(cfg.snapshotFaults);
      if (cfg.latency !== undefined) env.latency = { ...env.latency, ...cfg.latency };
      if (cfg.modificationWindowMs !== undefined) env.modificationWindowMs = cfg.modificationWindowMs;
      if (rng) env.rng = rng;
    }
    if (cfg.faults !== undefined) this.setFaults(cfg.faults);
    return this.config();
  }

  config(): Ec2EffectiveConfig {
    const { world, throttle } = this.ownParts();
    const env = world.env;
    return structuredClone({
      region: env.region,
      regions: [...this.shared.regions.keys()],
      zones: [...env.zones],
      timeScale: env.timeScale,
      throttling: { enabled: throttle.enabled, buckets: this.bucketOverrides },
      faults: this.shared.faults,
      createFaults: env.createFaults,
      attachFaults: env.attachFaults,
      snapshotFaults: env.snapshotFaults,
      latency: env.latency,
      seed: this.seed,
      modificationWindowMs: env.modificationWindowMs,
    });
  }

  /** Writes every account's pending state to disk now (when persisting). */
  override flush(): void {
    for (const parts of everyPart(this.shared)) parts.stateFile?.flush();
  }

  private ownParts(): AccountParts {
    return (this.shared.accounts.get(this.accountId) as { parts: AccountParts }).parts;
  }
}

function checkScale(scale: number): number {
  if (!Number.isFinite(scale) || scale <= 0) throw new Error(`timeScale must be a positive number, got ${scale}`);
  return scale;
}

function throttlingOf(t: boolean | ThrottlingConfig | undefined): ThrottlingConfig {
  if (t === undefined) return { enabled: true };
  if (typeof t === 'boolean') return { enabled: t };
  return t;
}
