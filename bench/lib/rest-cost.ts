/**
 * Scenario (e): what volhook costs at rest. `clusters` local Kubernetes clusters (API,
 * controllers), each with its forwarder in a process of its own (bin/forwarder.ts, as its pod
 * runs it), against `backends` backend processes sharing the replay and report tables in
 * DynamoDB (moto_server, behind a proxy that counts the writes) and, when more than one, the
 * rate budget's too, one simulated EC2 account (the simulator in a process of its own,
 * bench/lib/ec2-sim-process.ts). First `n` WaitForFirstConsumer claims with a pod each, dealt out over the clusters,
 * are bound and attached (the simulator at `timeScale`); then, nothing changing, an hour passes
 * at `restScale`: the forwarders resync every 300 s ÷ restScale, the scheduled audit runs once
 * (lib/audit, as functions/audit.ts runs it each hour), and everything volhook does is counted —
 * backend requests per cluster, EC2 calls by action, DynamoDB writes by operation and table,
 * the forwarders' CPU time and memory.
 *
 * The backend asks for the reports restScale times sooner too (`reportTimeScale`). volhook's
 * other delays are not scaled: the backend's once-a-minute records (the secret a request was
 * verified with, lib/reports/verified-by.ts) are written at most once a minute of wall time, so a rest scale above 300 / 60 = 5 (a resync more often than a minute) counts fewer
 * of them than an hour at scale 1 would.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { auditAllClusters, type ClusterAuditOutcome } from '../../lib/audit/index.js';
import { createBudgetDynamoDbClient, createDynamoDbBudget } from '../../lib/budget/index.js';
import { createEc2Client, createEc2Gateway, DEFAULT_BUDGET_ACCOUNT } from '../../lib/ec2/index.js';
import type { Ec2SimStats } from '../../lib/local/ec2/index.js';
import { createFileRegistry } from '../../lib/registry/index.js';
import { createDynamoDbReportStore } from '../../lib/reports/index.js';
import { Diagnostics } from './diagnostics.js';
import { startEc2SimProcess } from './ec2-sim-handle.js';
import { startDynamoDbWriteCounter, subtractWrites, writeUnits, type WriteCounts } from './dynamodb-writes.js';
import { createTables, freePort, startBackendProcess, startForwarderProcess, startMotoServer, startRoundRobin, stopChild, type ForwarderProcess, type RoundRobin } from './fleet-processes.js';
import { backendEnvironment, createClaimsWithPods, dealOut, REGION, runCleanups, startClusterStacks, startFleetRegistry, ZONES, type Cleanups } from './fleet-setup.js';
import { say } from './format.js';
import { BENCH_NAMESPACE } from './manifests.js';
import { httpGet, procCpuMs, procMemory, promValue } from './proc.js';
import { BurstTracker } from './tracker.js';

/** The forwarder's resync period as deployed (lib/forwarder/config.ts), seconds. */
export const RESYNC_SECONDS = 300;
export const HOUR_SECONDS = 3600;
const TABLES = { budget: 'volhook-rest-budget', replay: 'volhook-rest-replay', reports: 'volhook-rest-reports' };
const CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' };

export interface RestOptions {
  /** Claims with a pod, bound and attached, over all clusters. */
  n: number;
  clusters: number;
  backends: number;
  /** The simulator's time scale while the volumes are made. */
  timeScale: number;
  /** How much faster than real time the hour at rest passes (resync period and hour ÷ this). */
  restScale: number;
  seed: number;
  /** Bound on binding and attaching every volume. */
  timeoutMs: number;
  progressEveryMs?: number;
  log?: (line: string) => void;
}

export interface ForwarderUse {
  clusterId: string;
  /** CPU time (user + system) during the hour at rest, ms. */
  cpuMs: number;
  /** Resident set size at the end of the hour, bytes. */
  rss: number;
  /** The highest resident set size seen during the hour, bytes. */
  peakRss: number;
}

