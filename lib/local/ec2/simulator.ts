import { randomUUID } from 'node:crypto';
import { ACTIONS } from './actions.js';
import { bucketName, Throttle, type BucketSpec } from './buckets.js';
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
import { Ec2Error, ec2Errors, statusForCode } from './errors.js';
import { Ec2Iam, type Ec2Caller } from './iam.js';
import { decideFaults } from './faults.js';
import { runInstances, terminateInstances, type RunInstancesRequest } from './instances.js';
import { seedSnapshots, seedVolumes, type SeedSnapshotRequest, type SeedVolumeRequest } from './seed.js';
import type { FastSnapshotRestore, Instance, Snapshot, Volume, WorldState } from './model.js';
import { StateFile } from './persistence.js';
import { QueryParams } from './query.js';
import { seededRandom } from './random.js';
import { StatsRecorder, type Ec2SimStats } from './stats.js';
import { assumeRoleXml, StsError, stsErrorXml, STS_VERSION } from './sts.js';
import { World } from './world.js';
import { errorXml, responseXml } from './xml.js';

/** An EC2 answer, ready for HTTP. */
export interface Ec2Response {
  status: number;
  body: string;
  requestId: string;
  action: string;
  /** The error code, when it is an error. */
  code?: string;
}

/** The settings in force, as `GET /_sim/config` reports them. */
export interface Ec2EffectiveConfig {
  region: string;
  zones: { name: string; id: string }[];
  timeScale: number;
  throttling: { enabled: boolean; buckets: Record<string, BucketSpec> };
  faults: FaultConfig;
  createFaults: Ec2SimulatorOptions['createFaults'];
  attachFaults: Ec2SimulatorOptions['attachFaults'];
  snapshotFaults: Ec2SimulatorOptions['snapshotFaults'];
  latency: typeof DEFAULT_LATENCY;
  seed: number;
  modifyCooldownMs: number;
}

const SIX_HOURS = 6 * 60 * 60 * 1000;

/** The simulated account, unless the options name another. */
export const DEFAULT_ACCOUNT_ID = '123456789012';

/**
 * The simulated EC2 of one account and Region, without HTTP: `call` is what the server runs
 * for each request, and the other methods give tests and the local stack direct access.
 */
export class Ec2Simulator {
  readonly clock: Clock;
  private readonly world: World;
  private readonly throttle: Throttle;
  private readonly stats: StatsRecorder;
  private readonly stateFile?: StateFile;
  private faults: FaultConfig;
  private bucketOverrides: Record<string, BucketSpec>;
  private seed: number;
  private readonly iam: Ec2Iam;

  constructor(options: Ec2SimulatorOptions = {}, clock: Clock = systemClock) {
    this.clock = clock;
    const region = options.region ?? 'us-east-1';
    this.seed = options.seed ?? Date.now() >>> 0;
    const zones = (options.zones ?? ['a', 'b', 'c'].map((s) => `${region}${s}`)).map((z, n) => zoneInfo(region, z, n));
    const timeScale = checkScale(options.timeScale ?? 1);
    this.world = new World({
      clock,
      rng: seededRandom(this.seed),
      region,
      accountId: options.accountId ?? DEFAULT_ACCOUNT_ID,
      zones,
      timeScale,
      latency: { ...DEFAULT_LATENCY, ...options.latency },
      createFaults: options.createFaults ?? [...DEFAULT_CREATE_FAULTS],
      attachFaults: options.attachFaults ?? [],
      snapshotFaults: options.snapshotFaults ?? [],
      attachmentSlots: options.attachmentSlots ?? 28,
      modifyCooldownMs: options.modifyCooldownMs ?? SIX_HOURS,
    });
    const throttling = throttlingOf(options.throttling);
    this.bucketOverrides = throttling.buckets ?? {};
    this.throttle = new Throttle(throttling.enabled ?? true, this.bucketOverrides, timeScale);
    this.faults = options.faults ?? {};
    this.iam = new Ec2Iam(options.iam, clock);
    this.stats = new StatsRecorder(() => clock.now());
    if (options.stateDir) {
      const file = new StateFile(options.stateDir, () => this.world.snapshot());
      const saved = file.load();
      if (saved) this.world.restore(saved);
      this.world.onChange(() => file.changed());
      this.stateFile = file;
    }
  }

