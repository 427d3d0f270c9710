/**
 * `npm run bench`: figures, not assertions, over the whole local stack (EC2 simulator at AWS's
 * token buckets and latencies, local Kubernetes API and controllers, backend, forwarder).
 *
 *   (a) one PVC + pod (default gp3, WaitForFirstConsumer): time to Bound, attached, Running
 *   (b) a burst of N PVCs with one pod each: time to all Bound + attached against the EC2
 *       token-bucket floor, EC2 calls per action, throttling, per-PVC percentiles
 *   (c) the forwarder's RSS with N PVCs and N PVs cached, against idle
 *   (d) a fleet (lib/fleet-faults.ts): clusters × WaitForFirstConsumer claims with pods against
 *       backend processes sharing DynamoDB, with EC2 faults, lost answers, stuck attachments,
 *       killed processes and an expired watch, and without; everything deleted, then judged
 *   (e) at rest (lib/rest-cost.ts): n volumes bound and attached over clusters, then an hour
 *       (time-scaled) of nothing changing: backend requests, EC2 calls by action, DynamoDB
 *       writes, forwarder CPU and memory, per hour, per cluster, per 1,000 volumes
 *   report: one cluster's volume report of --pvs PVs, sent plain and gzip'd: requests and bytes
 *       (lib/report-sizes.ts); only with --only report
 *
 *   npm run bench -- [--n 1000] [--time-scale 1] [--only a,b,c,d,e,report] [--quick] [--seed 1]
 *                    [--objects 10000] [--timeout 1200] [--pvs 20000] [--rest-scale 4]
 *   npm run bench -- --peer ebs-csi [--n 1000] [--seed 1] [--time-scale 1] [--timeout 1200]
 *       the same workload against volhook and the reference EBS CSI controller stack on the
 *       real control plane, side by side (lib/peer.ts)
 *
 * Everything runs in this process except the forwarder of (c), a child process. See
 * lib/args.ts for the flags.
 */
import { availableParallelism, loadavg } from 'node:os';
import { parseBenchArgs, UsageError, USAGE, type BenchArgs } from './lib/args.js';
import { latencyRow, printBurst, SCALE_NOTE } from './lib/burst-report.js';
import { callsOf } from './lib/ec2-summary.js';
import { mib, percent, ratio, say, seconds, table } from './lib/format.js';
import { measureAll, type MemoryResult } from './lib/forwarder-memory.js';
import { printMemory } from './lib/memory-report.js';
import { runBurst, type BurstResult } from './lib/provision.js';
import { clusterReport, measureReport, reportLine, type ReportSizes } from './lib/report-sizes.js';
import { printBackendStats, runScaleOut } from './lib/scale-out.js';
import { runFleet, type FleetResult } from './lib/fleet-faults.js';
import { FLEET_JUDGES, fleetRows, printFleet } from './lib/fleet-report.js';
import { runPeerBench } from './lib/peer.js';
import { HOUR_SECONDS, runRestCost, type RestResult } from './lib/rest-cost.js';
import { printRest, restRows, restSummaryLines } from './lib/rest-report.js';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const SINGLE_TIMEOUT_MS = 120_000;
/**
 * (a) measures volhook's own latency around one volume, so EC2 takes its median time
 * (reference/ebs.md: create about 1.5 s, attach 1–4 s) instead of a draw from the distribution,
 * which alone would move the figure by seconds from seed to seed.
 */
const AWS_MEDIANS = { create: { kind: 'fixed', ms: 1_500 }, attach: { kind: 'fixed', ms: 2_500 } } as const;
const MEMORY_TIMEOUT_MS = 15 * 60_000;
const REPORT_TIMEOUT_MS = 10 * 60_000;

