/**
 * Scenarios (a) and (b): create `n` claims of the default class (gp3, WaitForFirstConsumer),
 * each with one pod, all at once, and time until every claim is Bound and attached (and its
 * pod Running), over the whole local stack with volhook's production forwarder settings.
 */
import type { Forwarder } from '../../lib/forwarder/index.js';
import type { Ec2SimStats } from '../../lib/local/ec2/index.js';
import { Ec2CallStats } from '../../lib/ec2/index.js';
import { startBenchStack, type BenchStackOptions } from './bench-stack.js';
import type { BackendStats } from './scale-out.js';
import { Diagnostics } from './diagnostics.js';
import { say } from './format.js';
import { BENCH_NAMESPACE, claim, podFor } from './manifests.js';
import { tokenBucketFloorSeconds } from './stats.js';
import { BurstTracker, type ClaimTimes, type Progress } from './tracker.js';

export interface BurstOptions {
  /** Printed in progress lines, e.g. `b`. */
  label: string;
  n: number;
  timeScale: number;
  seed: number;
  timeoutMs: number;
  progressEveryMs?: number;
  /** Simulator latencies other than its defaults. */
  latency?: BenchStackOptions['latency'];
}

export interface BurstResult {
  label: string;
  n: number;
  timeScale: number;
  nodes: number;
  floorSeconds: number;
  /** From the first create to the last claim Bound and attached; undefined if not all were. */
  readyMs: number | undefined;
  /** From the first create to the last pod Running. */
  runningMs: number | undefined;
  timedOut: boolean;
  /** How long creating the objects took (in-process, so milliseconds). */
  createMs: number;
  setupMs: number;
  /** Per claim, relative to its own creation. */
  claims: Array<{ name: string; boundMs?: number; attachedMs?: number; runningMs?: number }>;
  ec2: Ec2SimStats;
  forwarderRequests: Record<string, number>;
  diagnostics: Diagnostics;
  load: ReturnType<Diagnostics['processLoad']>;
  /** The backend's own count per EC2 action (calls, throttles, tokens, budget takes). */
  backendStats?: BackendStats;
}

const RUNNING_GRACE_MS = 30_000;

export async function runBurst(options: BurstOptions): Promise<BurstResult> {
  const { n, label } = options;
  const diagnostics = new Diagnostics();
  const ec2Calls = new Ec2CallStats();
  let measuring = false;
  const bench = await startBenchStack({
    timeScale: options.timeScale,
    seed: options.seed,
    pods: n,
    ...(options.latency && { latency: options.latency }),
    logger: diagnostics.logger,
    onResult: diagnostics.onResult,
    onEc2Calls: (_clusterId, stats) => {
      if (measuring) ec2Calls.merge(stats);
    },
    onControllerError: diagnostics.onControllerError,
  });
  const { stack, nodes } = bench;
  const sim = stack.simulator!;
  let tracker: BurstTracker | undefined;
  try {
    sim.resetStats();
    measuring = true;
    tracker = new BurstTracker(stack.store, BENCH_NAMESPACE);
    diagnostics.start();
    const t0 = performance.now();
    for (let i = 0; i < n; i++) {
      const name = `bench-${String(i).padStart(5, '0')}`;
      tracker.expect(name, name);
      stack.store.create('persistentvolumeclaims', claim(name));
      stack.store.create('pods', podFor(name, name, nodes[i % nodes.length]!.name));
    }
    const createMs = performance.now() - t0;

    const deadline = t0 + options.timeoutMs;
    const every = options.progressEveryMs ?? 10_000;
    let nextProgress = t0 + every;
    let timedOut = false;
    for (;;) {
      const c = tracker.counts();
      const now = performance.now();
      if (c.ready === n && (c.running === n || now - (tracker.lastReadyAt ?? now) > RUNNING_GRACE_MS)) break;
      if (now > deadline) {
        timedOut = true;
        say(`[${label}] TIMEOUT after ${((now - t0) / 1000).toFixed(0)} s`);
        break;
      }
      if (now >= nextProgress) {
        nextProgress += every;
        say(progressLine(label, n, now - t0, c, sim.getStats(), stack.forwarder()?.queue.size, diagnostics));
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const load = diagnostics.processLoad();
    const ec2 = sim.getStats();
    const end = (pick: (t: ClaimTimes) => number | undefined) => {
      const times = [...tracker!.claims.values()].map(pick);
      return times.every((t) => t !== undefined) ? Math.max(...(times as number[])) - t0 : undefined;
    };
    const result: BurstResult = {
      label,
      n,
      timeScale: options.timeScale,
      nodes: nodes.length,
      floorSeconds: tokenBucketFloorSeconds(n, options.timeScale),
      readyMs: end((t) => (t.bound !== undefined && t.attached !== undefined ? Math.max(t.bound, t.attached) : undefined)),
      runningMs: end((t) => t.running),
      timedOut,
      createMs,
      setupMs: bench.setupMs,
      claims: [...tracker.claims.values()].map((t) => ({
        name: t.name,
        boundMs: t.bound === undefined ? undefined : t.bound - t.created,
        attachedMs: t.attached === undefined ? undefined : t.attached - t.created,
        runningMs: t.running === undefined ? undefined : t.running - t.created,
      })),
      ec2,
      forwarderRequests: await forwarderRequests(stack.forwarder()),
      diagnostics,
      load,
      backendStats: Object.fromEntries(
        [...ec2Calls.actions].map(([action, a]) => [
          action,
          { calls: a.calls, throttles: a.throttles, errors: a.errors, errorCodes: a.errorCodes, tokensGranted: a.tokensGranted, tokensWaited: a.tokensWaited, takes: a.takes },
        ]),
      ),
    };
    return result;
  } finally {
    tracker?.stop();
    diagnostics.stop();
    await stack.stop();
  }
}

/** One line every 10 s: milestones so far, EC2 calls, the forwarder's queue, the backend's answers. */
function progressLine(
  label: string,
  n: number,
  elapsedMs: number,
  c: Progress,
  ec2: Ec2SimStats,
  queued: number | undefined,
  d: Diagnostics,
): string {
  const answers = (['done', 'requeue', 'failed'] as const).map((outcome) => `${outcome} ${d.outcomes.sumWhere((k) => k.endsWith(` ${outcome}`))}`);
  return (
    `[${label}] ${(elapsedMs / 1000).toFixed(0).padStart(4)} s  bound ${c.bound}/${n}  VAs ${c.attachments}  attached ${c.attached}/${n}  ` +
    `running ${c.running}/${n}  EC2 calls ${ec2.total.calls} (throttled ${ec2.total.throttled}; ok: CreateVolume ${ec2.actions.CreateVolume?.ok ?? 0}, ` +
    `AttachVolume ${ec2.actions.AttachVolume?.ok ?? 0})  forwarder queue ${queued ?? '?'}  ` +
    `backend ${answers.join(' ')}`
  );
}

/**
 * Reconcile requests the forwarder sent, from its histogram: by HTTP status (or `error`) the
 * count, and under `<status> seconds` the summed latency.
 */
async function forwarderRequests(forwarder: Forwarder | undefined): Promise<Record<string, number>> {
  if (!forwarder) return {};
  const metric = await forwarder.metrics.requestDuration.get();
  const out: Record<string, number> = {};
  for (const v of metric.values) {
    if (v.metricName?.endsWith('_count')) out[String(v.labels.status ?? '?')] = v.value;
    if (v.metricName?.endsWith('_sum')) out[`${String(v.labels.status ?? '?')} seconds`] = v.value;
  }
  return out;
}
