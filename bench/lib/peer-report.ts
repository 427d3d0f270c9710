/**
 * The side-by-side summary of `npm run bench -- --peer ebs-csi`: one row per stack (time ÷
 * the token-bucket floor of its create phase, throttled share of EC2 calls, p50/p95 to Bound
 * and to attached, the controllers' CPU seconds and summed peak memory, each phase's time),
 * then one row per stack of EC2 calls per volume by action, then what each left behind.
 */
import type { Ec2SimStats } from '../../lib/local/ec2/index.js';
import { mib, percent, ratio, say, seconds, table } from './format.js';
import type { WorkloadResult } from './peer-workload.js';
import { percentile, tokenBucketFloorSeconds } from './stats.js';

const p5095 = (values: Array<number | undefined>) => {
  const known = values.filter((v): v is number => v !== undefined);
  const missing = values.length - known.length;
  return `${seconds(percentile(known, 0.5))} / ${seconds(percentile(known, 0.95))}${missing > 0 ? ` (${missing} never)` : ''}`;
};

/** The create phase's time over its floor. Pure. */
export function timeOverFloor(result: WorkloadResult, timeScale: number): number | undefined {
  const create = result.phases.find((p) => p.name === 'create');
  const floor = tokenBucketFloorSeconds(result.n, timeScale);
  if (!create?.ms || floor <= 0) return undefined;
  return create.ms / 1000 / floor;
}

/** Calls per volume by action, the actions any stack called, in a stable order. Pure. */
export function callsPerVolume(results: readonly WorkloadResult[]): { actions: string[]; rows: string[][] } {
  const actions = [...new Set(results.flatMap((r) => Object.keys(r.ec2.actions)))].sort();
  const rows = results.map((r) => [r.stack, ...actions.map((a) => (r.volumes > 0 ? ((r.ec2.actions[a]?.calls ?? 0) / r.volumes).toFixed(2) : '—'))]);
  return { actions, rows };
}

const throttled = (ec2: Ec2SimStats) => percent(ec2.total.throttled, ec2.total.calls);

export function printPeerSummary(results: readonly WorkloadResult[], timeScale: number): void {
  say('\nsummary');
  const phaseNames = ['create', 'expand', 'snapshot', 'restore', 'delete'] as const;
  say(
    table(
      ['stack', 'time ÷ floor', 'throttled', 'Bound p50 / p95', 'attached p50 / p95', 'CPU', 'peak memory', ...phaseNames],
      results.map((r) => {
        const cpu = r.controllers.reduce((s, c) => s + (c.cpuMs ?? 0), 0);
        const peak = r.controllers.reduce((s, c) => s + (c.peakBytes ?? 0), 0);
        return [
          r.stack,
          ratio(timeOverFloor(r, timeScale)),
          throttled(r.ec2),
          p5095(r.claims.map((c) => c.boundMs)),
          p5095(r.claims.map((c) => c.attachedMs)),
          `${(cpu / 1000).toFixed(1)} s`,
          mib(peak),
          ...phaseNames.map((name) => {
            const p = r.phases.find((x) => x.name === name);
            return p ? (p.timedOut ? 'TIMEOUT' : `${seconds(p.ms)} (${p.count})`) : '—';
          }),
        ];
      }),
      { alignNumbers: false },
    ),
  );
  const { actions, rows } = callsPerVolume(results);
  say('\n  EC2 calls per volume (claims + restores), by action');
  say(table(['stack', ...actions], rows));
  say('\n  controllers (CPU s / peak memory, VmHWM)');
  for (const r of results) say(`  ${r.stack}: ${r.controllers.map((c) => `${c.name} ${c.cpuMs === undefined ? '—' : (c.cpuMs / 1000).toFixed(1)} s / ${mib(c.peakBytes)}`).join(', ')}`);
  say('\n  left in EC2 at the end, refused calls');
  for (const r of results) {
    say(`  ${r.stack}: ${r.leaked.volumes} volumes, ${r.leaked.snapshots} snapshots; UnauthorizedOperation ${r.ec2.total.errors['UnauthorizedOperation'] ?? 0}; ${r.nodes} nodes; floor ${seconds(tokenBucketFloorSeconds(r.n, timeScale) * 1000)}`);
  }
}