export interface RestResult {
  options: Omit<RestOptions, 'log' | 'progressEveryMs'>;
  /** Claims per cluster. */
  perCluster: number[];
  /** First create to every claim Bound and attached and its pod Running; undefined on timeout. */
  readyMs: number | undefined;
  /** Wall time of the hour at rest, ms. */
  hourWallMs: number;
  /** The forwarders' resync period in wall time, ms. */
  resyncWallMs: number;
  /** EC2 as the simulator counted it during the hour. */
  ec2: Ec2SimStats;
  backendRequests: { total: number; byCluster: Record<string, number>; byRoute: Record<string, number> };
  /** Items the forwarders sent in the hour, by kind (their volhook_forwarder_outcomes_total). */
  itemsByKind: Record<string, number>;
  dynamodbWrites: WriteCounts;
  /** What those writes cost in write units (1 per KB of the item written), and the largest item written. */
  dynamodbWriteUnits: { units: number; largestItemBytes: number };
  audit: ClusterAuditOutcome[];
  forwarders: ForwarderUse[];
}

export async function runRestCost(options: RestOptions): Promise<RestResult> {
  const log = options.log ?? say;
  const cleanups: Cleanups = [];
  const diagnostics = new Diagnostics();
  try {
    // The simulator in a process of its own: beside five Kubernetes APIs and their controllers it answers too late.
    const sim = await startEc2SimProcess({ region: REGION, zones: ZONES, seed: options.seed, timeScale: options.timeScale });
    cleanups.push(() => sim.stop());
    const base = { sim, ...startFleetRegistry({ prefix: 'rest', clusters: options.clusters }, cleanups) };
    const { clusterIds } = base;
    const moto = await startMotoServer();
    cleanups.push(() => moto.stop());
    await createTables(moto.url, REGION, Object.values(TABLES));
    const dynamodb = await startDynamoDbWriteCounter(moto.url);
    cleanups.push(() => dynamodb.stop());

    // One backend paces itself in its memory, as scale-out.ts's does: at rest it calls EC2 not at all, so no budget write
    // is left out; the audit below takes its tokens from the budget table, as functions/audit.ts does.
    const shared = options.backends > 1 ? TABLES : { replay: TABLES.replay, reports: TABLES.reports };
    // The forwarders resync restScale times faster: the backend asks for their reports as much sooner.
    const env = { ...backendEnvironment(base, { ec2Endpoint: sim.url, timeScale: options.timeScale, tables: { endpoint: dynamodb.url, ...shared } }), VOLHOOK_BENCH_REPORT_TIME_SCALE: String(options.restScale) };
    const backends = await Promise.all(Array.from({ length: options.backends }, () => startBackendProcess(env)));
    cleanups.push(() => Promise.all(backends.map((b) => b.stop())).then(() => undefined));
    // One front per cluster, each dealing out over every backend: the requests of each cluster counted apart.
    const fronts: RoundRobin[] = [];
    for (const _ of clusterIds) {
      const front = await startRoundRobin(backends.map((b) => b.url));
      cleanups.push(() => front.stop());
      fronts.push(front);
    }

    const perCluster = dealOut(options.n, options.clusters);
    const stacks = await startClusterStacks(base, { pods: perCluster, onControllerError: diagnostics.onControllerError, logger: diagnostics.logger }, cleanups);
    const resyncWallMs = (RESYNC_SECONDS * 1000) / options.restScale;
    const forwarders: ForwarderProcess[] = [];
    cleanups.push(() =>
      Promise.all(
        forwarders.map((f) => {
          f.stopping = true;
          return stopChild(f.child);
        }),
      ).then(() => undefined),
    );
    for (const [c, stack] of stacks.entries()) {
      const port = await freePort();
      forwarders.push(startForwarderProcess({ apiUrl: fronts[c]!.url, stack, port, env: { VOLHOOK_RESYNC_SECONDS: String(resyncWallMs / 1000) }, log: (line) => log(`[e] ${line}`) }));
    }
    const nodesDeadline = Date.now() + 120_000;
    while (!(await sim.instancesRunning(stacks.flatMap((s) => s.nodes.map((n) => n.instanceId))))) {
      if (Date.now() > nodesDeadline) throw new Error('timed out after 120000 ms waiting for node instances running');
      await sleep(500);
    }
    for (const f of forwarders) {
      const deadline = Date.now() + 90_000;
      while ((await httpGet(`http://127.0.0.1:${f.port}/readyz`))?.status !== 200) {
        if (f.child.exitCode !== null) throw new Error(`a forwarder exited before it was ready: ${f.errors}`);
        if (Date.now() > deadline) throw new Error(`a forwarder was not ready in 90 s: ${f.errors}`);
        await sleep(200);
      }
    }

    // Every claim made, bound and attached, its pod Running.
    const trackers = stacks.map((s) => new BurstTracker(s.store, BENCH_NAMESPACE));
    cleanups.push(() => trackers.forEach((t) => t.stop()));
    diagnostics.start();
    const t0 = performance.now();
    createClaimsWithPods(stacks, trackers, perCluster, 'rest');
    const every = options.progressEveryMs ?? 10_000;
    let next = every;
    let readyMs: number | undefined;
    for (;;) {
      const c = trackers.map((t) => t.counts()).reduce((a, b) => ({ ready: a.ready + b.ready, running: a.running + b.running }), { ready: 0, running: 0 });
      const at = performance.now() - t0;
      if (c.ready === options.n && c.running === options.n) {
        readyMs = at;
        break;
      }
      if (at > options.timeoutMs) {
        log(`[e] TIMEOUT after ${(at / 1000).toFixed(0)} s: Bound and attached ${c.ready}/${options.n}, Running ${c.running}/${options.n}; measuring the rest all the same`);
        break;
      }
      if (at >= next) {
        next += every;
        log(`[e] ${(at / 1000).toFixed(0).padStart(4)} s  Bound and attached ${c.ready}/${options.n}, Running ${c.running}/${options.n}, EC2 calls ${(await sim.stats()).total.calls}`);
      }
      await sleep(200);
    }
    // The last answers in: every forwarder's queue empty, then one resync more for what it brings.
    const queueDeadline = Date.now() + Math.max(60_000, 4 * resyncWallMs);
    while (Date.now() < queueDeadline) {
      const depths = await Promise.all(forwarders.map(async (f) => promValue((await httpGet(`http://127.0.0.1:${f.port}/metrics`, 5_000))?.body ?? '', 'volhook_forwarder_queue_depth')));
      if (depths.every((d) => d === 0)) break;
      await sleep(500);
    }
    await sleep(resyncWallMs);
    log(`[e] settled; an hour at rest (${((HOUR_SECONDS * 1000) / options.restScale / 1000).toFixed(0)} s of wall time, a resync every ${(resyncWallMs / 1000).toFixed(1)} s) …`);

    // The hour at rest.
    const reports = createDynamoDbReportStore({ tableName: TABLES.reports, client: new DynamoDBClient({ region: REGION, endpoint: dynamodb.url, credentials: CREDENTIALS }) });
    const budget = createDynamoDbBudget({ tableName: TABLES.budget, timeScale: options.timeScale, client: createBudgetDynamoDbClient({ region: REGION, endpoint: dynamodb.url, credentials: CREDENTIALS }) });
    const ec2Client = createEc2Client({ region: REGION, endpoint: sim.url, credentials: CREDENTIALS });
    cleanups.push(() => ec2Client.destroy());
    const registry = createFileRegistry(base.registryFile);
    const itemsBefore = await itemsSent(forwarders);
    const cpuBefore = forwarders.map((f) => procCpuMs(f.child.pid!) ?? NaN);
    const peakRss = forwarders.map(() => 0);
    const sampler = setInterval(() => forwarders.forEach((f, i) => (peakRss[i] = Math.max(peakRss[i]!, procMemory(f.child.pid!)?.rss ?? 0))), 1_000);
    cleanups.push(() => clearInterval(sampler));
    await sim.resetStats();
    const writesBefore = dynamodb.counts();
    const requestsBefore = fronts.map((f) => f.requests);
    const routesBefore = fronts.map((f) => f.byRoute());
    const hourWallMs = (HOUR_SECONDS * 1000) / options.restScale;
    const h0 = performance.now();
    // The scheduled audit, once in the hour (functions/audit.ts: every cluster, in its session, paced by the shared budget).
    await sleep(hourWallMs / 2);
    const audit = await auditAllClusters({
      registry,
      reports,
      gatewayFor: (registration) =>
        createEc2Gateway({
          client: ec2Client,
          clusterId: registration.clusterId,
          deadline: Date.now() + 120_000,
          pacing: { budget, account: DEFAULT_BUDGET_ACCOUNT, region: registration.region, waitForTokens: true },
        }),
      onResult: () => undefined,
      onSkipped: (clusterId, why) => log(`[e] audit of ${clusterId} skipped: ${why}`),
    });
    await sleep(Math.max(0, hourWallMs - (performance.now() - h0)));
    const ec2 = await sim.stats();
    const itemsAfter = await itemsSent(forwarders);
    const itemsByKind = Object.fromEntries(Object.entries(itemsAfter).map(([kind, k]) => [kind, k - (itemsBefore[kind] ?? 0)]).filter(([, k]) => k !== 0));
    const dynamodbWrites = subtractWrites(dynamodb.counts(), writesBefore);
    const reader = new DynamoDBClient({ region: REGION, endpoint: moto.url, credentials: CREDENTIALS });
    const dynamodbWriteUnits = await writeUnits(reader, dynamodbWrites.byItem).finally(() => reader.destroy());
    const byCluster = Object.fromEntries(clusterIds.map((id, c) => [id, fronts[c]!.requests - requestsBefore[c]!]));
    const byRoute: Record<string, number> = {};
    fronts.forEach((f, c) => {
      for (const [route, k] of Object.entries(f.byRoute())) {
        const d = k - (routesBefore[c]![route] ?? 0);
        if (d > 0) byRoute[route] = (byRoute[route] ?? 0) + d;
      }
    });
    const used: ForwarderUse[] = forwarders.map((f, i) => {
      const memory = procMemory(f.child.pid!);
      return { clusterId: clusterIds[i]!, cpuMs: (procCpuMs(f.child.pid!) ?? NaN) - cpuBefore[i]!, rss: memory?.rss ?? NaN, peakRss: Math.max(peakRss[i]!, memory?.rss ?? 0) };
    });
    return {
      options: { n: options.n, clusters: options.clusters, backends: options.backends, timeScale: options.timeScale, restScale: options.restScale, seed: options.seed, timeoutMs: options.timeoutMs },
      perCluster,
      readyMs,
      hourWallMs,
      resyncWallMs,
      ec2,
      backendRequests: { total: Object.values(byCluster).reduce((a, b) => a + b, 0), byCluster, byRoute },
      itemsByKind,
      dynamodbWrites,
      dynamodbWriteUnits,
      audit,
      forwarders: used,
    };
  } finally {
    diagnostics.stop();
    await runCleanups(cleanups);
  }
}

/** The figures an hour at rest comes to: whole cluster set, per cluster, per 1,000 volumes. */
export function perHour(r: RestResult): { ec2: number; requests: number; writes: number } {
  return { ec2: r.ec2.total.calls, requests: r.backendRequests.total, writes: r.dynamodbWrites.total };
}

/** Items answered so far by kind, summed over the forwarders (their /metrics). */
async function itemsSent(forwarders: readonly ForwarderProcess[]): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const f of forwarders) {
    const text = (await httpGet(`http://127.0.0.1:${f.port}/metrics`, 5_000))?.body ?? '';
    for (const [kind, k] of Object.entries(outcomesByKind(text))) out[kind] = (out[kind] ?? 0) + k;
  }
  return out;
}

/** `volhook_forwarder_outcomes_total{kind="…",outcome="…"} N` summed by kind. */
export function outcomesByKind(metrics: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const m of metrics.matchAll(/^volhook_forwarder_outcomes_total\{([^}]*)\}\s+([\d.e+]+)$/gm)) {
    const kind = /kind="([^"]*)"/.exec(m[1]!)?.[1] ?? '?';
    out[kind] = (out[kind] ?? 0) + Number(m[2]);
  }
  return out;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
