/**
 * Scenario (b) scaled out, as deployed: `backends` backend processes (each its own process
 * and EC2 client, as Lambda instances are) behind one URL that deals requests out in turn
 * (as API Gateway does), `clusters` local Kubernetes APIs with their controllers and
 * forwarders sending at once, one simulated EC2 account for all. With more than one backend
 * the rate budget lives in DynamoDB — moto_server's, started on a free loopback port — and
 * every process takes its tokens there; with one it is that process's memory.
 *
 * The n claims are dealt out over the clusters, so the token-bucket floor is that of n.
 */
import { until } from './bench-stack.js';
import { Diagnostics } from './diagnostics.js';
import { say, table } from './format.js';
import { BENCH_NAMESPACE } from './manifests.js';
import type { BurstResult } from './provision.js';
import { tokenBucketFloorSeconds } from './stats.js';
import { BurstTracker, type ClaimTimes } from './tracker.js';
import { createTables, startBackendProcess, startMotoServer, startRoundRobin, sumStats, type BackendStats } from './fleet-processes.js';
import { backendEnvironment, createClaimsWithPods, dealOut, nodesRunning, REGION, runCleanups, startClusterStacks, startFleetBase, type Cleanups, type SharedTables } from './fleet-setup.js';

export type { BackendStats } from './fleet-processes.js';

export interface ScaleOutOptions {
  n: number;
  backends: number;
  clusters: number;
  timeScale: number;
  seed: number;
  timeoutMs: number;
  progressEveryMs?: number;
}


export interface ScaleOutResult extends BurstResult {
  backends: number;
  clusters: number;
  budgetStore: 'memory' | 'dynamodb';
  backendStats: BackendStats;
}

const TABLE = 'volhook-bench-budget';

export async function runScaleOut(options: ScaleOutOptions): Promise<ScaleOutResult> {
  const cleanups: Cleanups = [];
  const diagnostics = new Diagnostics();
  const started = performance.now();
  try {
    const base = await startFleetBase({ prefix: 'bench', clusters: options.clusters, seed: options.seed, timeScale: options.timeScale }, cleanups);
    const sim = base.sim;
    let budgetStore: ScaleOutResult['budgetStore'] = 'memory';
    let tables: SharedTables | undefined;
    if (options.backends > 1) {
      const moto = await startMotoServer();
      cleanups.push(() => moto.stop());
      await createTables(moto.url, REGION, [TABLE]);
      tables = { endpoint: moto.url, budget: TABLE };
      budgetStore = 'dynamodb';
    }
    const env = backendEnvironment(base, { ec2Endpoint: sim.url, timeScale: options.timeScale, ...(tables && { tables }) });
    const backends = await Promise.all(Array.from({ length: options.backends }, () => startBackendProcess(env)));
    for (const b of backends) cleanups.push(() => b.stop());
    const front = await startRoundRobin(backends.map((b) => b.url));
    cleanups.push(() => front.stop());

    const perCluster = dealOut(options.n, options.clusters);
    const stacks = await startClusterStacks(base, { pods: perCluster, backendUrl: front.url, onControllerError: diagnostics.onControllerError, logger: diagnostics.logger }, cleanups);
    await until(() => nodesRunning(base, stacks), 120_000, 'node instances running');
    await until(() => stacks.every((s) => s.forwarder()?.ready() === true), 60_000, 'forwarders synced');
    const setupMs = performance.now() - started;

    sim.sim.resetStats();
    const trackers = stacks.map((s) => new BurstTracker(s.store, BENCH_NAMESPACE));
    cleanups.push(() => trackers.forEach((t) => t.stop()));
    diagnostics.start();
    const t0 = performance.now();
    createClaimsWithPods(stacks, trackers, perCluster, 'bench');
    const createMs = performance.now() - t0;

    const deadline = t0 + options.timeoutMs;
    const every = options.progressEveryMs ?? 10_000;
    let next = t0 + every;
    let timedOut = false;
    const counts = () => trackers.map((t) => t.counts()).reduce((a, b) => ({ bound: a.bound + b.bound, attached: a.attached + b.attached, running: a.running + b.running, attachments: a.attachments + b.attachments, ready: a.ready + b.ready }));
    for (;;) {
      const c = counts();
      const now = performance.now();
      const lastReady = Math.max(...trackers.map((t) => t.lastReadyAt ?? now));
      if (c.ready === options.n && (c.running === options.n || now - lastReady > 30_000)) break;
      if (now > deadline) {
        timedOut = true;
        say(`[b] TIMEOUT after ${((now - t0) / 1000).toFixed(0)} s`);
        break;
      }
      if (now >= next) {
        next += every;
        const s = sim.sim.getStats();
        say(
          `[b] ${((now - t0) / 1000).toFixed(0).padStart(4)} s  bound ${c.bound}/${options.n}  attached ${c.attached}/${options.n}  ` +
            `EC2 calls ${s.total.calls} (throttled ${s.total.throttled}; ok: CreateVolume ${s.actions.CreateVolume?.ok ?? 0}, AttachVolume ${s.actions.AttachVolume?.ok ?? 0})`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const load = diagnostics.processLoad();
    const all: ClaimTimes[] = trackers.flatMap((t) => [...t.claims.values()]);
    const end = (pick: (t: ClaimTimes) => number | undefined) => {
      const times = all.map(pick);
      return times.every((t) => t !== undefined) ? Math.max(...(times as number[])) - t0 : undefined;
    };
    const backendStats = sumStats(await Promise.all(backends.map((b) => b.stats())));
    return {
      label: 'b',
      n: options.n,
      timeScale: options.timeScale,
      nodes: stacks.reduce((sum, s) => sum + s.nodes.length, 0),
      floorSeconds: tokenBucketFloorSeconds(options.n, options.timeScale),
      readyMs: end((t) => (t.bound !== undefined && t.attached !== undefined ? Math.max(t.bound, t.attached) : undefined)),
      runningMs: end((t) => t.running),
      timedOut,
      createMs,
      setupMs,
      claims: all.map((t) => ({
        name: t.name,
        boundMs: t.bound === undefined ? undefined : t.bound - t.created,
        attachedMs: t.attached === undefined ? undefined : t.attached - t.created,
        runningMs: t.running === undefined ? undefined : t.running - t.created,
      })),
      ec2: sim.sim.getStats(),
      forwarderRequests: {},
      diagnostics,
      load,
      backends: options.backends,
      clusters: options.clusters,
      budgetStore,
      backendStats,
    };
  } finally {
    diagnostics.stop();
    await runCleanups(cleanups);
  }
}

/** The backends' own count per action: calls made, throttled, other errors, tokens granted and waited. */
export function printBackendStats(stats: BackendStats): void {
  const rows = Object.entries(stats)
    .sort(([, a], [, b]) => b.calls - a.calls)
    .map(([action, s]) => [action, String(s.calls), String(s.throttles), errorsCell(s.errors, s.errorCodes), String(s.tokensGranted), String(s.tokensWaited), String(s.takes)]);
  say("  the backend's own count per EC2 action (summed over its processes):");
  say(table(['EC2 action', 'calls', 'throttled', 'other errors', 'tokens granted', 'items sent to wait', 'budget takes'], rows));
}

/** `3 (IncorrectState 2, ECONNRESET 1)`: the count, and its codes most frequent first. */
function errorsCell(errors: number, codes: Record<string, number>): string {
  const top = Object.entries(codes).sort(([, a], [, b]) => b - a).map(([code, n]) => `${code} ${n}`);
  return top.length === 0 ? String(errors) : `${errors} (${top.join(', ')})`;
}
