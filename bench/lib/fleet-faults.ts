/**
 * Scenario (d): a fleet under load and faults at once. `clusters` local Kubernetes clusters
 * (API, controllers, forwarders), each `perCluster` WaitForFirstConsumer claims with a pod, all
 * created at once against `backends` backend processes behind one URL that share the rate
 * budget and the replay store in DynamoDB (moto_server), one simulated EC2 account at AWS's
 * token buckets and latencies (÷ and × the time scale). The first cluster runs two forwarder
 * processes with leader election, the second's forwarder reaches its API through a proxy that
 * can expire its watches: the same with faults or without. With `faults`, seeded and counted:
 *
 * - EC2 answers a share of the calls InternalError or Unavailable (nothing done), loses the
 *   answer of a share of the mutations it carried out (the connection cut), and leaves a share
 *   of the attachments stuck `attaching`;
 * - the first cluster's forwarder leader is SIGKILLed a fifth of the way in (and a replica
 *   started again, as its Deployment would);
 * - a backend process is SIGKILLed a third of the way in, and a fresh one takes its place;
 * - half way, the second cluster's forwarder has its claims watch ended with 410 (Expired).
 *
 * Then every claim and pod is deleted. The crash explorer's judges (test/crash) watch every EC2
 * call (bench/lib/ec2-judge.ts) and read each cluster at the end: leaked, duplicated, wrongly
 * deleted, wrongly detached, attached without a VolumeAttachment, not converged.
 */
import { startForwarder, type Forwarder } from '../../lib/forwarder/index.js';
import { DEFAULT_CADENCE } from '../../lib/forwarder/queue.js';
import { kubeConfigFor } from '../../lib/kube/index.js';
import { systemClock, type Ec2SimStats, type FaultConfig } from '../../lib/local/ec2/index.js';
import type { LocalStack } from '../../lib/local/stack/index.js';
import { finalVerdict, unsettled, zeroCounts, type Counts, type TrackedClaim } from '../../test/crash/checks.js';
import type { ClassSpec, JudgedWorld } from '../../test/crash/world.js';
import { until } from './bench-stack.js';
import { Diagnostics } from './diagnostics.js';
import { startEc2Judge } from './ec2-judge.js';
import { createTables, killChild, startBackendProcess, startForwarderProcess, startMotoServer, startRoundRobin, stopChild, sumStats, type BackendProcess, type BackendStats, type ForwarderProcess, type RoundRobin } from './fleet-processes.js';
import { backendEnvironment, nodesRunning, REGION, runCleanups, startClusterStacks, startFleetBase, type Cleanups } from './fleet-setup.js';
import { say } from './format.js';
import { BENCH_NAMESPACE, claim, podFor } from './manifests.js';
import { tokenBucketFloorSeconds } from './stats.js';
import { BurstTracker, type ClaimTimes } from './tracker.js';
import { startWatchExpiry, type WatchExpiry } from './watch-expiry.js';

export interface FleetOptions {
  clusters: number;
  perCluster: number;
  backends: number;
  timeScale: number;
  seed: number;
  faults: boolean;
  /** Other shares than {@link FAULT_RATES}. */
  rates?: Partial<FaultRates>;
  /** Bound on the burst, and again on the deletion. */
  timeoutMs: number;
  progressEveryMs?: number;
  /** Progress lines; default stdout. */
  log?: (line: string) => void;
}

/** The share of calls each injected fault hits, with `faults`. */
export interface FaultRates {
  refused: number;
  lostAnswer: number;
  stuckAttach: number;
}

export const FAULT_RATES: FaultRates = {
  /** InternalError (500) or Unavailable (503): refused, nothing done. */
  refused: 0.02,
  /** The answer of a mutation EC2 carried out, lost. */
  lostAnswer: 0.02,
  /** An attachment that never leaves `attaching`. */
  stuckAttach: 0.005,
};

