/**
 * `npm run bench:audit`: the audit of one cluster with 10,000 volumes, against the EC2
 * simulator over HTTP (AWS's latencies and request buckets, time scale 1), through the real
 * SDK gateway — what the scheduled function does for one cluster. Reports the DescribeVolumes
 * calls it made (EC2 serves 500 a page: 20 pages, plus the look-ups by ID of the disks the
 * report names that the listing lacks), the wall time, and the heap it took. Figures only.
 *
 *   npm run bench:audit [-- --volumes 10000 --orphans 10 --lost 5]
 */
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { runAudit } from '../lib/audit/index.js';
import { identityTags } from '../lib/contract/index.js';
import { createEc2Client, createEc2Gateway } from '../lib/ec2/index.js';
import { startEc2Simulator } from '../lib/local/ec2/index.js';
import { createMemoryReportStore } from '../lib/reports/index.js';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
const { values } = parseArgs({ options: { volumes: { type: 'string' }, orphans: { type: 'string' }, lost: { type: 'string' } } });
const count = (name: string, value: string | undefined, fallback: number) => {
  const n = value === undefined ? fallback : Number(value);
  if (!Number.isInteger(n) || n < 0) throw new Error(`--${name} needs a whole number, not "${value}"`);
  return n;
};
const volumes = count('volumes', values.volumes, 10_000);
const orphans = count('orphans', values.orphans, 10);
const lost = count('lost', values.lost, 5);

const clusterId = 'bench';
const region = 'us-east-1';
const sim = await startEc2Simulator({ region, seed: 1 });
try {
  const twoHoursAgo = new Date(Date.now() - 2 * 3_600_000).toISOString();
  const uids = Array.from({ length: volumes }, () => randomUUID());
  const made = uids.map(
    (uid, n) =>
      sim.sim.seedVolumes({
        zone: `${region}${'abc'[n % 3]}`,
        sizeGiB: 8,
        createdAt: twoHoursAgo,
        tags: identityTags(clusterId, `pvc-${uid}`),
      })[0]!,
  );
  // The cluster names every disk but the orphans, and a few disks that no longer exist.
  const reports = createMemoryReportStore();
  const named = made.slice(orphans).map((v, n) => ({ pv: `pvc-${uids[n + orphans]}`, volumeId: v.id, reclaimPolicy: 'Delete', phase: 'Bound' }));
  const gone = Array.from({ length: lost }, (_, n) => ({ pv: `pvc-lost-${n}`, volumeId: `vol-${String(n).padStart(17, 'f')}`, reclaimPolicy: 'Delete', phase: 'Bound' }));
  const at = Date.now();
  await reports.put({ clusterId, digest: '0'.repeat(64), observedAt: at, receivedAt: at, report: { volumes: [...named, ...gone], attachments: [], claims: [] } });

  const client = createEc2Client({ region, endpoint: sim.url, credentials: { accessKeyId: 'bench', secretAccessKey: 'bench' } });
  sim.sim.resetStats();
  const heapBefore = process.memoryUsage().heapUsed;
  const started = performance.now();
  const result = await runAudit({
    clusterId,
    region,
    // The scheduled function's deadline: the invocation's 600 s less its margin.
    gateway: createEc2Gateway({ client, clusterId, deadline: Date.now() + 570_000 }),
    reports,
    graceMs: 3_600_000,
    delete: false,
  });
  const ms = performance.now() - started;
  const heapMiB = (process.memoryUsage().heapUsed - heapBefore) / 1024 / 1024;
  const stats = sim.sim.getStats();
  const describes = stats.actions.DescribeVolumes;
  client.destroy();

  console.log(`audit of ${volumes} volumes (${orphans} orphaned, ${lost} lost) against the EC2 simulator, time scale 1
  DescribeVolumes calls: ${describes?.calls ?? 0} (throttled ${describes?.throttled ?? 0})
  findings:              ${result.orphans.length} orphans (${result.totals.orphanedGiB} GiB, $${result.totals.orphanedMonthlyUsd}/month), ${result.lost.length} lost, ${result.drift.length} drift
  wall time:             ${(ms / 1000).toFixed(2)} s (the function's timeout: 600 s)
  heap growth:           ${heapMiB.toFixed(0)} MiB`);
  if (result.orphans.length !== orphans || result.lost.length !== lost) throw new Error('the audit did not find what was seeded');
} finally {
  await sim.close();
}
