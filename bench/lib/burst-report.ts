/** How a burst's figures are printed: milestones, per-claim percentiles, EC2 calls, what volhook did. */
import { callsOf, ec2Table } from './ec2-summary.js';
import { percent, ratio, say, seconds, table } from './format.js';
import type { BurstResult } from './provision.js';
import { percentile } from './stats.js';

export const SCALE_NOTE =
  'time scale ≠ 1 scales only the simulator (latencies ÷ scale, bucket refill × scale); volhook\'s own delays ' +
  '(forwarder backoff 1 s → 5 min, requeue intervals, SDK retry back-off, resync) are NOT scaled, so time ÷ floor ' +
  'is not comparable with a time-scale-1 run.';

type Pick = (c: BurstResult['claims'][number]) => number | undefined;

export function latencyRow(result: BurstResult, what: string, pick: Pick): string[] {
  const values = result.claims.map(pick).filter((v): v is number => v !== undefined);
  const missing = result.claims.length - values.length;
  return [
    what,
    seconds(percentile(values, 0.5), 2),
    seconds(percentile(values, 0.95), 2),
    seconds(values.length ? Math.max(...values) : undefined, 2),
    missing ? `${missing} never` : '',
  ];
}

export function printBurst(result: BurstResult, title: string): void {
  const { n } = result;
  say();
  say(`${title}: ${n} PVC${n === 1 ? '' : 's'} + pod${n === 1 ? '' : 's'} (gp3, WaitForFirstConsumer) on ${result.nodes} nodes, time scale ${result.timeScale}`);
  if (result.timeScale !== 1) say(`  NOTE: ${SCALE_NOTE}`);
  if (result.timedOut) {
    const reached = (pick: Pick) => result.claims.filter((c) => pick(c) !== undefined).length;
    say(
      `  TIMED OUT: the figures below are partial. Reached: Bound ${reached((c) => c.boundMs)}/${n}, ` +
        `attached ${reached((c) => c.attachedMs)}/${n}, Running ${reached((c) => c.runningMs)}/${n}.`,
    );
  }
  say(`  objects created in ${result.createMs.toFixed(0)} ms (in-process); stack setup ${seconds(result.setupMs)} (not counted)`);
  const ready = result.readyMs;
  say(`  all Bound + attached: ${seconds(ready)}   token-bucket floor: ${seconds(result.floorSeconds * 1000)}   time ÷ floor: ${result.floorSeconds > 0 ? ratio(ready === undefined ? undefined : ready / 1000 / result.floorSeconds) : '— (n ≤ 100: no floor)'}`);
  say(`  all pods Running:     ${seconds(result.runningMs)}`);
  const when = (action: string, at: 'firstOkMs' | 'lastOkMs') => seconds(result.ec2.actions[action]?.[at]);
  say(`  first CreateVolume at ${when('CreateVolume', 'firstOkMs')}, first AttachVolume at ${when('AttachVolume', 'firstOkMs')}, last AttachVolume at ${when('AttachVolume', 'lastOkMs')}`);
  say();
  say(
    table(
      ['per PVC (from its creation)', 'p50', 'p95', 'max', ''],
      [
        latencyRow(result, 'time to Bound', (c) => c.boundMs),
        latencyRow(result, 'time to attached', (c) => c.attachedMs),
        latencyRow(result, 'time to pod Running', (c) => c.runningMs),
      ],
    ),
  );
  say();
  say(ec2Table(result.ec2));
  const describes = callsOf(result.ec2, 'DescribeVolumes');
  say(`  DescribeVolumes calls per volume: ${(describes / n).toFixed(2)}   EC2 calls per volume: ${(result.ec2.total.calls / n).toFixed(2)}`);
  say();
  const d = result.diagnostics;
  const requests = Object.entries(result.forwarderRequests).filter(([k]) => !k.endsWith(' seconds'));
  const latency = Object.entries(result.forwarderRequests).filter(([k]) => k.endsWith(' seconds')).reduce((sum, [, v]) => sum + v, 0);
  const items = d.outcomes.total;
  const sent = requests.reduce((sum, [, v]) => sum + v, 0);
  say(
    `  forwarder → backend: ${sent} requests (${requests.map(([s, v]) => `${s}: ${v}`).join(', ') || 'none'}), mean latency ${sent ? `${(latency / sent).toFixed(2)} s` : '—'}, ` +
      `${items} items answered (${sent ? (items / sent).toFixed(1) : '—'} per request)`,
  );
  say(`  backend outcomes:    ${d.outcomes.top().map(([k, v]) => `${k} ${v}`).join(', ') || 'none'}`);
  if (d.failures.total) say(`  failed reasons:      ${d.failures.top(6).map(([k, v]) => `${k} ${v}`).join(', ')}`);
  if (d.requeues.total) say(`  requeue messages:    ${d.requeues.top(4).map(([k, v]) => `${v}× ${k}`).join(' | ')}`);
  if (d.forwarderLogs.total) say(`  forwarder warnings:  ${d.forwarderLogs.top(5).map(([k, v]) => `${v}× ${k}`).join(' | ')}`);
  if (d.controllerErrors.total) {
    say(`  controller errors:   ${d.controllerErrors.top().map(([k, v]) => `${k} ${v}`).join(', ')}`);
    for (const sample of d.controllerErrorSamples) say(`    e.g. ${sample}`);
  }
  const l = result.load;
  say(
    `  bench process (stack in-process): CPU ${percent(l.cpuShare, 1)} of one core; event-loop delay p50 ${l.loopP50Ms.toFixed(1)} ms, ` +
      `p99 ${l.loopP99Ms.toFixed(1)} ms, max ${l.loopMaxMs.toFixed(0)} ms`,
  );
}