  /**
   * Answers one EC2 Query request: throttling, injected faults, IAM (for a caller whose access
   * key names a principal), then the action itself.
   */
  async call(input: QueryParams | Record<string, string>, caller?: Ec2Caller): Promise<Ec2Response> {
    const params = input instanceof QueryParams ? input : QueryParams.from(input);
    const requestId = randomUUID();
    const action = params.str('Action') ?? '';
    const answer = (err: Ec2Error, throttled = false): Ec2Response => {
      this.stats.record(action || '(none)', { code: err.code, throttled });
      return { status: err.status, body: errorXml(err.code, err.message, requestId), requestId, action, code: err.code };
    };
    if (!action) return answer(new Ec2Error('MissingAction', 'The request must contain the parameter Action'));
    if (params.str('Version') === STS_VERSION) return this.sts(action, params, requestId, caller);
    const handler = Object.hasOwn(ACTIONS, action) ? ACTIONS[action] : undefined;
    if (!handler) {
      return answer(new Ec2Error('InvalidAction', `The action ${action} is not valid for this web service.`));
    }
    this.world.advance();
    const bucket = bucketName(action, params.entries().map(([k]) => k));
    if (!this.throttle.take(bucket, this.clock.now())) return answer(ec2Errors.throttled(), true);

    const fault = decideFaults(this.faults, action, this.world.env.rng);
    if (fault.delayMs > 0) {
      await this.clock.sleep(this.world.wall(fault.delayMs));
      this.world.advance();
    }
    const injected = fault.error
      ? new Ec2Error(
          fault.error.code,
          fault.error.message ?? (fault.error.code === 'RequestLimitExceeded' ? 'Request limit exceeded.' : `Injected ${fault.error.code}.`),
          fault.error.status ?? statusForCode(fault.error.code),
        )
      : undefined;
    if (injected && fault.error?.phase !== 'after') return answer(injected);
    try {
      await this.iam.check(caller, action, params, this.world);
    } catch (err) {
      if (err instanceof Ec2Error) return answer(err);
      throw err;
    }
    if (params.bool('DryRun')) return answer(ec2Errors.dryRun());

    let body: string;
    try {
      body = responseXml(action, requestId, handler(this.world, params));
    } catch (err) {
      if (err instanceof Ec2Error) return answer(err);
      console.error(`ec2 simulator: ${action} failed unexpectedly:`, err);
      return answer(ec2Errors.internal());
    }
    if (injected) return answer(injected);
    this.stats.record(action, {});
    return { status: 200, body, requestId, action };
  }

  /** STS on the same endpoint (told apart by its API version): AssumeRole only. */
  private sts(action: string, params: QueryParams, requestId: string, caller: Ec2Caller | undefined): Ec2Response {
    try {
      if (action !== 'AssumeRole') throw new StsError('InvalidAction', `The simulator's STS does not implement ${action}; it serves AssumeRole only.`);
      const session = this.iam.assumeRole(caller, params);
      this.stats.record(action, {});
      return { status: 200, body: assumeRoleXml(session, requestId), requestId, action };
    } catch (err) {
      if (!(err instanceof StsError)) throw err;
      this.stats.record(action, { code: err.code });
      return { status: err.status, body: stsErrorXml(err, requestId), requestId, action, code: err.code };
    }
  }

  /**
   * Starts an instance in-process (running at once unless `running: false`), for setting up
   * the nodes of a local cluster without going through RunInstances.
   */
  runInstance(options: Partial<RunInstancesRequest> = {}): Instance {
    this.world.advance();
    const [instance] = runInstances(this.world, {
      imageId: 'ami-00000000000000000',
      instanceType: 'm5.large',
      running: true,
      ...options,
      count: 1,
    });
    return structuredClone(instance as Instance);
  }

  /** Puts `available` volumes into the account as they are described (see seed.ts): disks volhook did not make. */
  seedVolumes(request: SeedVolumeRequest): Volume[] {
    this.world.advance();
    return seedVolumes(this.world, request);
  }

  /** Puts `completed` snapshots into the account as they are described (see seed.ts). */
  seedSnapshots(request: SeedSnapshotRequest): Snapshot[] {
    this.world.advance();
    return seedSnapshots(this.world, request);
  }

