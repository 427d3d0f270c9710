/**
 * The exploration: runs with seeds `seed`, `seed + 1`, … until at least `points` crash points
 * have fired, and the sum of what they found. A failing run is reported with its seed; the
 * run replays exactly with `npm run test:crash -- --seed <seed>`.
 */
import { COUNT_NAMES, zeroCounts, type Counts } from './checks.js';
import { failed, runOnce, zeroGroupFigures, type GroupFigures, type RunOptions, type RunReport } from './run.js';

export interface ExploreOptions extends RunOptions {
  /** Stop once this many crash points have fired. */
  points: number;
  /** Seed of the first run. */
  seed: number;
  /** Give up after this many runs whatever the points (default: points × 2). */
  maxRuns?: number;
  /** Called after each run, e.g. for progress. */
  onRun?(report: RunReport, summary: ExploreSummary): void;
}

export interface ExploreSummary {
  firstSeed: number;
  runs: number;
  points: number;
  /** Crash points by kind. */
  pointKinds: Record<string, number>;
  counts: Counts;
  /** Per count: how many runs had it. */
  runsWith: Counts;
  failures: RunReport[];
  /** The group snapshot lifecycles' figures, summed. */
  groups: GroupFigures;
  /** Stuck attachments given up and made again; of them, before the driver's 90 s. */
  stuckGivenUp: number;
  stuckGivenUpEarly: number;
  steps: number;
  requests: number;
  ms: number;
}

/** The kind of a crash point, from its description. */
export function pointKind(description: string): string {
  const lost = /^lost answer of (\w+)/.exec(description);
  if (lost) return `EC2 answer lost after ${lost[1]}`;
  if (description.startsWith('forwarder crash applying')) {
    const m = /: (\d+) of (\d+) writes applied/.exec(description);
    const of = description.startsWith('forwarder crash applying group content')
      ? ' of a group content'
      : description.startsWith('forwarder crash applying copy annotation')
        ? ' writing a copy annotation'
        : '';
    if (m && m[1] === '0') return `forwarder crash before the first write${of}`;
    if (m && m[1] === m[2]) return `forwarder crash after the last write${of}`;
    return `forwarder crash between writes${of}`;
  }
  if (description.startsWith('forwarder restart')) return 'forwarder restart';
  if (description.startsWith('item sent twice')) return 'same item sent twice at once';
  if (description.startsWith('group content item sent twice')) return "same group content's item sent twice at once";
  if (description.startsWith('claim ')) return "claim's item with its claim-deleted item";
  if (description.startsWith('a disk left')) return 'leftover disk of a gone claim and its snapshot (audit)';
  return 'other';
}

export async function explore(options: ExploreOptions): Promise<ExploreSummary> {
  const started = performance.now();
  const summary: ExploreSummary = {
    firstSeed: options.seed,
    runs: 0,
    points: 0,
    pointKinds: {},
    counts: zeroCounts(),
    runsWith: zeroCounts(),
    failures: [],
    groups: zeroGroupFigures(),
    stuckGivenUp: 0,
    stuckGivenUpEarly: 0,
    steps: 0,
    requests: 0,
    ms: 0,
  };
  const maxRuns = options.maxRuns ?? Math.max(10, options.points * 2);
  for (let i = 0; summary.points < options.points && i < maxRuns; i++) {
    const report = await runOnce(options.seed + i, options);
    summary.runs++;
    summary.points += report.points.length;
    summary.steps += report.steps;
    summary.requests += report.requests;
    for (const p of report.points) {
      const kind = pointKind(p);
      summary.pointKinds[kind] = (summary.pointKinds[kind] ?? 0) + 1;
    }
    for (const key of Object.keys(summary.groups) as (keyof GroupFigures)[]) summary.groups[key] += report.groups[key];
    summary.stuckGivenUp += report.stuckGivenUp;
    summary.stuckGivenUpEarly += report.stuckGivenUpEarly;
    for (const key of Object.keys(summary.counts) as (keyof Counts)[]) {
      summary.counts[key] += report.counts[key];
      if (report.counts[key] > 0) summary.runsWith[key]++;
    }
    if (failed(report)) summary.failures.push({ ...report, trace: report.trace });
    summary.ms = performance.now() - started;
    options.onRun?.(report, summary);
  }
  summary.ms = performance.now() - started;
  return summary;
}

