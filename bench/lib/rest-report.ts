/** The figures of scenario (e), an hour at rest (rest-cost.ts), as text. */
import { mib, say, seconds, table } from './format.js';
import { HOUR_SECONDS, RESYNC_SECONDS, type RestResult } from './rest-cost.js';

const fixed = (x: number) => (Number.isInteger(x) ? String(x) : x.toFixed(2));

/** The summary's lines: the hour at rest over the whole cluster set, per cluster, per 1,000 volumes. */
export function restSummaryLines(r: RestResult): string[] {
  const all = { ec2: r.ec2.total.calls, requests: r.backendRequests.total, writes: r.dynamodbWrites.total };
  const line = (label: string, by: number) =>
    `at rest per hour${label}: ec2 calls ${fixed(all.ec2 / by)}, backend requests ${fixed(all.requests / by)}, dynamodb writes ${fixed(all.writes / by)}`;
  const n = r.perCluster.reduce((a, b) => a + b, 0);
  return [line('', 1), line(' per cluster', r.options.clusters), line(' per 1,000 volumes', n / 1000)];
}

/** Backend requests of the cluster that sent the most, per resync period of the hour. */
export function requestsPerResync(r: RestResult): number {
  return Math.max(...Object.values(r.backendRequests.byCluster)) / (HOUR_SECONDS / RESYNC_SECONDS);
}

export function restRows(r: RestResult): string[][] {
  const n = r.perCluster.reduce((a, b) => a + b, 0);
  const o = r.options;
  const label = `(e) ${o.clusters} clusters, ${n} volumes, ${o.backends} backends, seed ${o.seed}`;
  const actions = Object.entries(r.ec2.actions).sort(([, a], [, b]) => b.calls - a.calls).map(([action, s]) => `${action} ${s.calls}`).join(', ') || 'none';
  const cpu = r.forwarders.reduce((sum, f) => sum + f.cpuMs, 0);
  const rows: string[][] = [
    [label, 'all Bound, attached, pods Running', `${seconds(r.readyMs)} (time scale ${o.timeScale})`],
    ['', 'the hour at rest', `${seconds(r.hourWallMs)} of wall time (rest scale ${o.restScale}: a resync every ${seconds(r.resyncWallMs)}, the audit once)`],
    ['', 'EC2 calls per hour', `${r.ec2.total.calls} (${actions})`],
    ['', 'EC2 calls per hour per cluster / per volume', `${fixed(r.ec2.total.calls / o.clusters)} / ${(r.ec2.total.calls / n).toFixed(4)}`],
    ['', 'backend requests per hour', `${r.backendRequests.total} (${Object.entries(r.backendRequests.byCluster).map(([c, k]) => `${c} ${k}`).join(', ')})`],
    ['', 'backend requests by route', Object.entries(r.backendRequests.byRoute).map(([route, k]) => `${route} ${k}`).join(', ') || 'none'],
    ['', 'items sent in the hour, by kind', Object.entries(r.itemsByKind).map(([kind, k]) => `${kind} ${k}`).join(', ') || 'none'],
    ['', 'backend requests per cluster per resync (most)', requestsPerResync(r).toFixed(2)],
    ['', 'backend requests per hour per volume', (r.backendRequests.total / n).toFixed(4)],
    ['', 'DynamoDB writes per hour', `${r.dynamodbWrites.total} (${Object.entries(r.dynamodbWrites.byTable).map(([t, k]) => `${t} ${k}`).join(', ')})`],
    ['', 'DynamoDB writes by operation', Object.entries(r.dynamodbWrites.byOperation).map(([op, k]) => `${op} ${k}`).join(', ') || 'none'],
    ['', 'DynamoDB writes per hour per cluster / per volume', `${fixed(r.dynamodbWrites.total / o.clusters)} / ${(r.dynamodbWrites.total / n).toFixed(4)}`],
    ['', 'DynamoDB write units per hour (1 per KB of item)', `${r.dynamodbWriteUnits.units} (largest item written ${(r.dynamodbWriteUnits.largestItemBytes / 1024).toFixed(1)} KB)`],
    ['', 'forwarder CPU per hour, all / per cluster', `${(cpu / 1000).toFixed(2)} s / ${(cpu / 1000 / o.clusters).toFixed(2)} s`],
    ['', 'forwarder RSS at the end (max) / peak', `${mib(Math.max(...r.forwarders.map((f) => f.rss)))} / ${mib(Math.max(...r.forwarders.map((f) => f.peakRss)))}`],
    ['', 'audit', r.audit.map((a) => `${a.clusterId} ${a.outcome}${a.detail ? ` (${a.detail})` : ''}`).join(', ')],
  ];
  return rows;
}

export function printRest(r: RestResult): void {
  say(table(['scenario', 'figure', 'value'], restRows(r), { alignNumbers: false }));
  say(
    table(
      ['forwarder', 'volumes', 'CPU in the hour', 'RSS at the end', 'peak RSS'],
      r.forwarders.map((f, i) => [f.clusterId, String(r.perCluster[i]), `${(f.cpuMs / 1000).toFixed(2)} s`, mib(f.rss), mib(f.peakRss)]),
    ),
  );
}