  terminateInstance(instanceId: string): void {
    this.world.advance();
    terminateInstances(this.world, [instanceId]);
  }

  volumes(): Volume[] {
    this.world.advance();
    return structuredClone([...this.world.volumes.values()]);
  }

  volume(id: string): Volume | undefined {
    this.world.advance();
    const v = this.world.volumes.get(id);
    return v && structuredClone(v);
  }

  snapshots(): Snapshot[] {
    this.world.advance();
    return structuredClone([...this.world.snapshots.values()]);
  }

  snapshot(id: string): Snapshot | undefined {
    this.world.advance();
    const s = this.world.snapshots.get(id);
    return s && structuredClone(s);
  }

  fastSnapshotRestores(): FastSnapshotRestore[] {
    this.world.advance();
    return structuredClone([...this.world.fastRestores.values()]);
  }

  instances(): Instance[] {
    this.world.advance();
    return structuredClone([...this.world.instances.values()]);
  }

  instance(id: string): Instance | undefined {
    this.world.advance();
    const i = this.world.instances.get(id);
    return i && structuredClone(i);
  }

  /** Everything the simulator holds, including transitions still due. */
  state(): WorldState {
    this.world.advance();
    return this.world.snapshot();
  }

  getStats(): Ec2SimStats {
    return this.stats.snapshot();
  }

  resetStats(): void {
    this.stats.reset();
  }

  /** Forgets every resource, refills every bucket and clears the counters. */
  reset(): void {
    this.world.clear();
    this.throttle.reset();
    this.stats.reset();
    this.world.changed();
  }

  setFaults(faults: FaultConfig): void {
    this.faults = structuredClone(faults);
  }

  setTimeScale(scale: number): void {
    this.configure({ timeScale: scale });
  }

  setThrottling(throttling: boolean | ThrottlingConfig): void {
    this.configure({ throttling });
  }

  /** Changes what may change at run time; transitions already scheduled keep their times. */
  configure(cfg: Ec2RuntimeConfig): Ec2EffectiveConfig {
    const env = this.world.env;
    if (cfg.timeScale !== undefined) {
      const scale = checkScale(cfg.timeScale);
      this.throttle.setScale(scale, this.clock.now());
      env.timeScale = scale;
    }
    if (cfg.throttling !== undefined) {
      const t = throttlingOf(cfg.throttling);
      if (t.enabled !== undefined) this.throttle.enabled = t.enabled;
      if (t.buckets !== undefined) {
        this.bucketOverrides = { ...t.buckets };
        this.throttle.setOverrides(this.bucketOverrides);
      }
    }
    if (cfg.faults !== undefined) this.setFaults(cfg.faults);
    if (cfg.createFaults !== undefined) env.createFaults = structuredClone(cfg.createFaults);
    if (cfg.attachFaults !== undefined) env.attachFaults = structuredClone(cfg.attachFaults);
    if (cfg.snapshotFaults !== undefined) env.snapshotFaults = structuredClone(cfg.snapshotFaults);
    if (cfg.latency !== undefined) env.latency = { ...env.latency, ...cfg.latency };
    if (cfg.modifyCooldownMs !== undefined) env.modifyCooldownMs = cfg.modifyCooldownMs;
    if (cfg.seed !== undefined) {
      this.seed = cfg.seed;
      env.rng = seededRandom(cfg.seed);
    }
    return this.config();
  }

  config(): Ec2EffectiveConfig {
    const env = this.world.env;
    return structuredClone({
      region: env.region,
      zones: [...env.zones],
      timeScale: env.timeScale,
      throttling: { enabled: this.throttle.enabled, buckets: this.bucketOverrides },
      faults: this.faults,
      createFaults: env.createFaults,
      attachFaults: env.attachFaults,
      snapshotFaults: env.snapshotFaults,
      latency: env.latency,
      seed: this.seed,
      modifyCooldownMs: env.modifyCooldownMs,
    });
  }

  /** Token levels of the buckets used so far. */
  buckets(): Record<string, { tokens: number } & BucketSpec> {
    return this.throttle.levels(this.clock.now());
  }

  /** Writes pending state to disk now (when persisting). */
  flush(): void {
    this.stateFile?.flush();
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