/** When each disruption happens: at this share of the claims Bound and attached. */
const DISRUPT_AT = { forwarderLeader: 0.2, backend: 0.35, watch: 0.5 } as const;

/** The class every bench claim gets (the stack's default): gp3, WaitForFirstConsumer, Delete. */
const DEFAULT_CLASS: ClassSpec = { name: 'gp3 (default)', binding: 'WaitForFirstConsumer', policy: 'Delete' };

export interface Disruption {
  what: string;
  /** Seconds after the first claim was created. */
  atSeconds: number;
}

export interface FleetResult {
  options: Omit<FleetOptions, 'log' | 'rates'>;
  rates: FaultRates | undefined;
  n: number;
  floorSeconds: number;
  /** First create to the last claim Bound and attached; undefined if not all were. */
  readyMs: number | undefined;
  /**
   * First create to the last claim Bound and attached among those whose volume was never stuck
   * `attaching` (each stuck one is given up early on EC2's evidence, or after the driver's
   * 90 s ÷ the time scale, and attached again).
   */
  readyUnstuckMs: number | undefined;
  /** Seconds after the first create at which each stuck attachment began, in order. */
  stuckAtSeconds: number[];
  /** First create to everything settled: pods Running, every VolumeAttachment attached in EC2. */
  settledMs: number | undefined;
  /** From the deletion of everything to nothing left. */
  deletedMs: number | undefined;
  claims: Array<{ boundMs?: number; attachedMs?: number }>;
  /** EC2 as the simulator counted it, burst and deletion. */
  ec2: Ec2SimStats;
  backendStats: BackendStats;
  /** Reconcile (and check) requests the backends were sent. */
  backendRequests: number;
  /** The faults injected, by kind: EC2's refusals by code, lost answers by action, attachments left stuck, watch requests answered 410. */
  faults: { refused: Record<string, number>; lostAnswers: Record<string, number>; stuckAttachments: number; watchesExpired: number };
  /** Stuck attachments given up (detached to be attached again); of them, before the driver's 90 s (÷ the time scale). */
  stuckGivenUp: { all: number; early: number };
  disruptions: Disruption[];
  counts: Counts;
  findings: string[];
}

const TABLES = { budget: 'volhook-bench-budget', replay: 'volhook-bench-replay', reports: 'volhook-bench-reports' };
const LEASE = { namespace: 'volhook-system', name: 'volhook-forwarder' };

const INJECTED_CODES = ['InternalError', 'Unavailable'] as const;

/** EC2's refusals, as configured: each action a share of its calls, InternalError or Unavailable. */
function refusals(rate: number): FaultConfig {
  const internal = { rate, code: INJECTED_CODES[0] };
  const unavailable = { rate, code: INJECTED_CODES[1], status: 503 };
  return {
    CreateVolume: internal,
    AttachVolume: [internal],
    DetachVolume: unavailable,
    DeleteVolume: internal,
    DescribeVolumes: unavailable,
    DescribeInstances: internal,
  };
}