async function main(args: BenchArgs): Promise<void> {
  const started = Date.now();
  if (args.peer) {
    say(`volhook bench (peer ${args.peer}) — node ${process.version}, ${new Date().toISOString()}`);
    say(`reproduce: ${args.command}`);
    say(`load average at start: ${loadavg().map((l) => l.toFixed(2)).join(' ')} on ${availableParallelism()} cores`);
    await runPeerBench(args);
    say(`\nload average at the end: ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
    say(`finished in ${((Date.now() - started) / 1000).toFixed(0)} s`);
    say(`reproduce: ${args.command}`);
    return;
  }
  // A bound on the whole run, whatever hangs: the scenarios have their own, this is the backstop.
  const budgetMs =
    (args.only.includes('a') ? SINGLE_TIMEOUT_MS + 120_000 : 0) +
    (args.only.includes('b') ? args.timeoutSeconds * 1000 + 180_000 : 0) +
    (args.only.includes('c') ? MEMORY_TIMEOUT_MS : 0) +
    (args.only.includes('report') ? REPORT_TIMEOUT_MS : 0) +
    (args.only.includes('d') ? (args.fleet.faults === 'both' ? 2 : 1) * (2 * args.timeoutSeconds * 1000 + 300_000) : 0) +
    (args.only.includes('e') ? args.timeoutSeconds * 1000 + (HOUR_SECONDS * 1000) / args.rest.restScale + 600_000 : 0);
  setTimeout(() => {
    say(`bench: gave up after ${(budgetMs / 60_000).toFixed(0)} min (global bound); exiting`);
    process.exit(3);
  }, budgetMs).unref();

  say(`volhook bench — node ${process.version}, ${new Date().toISOString()}`);
  say(`reproduce: ${args.command}`);
  if (args.timeScale !== 1 && (args.only.includes('a') || args.only.includes('b'))) say(`NOTE: ${SCALE_NOTE}`);

  let single: BurstResult | undefined;
  let burst: BurstResult | undefined;
  let memory: MemoryResult[] | undefined;
  const fleets: FleetResult[] = [];
  let rest: RestResult | undefined;

  if (args.only.includes('a')) {
    say(`\n(a) one PVC + pod, EC2 at AWS's medians (create ${AWS_MEDIANS.create.ms / 1000} s, attach ${AWS_MEDIANS.attach.ms / 1000} s) …`);
    single = await runBurst({ label: 'a', n: 1, timeScale: args.timeScale, seed: args.seed, timeoutMs: SINGLE_TIMEOUT_MS, latency: AWS_MEDIANS });
    printBurst(single, '(a) single');
  }
  if (args.only.includes('b')) {
    say(`\n(b) burst of ${args.n} PVCs + pods at time scale ${args.timeScale} (progress every 10 s; bound ${args.timeoutSeconds} s) …`);
    if (args.backends > 1 || args.clusters > 1) {
      say(`    scaled out: ${args.backends} backend process(es), ${args.clusters} cluster(s), one EC2 account${args.backends > 1 ? ', rate budget in DynamoDB (moto_server)' : ''}`);
      const scaled = await runScaleOut({ n: args.n, backends: args.backends, clusters: args.clusters, timeScale: args.timeScale, seed: args.seed, timeoutMs: args.timeoutSeconds * 1000 });
      printBurst(scaled, `(b) burst, ${scaled.backends} backends × ${scaled.clusters} clusters, budget in ${scaled.budgetStore}`);
      printBackendStats(scaled.backendStats);
      burst = scaled;
    } else {
      burst = await runBurst({ label: 'b', n: args.n, timeScale: args.timeScale, seed: args.seed, timeoutMs: args.timeoutSeconds * 1000 });
      printBurst(burst, `(b) burst`);
      if (burst.backendStats) printBackendStats(burst.backendStats);
    }
  }
  if (args.only.includes('c')) {
    say(`\n(c) forwarder memory: idle, then ${args.objects} PVCs + ${args.objects} PVs cached (child processes) …`);
    const { results, limits } = await measureAll(args.objects, (r) =>
      say(
        `[c] ${r.runtime} ${r.objects ? `${r.objects}+${r.objects} objects` : 'idle'}: ` +
          (r.failure ? `FAILED: ${r.failure}` : `RSS ${mib(r.rssSettled)} (ready in ${seconds(r.readyMs)})`),
      ),
    );
    memory = results;
    printMemory(results, limits);
  }

  const reportRuns: ReportSizes[] = [];
  if (args.only.includes('report')) {
    say(`\n(report) a volume report of ${args.pvs} PVs (each bound and attached), sent until the backend holds it …`);
    const report = clusterReport(args.pvs);
    for (const mode of ['plain', 'gzip'] as const) {
      const run = await measureReport(report, args.pvs, mode);
      say(`[report] ${mode}: ${run.requests} requests (${run.gzipped} gzip'd), ${run.bytes} bytes on the wire; the report is ${run.reportBytes} bytes of JSON`);
      reportRuns.push(run);
    }
  }

  if (args.only.includes('d')) {
    const { clusters, claims, backends, faults } = args.fleet;
    for (const withFaults of faults === 'both' ? [true, false] : [faults === 'on']) {
      say(`\n(d) a fleet: ${clusters} clusters × ${claims} claims with pods, ${backends} backend processes, time scale ${args.timeScale}, ${withFaults ? 'with faults' : 'without faults'} (bound ${args.timeoutSeconds} s a phase) …`);
      const fleet = await runFleet({ clusters, perCluster: claims, backends, timeScale: args.timeScale, seed: args.seed, faults: withFaults, timeoutMs: args.timeoutSeconds * 1000 });
      printFleet(fleet);
      fleets.push(fleet);
    }
  }

  if (args.only.includes('e')) {
    const { n, clusters, backends, restScale } = args.rest;
    say(`\n(e) at rest: ${n} volumes bound and attached over ${clusters} clusters (forwarder processes), ${backends} backend processes, time scale ${args.timeScale}; then an hour at rest scale ${restScale} (bound ${args.timeoutSeconds} s on binding) …`);
    rest = await runRestCost({ n, clusters, backends, timeScale: args.timeScale, restScale, seed: args.seed, timeoutMs: args.timeoutSeconds * 1000 });
    printRest(rest);
  }

  printSummary(args, single, burst, memory, reportRuns, fleets, rest);
  const failed = fleets.filter((f) => FLEET_JUDGES.some((k) => f.counts[k] > 0));
  if (failed.length > 0) {
    say(`\n(d) FAILED: ${failed.length} fleet run(s) ended with a judge above 0 (findings above)`);
    process.exitCode = 4;
  }
  say(`\nfinished in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  say(`reproduce: ${args.command}`);
}

function printSummary(args: BenchArgs, single?: BurstResult, burst?: BurstResult, memory?: MemoryResult[], reportRuns: ReportSizes[] = [], fleets: FleetResult[] = [], rest?: RestResult): void {
  const rows: string[][] = [];
  if (single) {
    const [, bound] = latencyRow(single, '', (c) => c.boundMs);
    const [, attached] = latencyRow(single, '', (c) => c.attachedMs);
    const [, running] = latencyRow(single, '', (c) => c.runningMs);
    rows.push([`(a) 1 PVC, scale ${single.timeScale}`, 'Bound / attached / Running', `${bound} / ${attached} / ${running}`]);
    rows.push(['', 'EC2 calls', `${single.ec2.total.calls} (${Object.entries(single.ec2.actions).map(([a, s]) => `${a} ${s.calls}`).join(', ')})`]);
  }
  if (burst) {
    const label = `(b) ${burst.n} PVCs, scale ${burst.timeScale}${burst.timedOut ? ' TIMEOUT' : ''}`;
    const ready = burst.readyMs;
    rows.push([label, 'all Bound + attached', seconds(ready)]);
    if (burst.timedOut) {
      const reached = (pick: (c: BurstResult['claims'][number]) => number | undefined) => burst.claims.filter((c) => pick(c) !== undefined).length;
      rows.push(['', `reached in ${args.timeoutSeconds} s`, `Bound ${reached((c) => c.boundMs)}/${burst.n}, attached ${reached((c) => c.attachedMs)}/${burst.n}`]);
    }
    rows.push(['', 'token-bucket floor', seconds(burst.floorSeconds * 1000)]);
    rows.push(['', 'time ÷ floor', burst.floorSeconds > 0 && ready !== undefined ? `${ratio(ready / 1000 / burst.floorSeconds)}${burst.timeScale !== 1 ? ' (volhook delays unscaled: not comparable)' : ''}` : '—']);
    rows.push(['', 'all pods Running', seconds(burst.runningMs)]);
    const bound = latencyRow(burst, '', (c) => c.boundMs);
    const attached = latencyRow(burst, '', (c) => c.attachedMs);
    rows.push(['', 'time to Bound p50 / p95', `${bound[1]} / ${bound[2]}`]);
    rows.push(['', 'time to attached p50 / p95', `${attached[1]} / ${attached[2]}`]);
    const t = burst.ec2.total;
    rows.push(['', 'EC2 calls (throttled)', `${t.calls} (${t.throttled}, ${percent(t.throttled, t.calls)})`]);
    for (const [action, s] of Object.entries(burst.ec2.actions)) {
      rows.push(['', `  ${action}`, `${s.calls} calls, ${percent(s.throttled, s.calls)} throttled`]);
    }
    rows.push(['', 'DescribeVolumes per volume', (callsOf(burst.ec2, 'DescribeVolumes') / burst.n).toFixed(2)]);
  }
  for (const r of memory ?? []) {
    rows.push([
      `(c) forwarder, ${r.runtime}`,
      r.objects === 0 ? 'RSS idle' : `RSS ${r.objects} PVCs + ${r.objects} PVs`,
      r.failure
        ? `FAILED (${r.failure.slice(0, 80)}), peak RSS ${mib(r.peakRss)}`
        : `${mib(r.rssSettled)} (at ready ${mib(r.rssAtReady)}, idle ${mib(r.rssIdle)}, peak ${mib(r.peakRss)}, heap ${mib(r.heapUsed)})`,
    ]);
  }
  for (const fleet of fleets) rows.push(...fleetRows(fleet));
  if (rest) rows.push(...restRows(rest));
  say('\nsummary');
  for (const run of reportRuns) say(reportLine(run));
  if (rest) for (const line of restSummaryLines(rest)) say(line);
  if (rows.length > 0) say(table(['scenario', 'figure', 'value'], rows, { alignNumbers: false }));
  if (args.quick) say('  (--quick: a smoke run, not the figures of record)');
}

let args: BenchArgs | 'help';
try {
  args = parseBenchArgs(process.argv.slice(2));
} catch (err) {
  if (!(err instanceof UsageError)) throw err;
  process.stderr.write(`bench: ${err.message}\n${USAGE}\n`);
  process.exit(2);
}
if (args === 'help') {
  say(USAGE);
} else {
  main(args).then(
    () => process.exit(process.exitCode ?? 0),
    (err: unknown) => {
      process.stderr.write(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exit(1);
    },
  );
}
