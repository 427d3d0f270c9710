import { randomUUID } from 'node:crypto';
import { routeCall } from './accounts.js';
import { ACTIONS, DRY_RUN_CHECKS } from './actions.js';
import { bucketName, Throttle, type BucketSpec } from './buckets.js';
import type { Clock } from './clock.js';
import type { FaultConfig } from './config.js';
import { Ec2Error, ec2Errors, statusForCode } from './errors.js';
import { decideFaults } from './faults.js';
import type { Ec2Caller, Ec2Iam } from './iam.js';
import { runInstances, terminateInstances, type RunInstancesRequest } from './instances.js';
import type { FastSnapshotRestore, Instance, Snapshot, Volume, WorldState } from './model.js';
import { StateFile } from './persistence.js';
import { QueryParams } from './query.js';
import { seedSnapshots, seedVolumes, type SeedSnapshotRequest, type SeedVolumeRequest } from './seed.js';
import { StatsRecorder, type Ec2SimStats } from './stats.js';
import { assumeRoleXml, StsError, stsErrorXml, STS_VERSION } from './sts.js';
import { World, type WorldEnv } from './world.js';
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

/** What is one account's alone: its resources (and ids), its token buckets, its counters, its state file. */
export interface AccountParts {
  world: World;
  throttle: Throttle;
  stats: StatsRecorder;
  stateFile?: StateFile;
}

/** What the accounts of one simulator share: the clock, IAM and STS, the injected faults; and each other. */
export interface SimulatorShared {
  readonly clock: Clock;
  readonly iam: Ec2Iam;
  faults: FaultConfig;
  /** The Region `accounts` are in. */
  readonly homeRegion: string;
  /** Every account held, the simulator's own first, in the home Region. */
  readonly accounts: Map<string, { view: Ec2Account; parts: AccountParts }>;
  /** Every further Region held, each with every account again: Region → account → its view there. */
  readonly regions: Map<string, Map<string, { view: Ec2Account; parts: AccountParts }>>;
}

/** Every account's parts in every Region held. */
export function everyPart(shared: SimulatorShared): AccountParts[] {
  return [...shared.accounts.values(), ...[...shared.regions.values()].flatMap((m) => [...m.values()])].map((e) => e.parts);
}

/**
 * The Region a call is served in: the one it is signed for, when the simulator holds it. With
 * further Regions held, any other is EC2's AuthFailure naming it; without, the home Region
 * serves every call, as before Regions existed.
 */
export function routeRegion(signed: string | undefined, shared: SimulatorShared): string {
  if (signed === undefined || signed === shared.homeRegion || shared.regions.size === 0) return shared.homeRegion;
  if (shared.regions.has(signed)) return signed;
  const held = [shared.homeRegion, ...shared.regions.keys()];
  throw new Ec2Error('AuthFailure', `Credential should be scoped to a valid region, not '${signed}': this simulator holds ${held.join(', ')}`, 401);
}

/** The settings an account starts with; the same for every account of a simulator. */
export interface AccountSettings {
  env: Omit<WorldEnv, 'accountId'>;
  throttling: { enabled: boolean; buckets: Record<string, BucketSpec>; timeScale: number };
}

/** A new account's parts, loading its state from `stateDir` when one is given. */
export function accountParts(accountId: string, settings: AccountSettings, stateDir?: string): AccountParts {
  const { env, throttling } = settings;
  const world = new World({ ...env, latency: { ...env.latency }, accountId });
  const parts: AccountParts = {
    world,
    throttle: new Throttle(throttling.enabled, throttling.buckets, throttling.timeScale),
    stats: new StatsRecorder(() => env.clock.now()),
  };
  if (stateDir) {
    const file = new StateFile(stateDir, () => world.snapshot());
    const saved = file.load();
    if (saved) world.restore(saved);
    world.onChange(() => file.changed());
    parts.stateFile = file;
  }
  return parts;
}

/**
 * One account of the simulated EC2, without HTTP: `call` is what the server runs for each
 * request (served in the account its credentials belong to, this one for credentials that
 * name none), and the other methods give tests and the local stack direct access.
 */
export class Ec2Account {
  readonly clock: Clock;
  private readonly world: World;
  private readonly throttle: Throttle;
  private readonly stats: StatsRecorder;
  private readonly stateFile: StateFile | undefined;

  /** The Region this view is in. */
  readonly region: string;

  constructor(
    protected readonly shared: SimulatorShared,
    readonly accountId: string,
    parts: AccountParts,
  ) {
    this.clock = shared.clock;
    this.world = parts.world;
    this.region = parts.world.env.region;
    this.throttle = parts.throttle;
    this.stats = parts.stats;
    this.stateFile = parts.stateFile;
    if (this.region === shared.homeRegion) shared.accounts.set(accountId, { view: this, parts });
    else {
      const inRegion = shared.regions.get(this.region) ?? new Map<string, { view: Ec2Account; parts: AccountParts }>();
      inRegion.set(accountId, { view: this, parts });
      shared.regions.set(this.region, inRegion);
    }
    // Time moves lazily in each world: the other Region's is brought up to now before it is read.
    parts.world.env.otherRegion = (region) => {
      const other = this.viewIn(region)?.world;
      other?.advance();
      return other;
    };
  }