function seconds(ms: number): string {
  return ms < 60_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}

/** The table of counts, the crash points by kind, and the time. */
export function formatSummary(s: ExploreSummary): string {
  const lines: string[] = [];
  lines.push(
    `crash explorer: ${s.points} crash points in ${s.runs} runs (seeds ${s.firstSeed}–${s.firstSeed + s.runs - 1}), ${s.steps} forwarder steps, ${s.requests} requests, ${seconds(s.ms)}`,
  );
  lines.push('');
  const width = Math.max(...Object.values(COUNT_NAMES).map((name) => name.length)) + 2;
  lines.push(`  ${'check'.padEnd(width)}${'count'.padStart(7)}${'runs'.padStart(7)}`);
  for (const key of Object.keys(COUNT_NAMES) as (keyof Counts)[]) {
    lines.push(`  ${COUNT_NAMES[key].padEnd(width)}${String(s.counts[key]).padStart(7)}${String(s.runsWith[key]).padStart(7)}`);
  }
  const g = s.groups;
  lines.push('');
  lines.push(
    `  group snapshots: ${g.lifecycles} lifecycles (${g.lifecycles - g.split} on one node, ${g.split} across two nodes), ${g.createSnapshots} CreateSnapshots making ${g.snapshots} snapshots, ${g.restores} members restored, ${g.deletedDelete + g.deletedRetain} groups deleted (${g.deletedDelete} Delete, ${g.deletedRetain} Retain; ${g.deletedEarly} before the teardown)`,
  );
  lines.push(`  attachments stuck attaching given up and made again: ${s.stuckGivenUp} (${s.stuckGivenUpEarly} before the driver's 90 s, on EC2's evidence)`);
  lines.push('');
  lines.push('  crash points by kind:');
  for (const [kind, n] of Object.entries(s.pointKinds).sort((a, b) => b[1] - a[1])) lines.push(`    ${String(n).padStart(5)}  ${kind}`);
  return lines.join('\n');
}

/** The failing runs, each with its seed, scenario, crash points and findings. */
export function formatFailures(s: ExploreSummary, max = 10): string {
  if (s.failures.length === 0) return 'no failing run';
  const lines = [`${s.failures.length} of ${s.runs} runs failed; the first ${Math.min(max, s.failures.length)}:`];
  for (const r of s.failures.slice(0, max)) lines.push(...formatRun(r, 6));
  lines.push('', 'replay one (scenario, crash points, findings and trace): npm run test:crash -- --seed <seed>');
  return lines.join('\n');
}

export function formatRun(r: RunReport, maxFindings = Infinity): string[] {
  const bad = (Object.keys(COUNT_NAMES) as (keyof Counts)[]).filter((k) => r.counts[k] > 0).map((k) => `${COUNT_NAMES[k]} ${r.counts[k]}`);
  const lines = [``, `seed ${r.seed}: ${bad.join(', ') || 'all checks 0'}`, `  lifecycle: ${r.scenario}`];
  for (const p of r.points) lines.push(`  crash point: ${p}`);
  if (r.points.length === 0) lines.push('  crash point: none fired');
  for (const f of r.findings.slice(0, maxFindings)) lines.push(`  ${f}`);
  if (r.findings.length > maxFindings) lines.push(`  … ${r.findings.length - maxFindings} more`);
  for (const d of r.diagnostics.slice(0, 3)) lines.push(`  (diagnostic) ${d}`);
  return lines;
}