export async function runFleet(options: FleetOptions): Promise<FleetResult> {
  const log = options.log ?? say;
  const cleanups: Cleanups = [];
  const diagnostics = new Diagnostics();
  try {
    const base = await startFleetBase({ prefix: 'fleet', clusters: options.clusters, seed: options.seed, timeScale: options.timeScale }, cleanups);
    const { sim, clusterIds } = base;

    const moto = await startMotoServer();
    cleanups.push(() => moto.stop());
    await createTables(moto.url, REGION, Object.values(TABLES));

    // The stacks first, with no forwarder yet: the judge needs their stores, the backends its URL.
    const stacks = await startClusterStacks(base, { pods: clusterIds.map(() => options.perCluster), onControllerError: diagnostics.onControllerError, logger: diagnostics.logger }, cleanups);
    const worlds: JudgedWorld[] = stacks.map((s) => ({ clusterId: s.clusterId, sim: sim.sim, store: s.store, nodes: s.nodes, clock: systemClock }));
    const judge = await startEc2Judge(sim, worlds, { seed: options.seed, lossRate: 0, timeScale: options.timeScale });
    cleanups.push(() => judge.stop());

    const env = backendEnvironment(base, { ec2Endpoint: judge.url, timeScale: options.timeScale, tables: { endpoint: moto.url, ...TABLES } });
    const backends: BackendProcess[] = await Promise.all(Array.from({ length: options.backends }, () => startBackendProcess(env)));
    cleanups.push(() => Promise.all(backends.map((b) => b.stop())).then(() => undefined));
    const front = await startRoundRobin(backends.map((b) => b.url));
    cleanups.push(() => front.stop());

    // Forwarders, the same with faults or without: the first cluster two processes on one Lease,
    // the second in-process behind a proxy that can expire its watches, the others in-process.
    // The send cadence is set against EC2's latencies: it shrinks with them (see forwarder-process.ts).
    const cadenceMs = Math.round(DEFAULT_CADENCE.gridMs / options.timeScale);
    const forwarderConfig = (stack: LocalStack, kubeServer: string) => ({ apiUrl: front.url, clusterId: stack.clusterId, secret: stack.secret, kubeServer, port: 0, listenHost: '127.0.0.1', cadenceMs });
    const replicas: ForwarderProcess[] = [];
    const inProcess: Forwarder[] = [];
    let watchExpiry: WatchExpiry | undefined;
    cleanups.push(() => Promise.all([...replicas.map((r) => {
            r.stopping = true;
            return stopChild(r.child);
          }), ...inProcess.map((f) => f.stop())]).then(() => undefined));
    for (const [c, stack] of stacks.entries()) {
      if (c === 0) {
        stack.store.create('namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: LEASE.namespace } });
        for (const identity of ['replica-1', 'replica-2']) replicas.push(startForwarderProcess({ apiUrl: front.url, stack, cadenceMs, leader: { identity, namespace: LEASE.namespace }, log: (line) => log(`[d] ${line}`) }));
        continue;
      }
      let kubeServer = stack.urls.kube;
      if (c === 1) {
        watchExpiry = await startWatchExpiry(stack.urls.kube);
        cleanups.push(() => watchExpiry?.stop());
        kubeServer = watchExpiry.url;
      }
      inProcess.push(await startForwarder(forwarderConfig(stack, kubeServer), { kubeConfig: kubeConfigFor({ server: kubeServer }), logger: diagnostics.logger }));
    }
    await until(() => nodesRunning(base, stacks), 120_000, 'node instances running');
    await until(() => inProcess.every((f) => f.ready()), 60_000, 'forwarders synced');
    if (replicas.length > 0) await until(() => leaderOf(stacks[0]!) !== undefined, 60_000, 'a forwarder leader');

    const rates = { ...FAULT_RATES, ...options.rates };
    if (options.faults) {
      sim.sim.configure({ faults: refusals(rates.refused), attachFaults: [{ rate: rates.stuckAttach, outcome: 'stuck' }] });
      judge.setLossRate(rates.lostAnswer);
    }
    sim.sim.resetStats();
    const statsBefore = sumStats(await Promise.all(backends.map((b) => b.stats())));
    const requestsBefore = front.requests;

    const n = options.perCluster * options.clusters;
    const trackers = stacks.map((s) => new BurstTracker(s.store, BENCH_NAMESPACE));
    cleanups.push(() => trackers.forEach((t) => t.stop()));
    const tracked: TrackedClaim[][] = stacks.map(() => []);
    diagnostics.start();
    const t0 = performance.now();
    const at = () => (performance.now() - t0) / 1000;
    for (let i = 0; i < options.perCluster; i++) {
      for (const [c, stack] of stacks.entries()) {
        const name = `fleet-${String(i).padStart(5, '0')}`;
        trackers[c]!.expect(name, name);
        const made = stack.store.create('persistentvolumeclaims', claim(name));
        tracked[c]!.push({ name, class: DEFAULT_CLASS, uid: made.metadata.uid, deleted: false });
        stack.store.create('pods', podFor(name, name, stack.nodes[i % stack.nodes.length]!.name));
      }
    }

    const disruptions: Disruption[] = [];
    const retiredStats: BackendStats[] = [];
    const pendingDisruptions: Array<{ share: number; run: () => Promise<string> }> = options.faults
      ? [
          {
            share: DISRUPT_AT.forwarderLeader,
            run: async () => {
              const holder = leaderOf(stacks[0]!);
              const leader = replicas.find((r) => r.leader?.identity === holder);
              if (!leader) return `no forwarder leader of ${stacks[0]!.clusterId} to kill (holder ${holder ?? 'none'})`;
              await killChild(leader.child);
              replicas.push(startForwarderProcess({ apiUrl: front.url, stack: stacks[0]!, cadenceMs, leader: { identity: `${leader.leader?.identity}-restarted`, namespace: LEASE.namespace }, log: (line) => log(`[d] ${line}`) }));
              return `SIGKILL forwarder leader ${leader.leader?.identity} of ${stacks[0]!.clusterId}; a new replica started`;
            },
          },
          {
            share: DISRUPT_AT.backend,
            run: async () => {
              const victim = backends[0]!;
              retiredStats.push(await victim.stats().catch(() => ({})));
              await victim.kill();
              const fresh = await startBackendProcess(env);
              backends[0] = fresh;
              front.replace(0, fresh.url);
              return `SIGKILL backend process 1 of ${options.backends}; a fresh one took its place`;
            },
          },
          {
            share: DISRUPT_AT.watch,
            run: async () => `expired ${watchExpiry?.expire('persistentvolumeclaims') ?? 0} claims watch stream(s) of ${stacks[1]?.clusterId ?? '?'}'s forwarder (410)`,
          },
        ]
      : [];

    const counts = () => trackers.reduce((sum, t) => sum + t.counts().ready, 0);
    const every = options.progressEveryMs ?? 10_000;
    let next = every;
    const progress = async (phase: string, line: () => string) => {
      if (at() * 1000 < next) return;
      next += every;
      const live = await Promise.all(backends.map((b) => b.stats().catch(() => ({}) as BackendStats)));
      const refused = live.reduce((n, stats) => n + Object.values(stats).reduce((m, a) => m + a.tokensWaited, 0), 0);
      const s = sim.sim.getStats();
      const mutations = ['CreateVolume', 'AttachVolume', 'DetachVolume', 'DeleteVolume'].map((a) => `${a.replace('Volume', '')} ${s.actions[a]?.calls ?? 0}`).join(' ');
      const byCluster = trackers
        .map((t, c) => {
          const { ready, bound, attachments } = t.counts();
          return `${clusterIds[c]} ${ready} of ${bound} Bound, ${attachments} VolumeAttachments`;
        })
        .join('; ');
      const errorLines = backends.flatMap((b) => b.takeErrorLines());
      const backendErrors = errorLines.length === 0 ? '' : `; backend errors ${errorLines.length}, the first: ${errorLines[0]!.slice(0, 300)}`;
      log(
        `[d] ${phase} ${at().toFixed(0).padStart(4)} s  ${line()} (${byCluster})  EC2 calls ${s.total.calls} (throttled ${s.total.throttled}; ${mutations}), backend requests ${front.requests - requestsBefore} (slowest ${slowestRequest(front)}; budget tokens refused by the live backends ${refused}), this process's event loop held up to ${diagnostics.loopMaxSinceLastMs().toFixed(0)} ms${backendErrors}`,
      );
    };
    let readyMs: number | undefined;
    let settledMs: number | undefined;
    const notConverged: string[][] = stacks.map(() => []);
    for (;;) {
      const ready = counts();
      if (readyMs === undefined && ready === n) readyMs = performance.now() - t0;
      while (pendingDisruptions.length > 0 && ready >= pendingDisruptions[0]!.share * n) {
        const { run } = pendingDisruptions.shift()!;
        const atSeconds = at();
        const what = await run();
        disruptions.push({ what, atSeconds });
        log(`[d] ${atSeconds.toFixed(0).padStart(4)} s  ${what}`);
      }
      if (ready === n && (await everySettled(worlds, tracked, false)).length === 0) {
        settledMs = performance.now() - t0;
        break;
      }
      if (performance.now() - t0 > options.timeoutMs) {
        (await everySettled(worlds, tracked, false)).forEach(([c, problems]) => notConverged[c]!.push(...problems.map((p) => `burst: ${p}`)));
        log(`[d] burst TIMEOUT after ${at().toFixed(0)} s`);
        break;
      }
      await progress('burst', () => `ready ${ready}/${n}`);
      await sleep(ready === n ? 1_000 : 100);
    }

    const stuckClaims = stuckClaimNames(stacks, judge.stuckVolumes);
    const unstuckReady = trackers.flatMap((t, c) => [...t.claims.values()].filter((times) => !stuckClaims[c]!.has(times.name)).map(readyAt));
    const readyUnstuckMs = unstuckReady.every((t) => t !== undefined) && unstuckReady.length > 0 ? Math.max(...(unstuckReady as number[])) - t0 : undefined;
    const stuckAtSeconds = [...judge.stuckVolumes.values()].map((t) => (t - t0) / 1000).sort((a, b) => a - b);

    // Everything deleted: pods and claims at once, as `kubectl delete -f` of a whole app would.
    const d0 = performance.now();
    for (const [c, stack] of stacks.entries()) {
      for (const t of tracked[c]!) {
        stack.store.delete('pods', t.name, BENCH_NAMESPACE);
        stack.store.delete('persistentvolumeclaims', t.name, BENCH_NAMESPACE);
        t.deleted = true;
      }
    }
    let deletedMs: number | undefined;
    next = (performance.now() - t0) + every;
    for (;;) {
      const left = await everySettled(worlds, tracked, true);
      if (left.length === 0) {
        deletedMs = performance.now() - d0;
        break;
      }
      if (performance.now() - d0 > options.timeoutMs) {
        left.forEach(([c, problems]) => notConverged[c]!.push(...problems.map((p) => `deletion: ${p}`)));
        log(`[d] deletion TIMEOUT after ${((performance.now() - d0) / 1000).toFixed(0)} s`);
        break;
      }
      await progress('delete', () => `${left.reduce((sum, [, p]) => sum + p.length, 0)} things left`);
      await sleep(1_000);
    }

    const verdicts = worlds.map((w, c) => finalVerdict(w, tracked[c]!, judge.oracles.get(w.clusterId)!, notConverged[c]!));
    const total = zeroCounts();
    for (const v of verdicts) for (const key of Object.keys(total) as (keyof Counts)[]) total[key] += v.counts[key];
    const ec2 = sim.sim.getStats();
    const all: ClaimTimes[] = trackers.flatMap((t) => [...t.claims.values()]);
    const backendStats = subtractStats(sumStats([...retiredStats, ...(await Promise.all(backends.map((b) => b.stats())))]), statsBefore);
    return {
      options: { clusters: options.clusters, perCluster: options.perCluster, backends: options.backends, timeScale: options.timeScale, seed: options.seed, faults: options.faults, timeoutMs: options.timeoutMs },
      rates: options.faults ? rates : undefined,
      n,
      floorSeconds: tokenBucketFloorSeconds(n, options.timeScale),
      readyMs,
      readyUnstuckMs,
      stuckAtSeconds,
      settledMs,
      deletedMs,
      claims: all.map((t) => ({
        ...(t.bound !== undefined && { boundMs: t.bound - t.created }),
        ...(t.attached !== undefined && { attachedMs: t.attached - t.created }),
      })),
      ec2,
      backendStats,
      backendRequests: front.requests - requestsBefore,
      faults: { refused: refusedByCode(ec2), lostAnswers: { ...judge.lost }, stuckAttachments: judge.stuck, watchesExpired: watchExpiry?.expired ?? 0 },
      stuckGivenUp: {
        all: [...judge.oracles.values()].reduce((n, o) => n + o.stuckGivenUp, 0),
        early: [...judge.oracles.values()].reduce((n, o) => n + o.stuckGivenUpEarly, 0),
      },
      disruptions,
      counts: total,
      findings: verdicts.flatMap((v, c) => v.findings.map((f) => `${clusterIds[c]}: ${f}`)),
    };
  } finally {
    diagnostics.stop();
    await runCleanups(cleanups);
  }
}

/** What is not yet as it should be, per cluster (only those with something). */
async function everySettled(worlds: readonly JudgedWorld[], tracked: readonly TrackedClaim[][], final: boolean): Promise<Array<[number, string[]]>> {
  const out: Array<[number, string[]]> = [];
  for (const [c, world] of worlds.entries()) {
    const problems = unsettled(world, tracked[c]!, final);
    if (problems.length > 0) out.push([c, problems]);
    await sleep(0); // the stores' watchers run between clusters
  }
  return out;
}

/** EC2's answers with an injected code (InternalError, Unavailable), by code: not its other errors (throttling, IncorrectState…). */
function refusedByCode(ec2: Ec2SimStats): Record<string, number> {
  const out: Record<string, number> = {};
  for (const stats of Object.values(ec2.actions)) {
    for (const [code, count] of Object.entries(stats.errors)) if ((INJECTED_CODES as readonly string[]).includes(code)) out[code] = (out[code] ?? 0) + count;
  }
  return out;
}

function subtractStats(after: BackendStats, before: BackendStats): BackendStats {
  const out: BackendStats = {};
  for (const [action, a] of Object.entries(after)) {
    const b = before[action];
    const codes: Record<string, number> = {};
    for (const [code, count] of Object.entries(a.errorCodes)) codes[code] = count - (b?.errorCodes[code] ?? 0);
    out[action] = {
      calls: a.calls - (b?.calls ?? 0),
      throttles: a.throttles - (b?.throttles ?? 0),
      errors: a.errors - (b?.errors ?? 0),
      errorCodes: codes,
      tokensGranted: a.tokensGranted - (b?.tokensGranted ?? 0),
      tokensWaited: a.tokensWaited - (b?.tokensWaited ?? 0),
      takes: a.takes - (b?.takes ?? 0),
    };
  }
  return out;
}

/** When a claim was Bound and attached (performance.now()), if it is. */
function readyAt(times: ClaimTimes): number | undefined {
  return times.bound !== undefined && times.attached !== undefined ? Math.max(times.bound, times.attached) : undefined;
}

/** Per cluster, the names of the claims whose volume had an attachment stuck `attaching`. */
function stuckClaimNames(stacks: readonly LocalStack[], stuckVolumes: ReadonlyMap<string, number>): Array<Set<string>> {
  return stacks.map((stack) => {
    const names = new Set<string>();
    for (const pv of stack.store.list('persistentvolumes').items) {
      const spec = pv.spec as { csi?: { volumeHandle?: string }; claimRef?: { name?: string } } | undefined;
      if (spec?.csi?.volumeHandle && stuckVolumes.has(spec.csi.volumeHandle) && spec.claimRef?.name) names.add(spec.claimRef.name);
    }
    return names;
  });
}

function leaderOf(stack: LocalStack): string | undefined {
  const lease = stack.store.get('leases', LEASE.name, LEASE.namespace) as { spec?: { holderIdentity?: string } } | undefined;
  return lease?.spec?.holderIdentity || undefined;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The slowest backend request since the last progress line, as `12.3 s at 127.0.0.1:4567`. */
function slowestRequest(front: RoundRobin): string {
  const slowest = front.slowestSinceLast();
  return slowest ? `${(slowest.ms / 1000).toFixed(1)} s at ${slowest.target}` : 'none';
}