  private viewIn(region: string): Ec2Account | undefined {
    if (region === this.shared.homeRegion) return this.shared.accounts.get(this.accountId)?.view;
    return this.shared.regions.get(region)?.get(this.accountId)?.view;
  }

  /** Whether the simulator holds `region` (its home Region, or one configured beside it). */
  holdsRegion(region: string): boolean {
    return this.viewIn(region) !== undefined;
  }

  /** This account in another Region the simulator holds (throws for one it does not). */
  inRegion(region: string): Ec2Account {
    const view = this.viewIn(region);
    if (!view) throw new Error(`EC2 simulator: holds no Region ${region} (it holds ${[this.shared.homeRegion, ...this.shared.regions.keys()].join(', ')})`);
    return view;
  }

  /**
   * Answers one EC2 Query request in the caller's account: throttling, injected faults, IAM
   * (for a caller whose access key names a principal or a session), then the action itself.
   */
  async call(input: QueryParams | Record<string, string>, caller?: Ec2Caller): Promise<Ec2Response> {
    const params = input instanceof QueryParams ? input : QueryParams.from(input);
    const requestId = randomUUID();
    const action = params.str('Action') ?? '';
    if (!action) return this.refuse(action, requestId, new Ec2Error('MissingAction', 'The request must contain the parameter Action'));
    if (params.str('Version') === STS_VERSION) return this.sts(action, params, requestId, caller);
    let target: Ec2Account;
    try {
      const held = [...this.shared.accounts.keys()];
      const account = routeCall(this.shared.iam.accountOf(caller?.accessKeyId), this.accountId, held);
      // A call signed for no Region is served in the Region of the view called.
      const region = caller?.region === undefined ? this.region : routeRegion(caller.region, this.shared);
      target = (this.shared.accounts.get(account) as { view: Ec2Account }).view.inRegion(region);
    } catch (err) {
      if (err instanceof Ec2Error) return this.refuse(action, requestId, err);
      throw err;
    }
    return target.serve(action, params, requestId, caller);
  }

  private refuse(action: string, requestId: string, err: Ec2Error, throttled = false): Ec2Response {
    this.stats.record(action || '(none)', { code: err.code, throttled });
    return { status: err.status, body: errorXml(err.code, err.message, requestId), requestId, action, code: err.code };
  }

  /** The request, in this account. */
  private async serve(action: string, params: QueryParams, requestId: string, caller: Ec2Caller | undefined): Promise<Ec2Response> {
    const answer = (err: Ec2Error, throttled = false) => this.refuse(action, requestId, err, throttled);
    const handler = Object.hasOwn(ACTIONS, action) ? ACTIONS[action] : undefined;
    if (!handler) {
      return answer(new Ec2Error('InvalidAction', `The action ${action} is not valid for this web service (the EC2 simulator does not implement it).`));
    }
    this.world.advance();
    const bucket = bucketName(action, params.entries().map(([k]) => k));
    if (!this.throttle.take(bucket, this.clock.now())) return answer(ec2Errors.throttled(), true);

    const fault = decideFaults(this.shared.faults, action, this.world.env.rng);
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
      await this.shared.iam.check(caller, action, params, this.world);
    } catch (err) {
      if (err instanceof Ec2Error) return answer(err);
      throw err;
    }
    if (params.bool('DryRun')) {
      try {
        if (Object.hasOwn(DRY_RUN_CHECKS, action)) DRY_RUN_CHECKS[action]?.(this.world, params);
      } catch (err) {
        if (err instanceof Ec2Error) return answer(err);
        throw err;
      }
      return answer(ec2Errors.dryRun());
    }

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

  /** STS on the same endpoint (told apart by its API version): AssumeRole only. One STS for every account. */
  private sts(action: string, params: QueryParams, requestId: string, caller: Ec2Caller | undefined): Ec2Response {
    try {
      if (action !== 'AssumeRole') throw new StsError('InvalidAction', `The simulator's STS does not implement ${action}; it serves AssumeRole only.`);
      const session = this.shared.iam.assumeRole(caller, params, [...this.shared.accounts.keys()]);
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

  /** Everything the account holds, including transitions still due. */
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

  /** Forgets every resource of this account (in this view's Region), refills its buckets and clears its counters. */
  resetAccount(): void {
    this.world.clear();
    this.throttle.reset();
    this.stats.reset();
    this.world.changed();
  }

  /** {@link resetAccount}; the simulator itself resets every account. */
  reset(): void {
    this.resetAccount();
  }

  /** Token levels of the account's buckets used so far. */
  buckets(): Record<string, { tokens: number } & BucketSpec> {
    return this.throttle.levels(this.clock.now());
  }

  /** Writes this account's pending state to disk now (when persisting); the simulator's flushes every account. */
  flush(): void {
    this.stateFile?.flush();
  }
}
