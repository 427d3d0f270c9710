/** The figures of scenario (d), a fleet under load and faults (fleet-faults.ts), as text. */
import { COUNT_NAMES, type Counts } from '../../test/crash/checks.js';
import type { FleetResult } from './fleet-faults.js';
import { percent, ratio, say, seconds, table } from './format.js';
import { percentile } from './stats.js';

/** The judges that must all be 0 (IAM and ownership are not this scenario's subject, but must be 0 too). */
export const FLEET_JUDGES: readonly (keyof Counts)[] = ['leaked', 'duplicate', 'wronglyDeleted', 'wronglyDetached', 'attachedWithoutVa', 'notConverged', 'unauthorized', 'copiedForeign', 'touchedNotAdopted'];

export function fleetRows(r: FleetResult): string[][] {
  const label = `(d) ${r.options.clusters}×${r.options.perCluster} claims, ${r.options.backends} backends, ${r.options.faults ? 'faults' : 'no faults'}, seed ${r.options.seed}`;
  const ec2 = r.ec2.total;
  const describes = r.ec2.actions.DescribeVolumes?.calls ?? 0;
  const times = (pick: (c: FleetResult['claims'][number]) => number | undefined) => r.claims.map(pick).filter((t): t is number => t !== undefined);
  const p = (values: number[]) => `${seconds(percentile(values, 0.5))} / ${seconds(percentile(values, 0.95))}`;
  const rows: string[][] = [
    [label, 'all Bound + attached', seconds(r.readyMs)],
    ['', 'token-bucket floor', seconds(r.floorSeconds * 1000)],
    ['', 'time ÷ floor', r.readyMs !== undefined && r.floorSeconds > 0 ? `${ratio(r.readyMs / 1000 / r.floorSeconds)}${r.options.timeScale !== 1 ? ` (time scale ${r.options.timeScale}: EC2's latencies and refill scaled, and the waits volhook sets by them: its send cadence, its looks at a volume creating or attaching)` : ''}` : '—'],
    ...(r.stuckAtSeconds.length > 0
      ? [
          ['', 'time ÷ floor, claims never stuck', r.readyUnstuckMs !== undefined && r.floorSeconds > 0 ? ratio(r.readyUnstuckMs / 1000 / r.floorSeconds) : '—'],
          ['', 'stuck attachments began at', r.stuckAtSeconds.map((s) => `${s.toFixed(0)} s`).join(', ')],
          ['', 'stuck attachments given up', `${r.stuckGivenUp.all} (${r.stuckGivenUp.early} early on EC2's evidence, ${r.stuckGivenUp.all - r.stuckGivenUp.early} at the driver's 90 s ÷ ${r.options.timeScale})`],
        ]
      : []),
    ['', 'all settled (pods Running)', seconds(r.settledMs)],
    ['', 'everything deleted in', seconds(r.deletedMs)],
    ['', 'time to Bound p50 / p95', p(times((c) => c.boundMs))],
    ['', 'time to attached p50 / p95', p(times((c) => c.attachedMs))],
    ['', 'EC2 calls (throttled)', `${ec2.calls} (${ec2.throttled}, ${percent(ec2.throttled, ec2.calls)})`],
    ...(ec2.throttled > 0 ? [['', 'throttled by action', throttledByAction(r)]] : []),
    ['', 'DescribeVolumes per volume', (describes / r.n).toFixed(2)],
    ['', 'backend requests per volume', (r.backendRequests / r.n).toFixed(2)],
  ];
  if (r.options.faults) {
    const refused = Object.entries(r.faults.refused).map(([code, n]) => `${code} ${n}`).join(', ') || 'none';
    const lost = Object.entries(r.faults.lostAnswers).map(([action, n]) => `${action} ${n}`).join(', ') || 'none';
    rows.push(['', 'faults: EC2 refused', refused]);
    rows.push(['', 'faults: answers lost after EC2 acted', lost]);
    rows.push(['', 'faults: attachments stuck attaching', String(r.faults.stuckAttachments)]);
    rows.push(['', 'faults: watch streams expired (410)', String(r.faults.watchesExpired)]);
    for (const d of r.disruptions) rows.push(['', `at ${d.atSeconds.toFixed(0)} s`, d.what]);
  }
  rows.push(['', 'judges', FLEET_JUDGES.map((k) => `${COUNT_NAMES[k]} ${r.counts[k]}`).join(', ')]);
  return rows;
}

function throttledByAction(r: FleetResult): string {
  return Object.entries(r.ec2.actions)
    .filter(([, s]) => s.throttled > 0)
    .map(([action, s]) => `${action} ${s.throttled} of ${s.calls}`)
    .join(', ');
}

export function printFleet(r: FleetResult): void {
  say(table(['scenario', 'figure', 'value'], fleetRows(r), { alignNumbers: false }));
  for (const finding of r.findings.slice(0, 20)) say(`  ${finding}`);
  if (r.findings.length > 20) say(`  … and ${r.findings.length - 20} more findings`);
}
