/**
 * The seeded, small version of the bench's scenario (e), what volhook costs at rest
 * (bench/lib/rest-cost.ts; `npm run bench -- --only e` binds 5,000 volumes over 5 clusters):
 * two clusters with their forwarder processes, two backend processes sharing the budget,
 * replay and report tables in moto's DynamoDB, first n and then 2n volumes bound and attached,
 * each followed by an hour at rest passed 150 times faster (a resync every 2 s, the scheduled
 * audit once). What is asserted is what must not grow with the volumes bound: no wall-clock
 * bound.
 */
import { describe, expect, it } from 'vitest';
import { HOUR_SECONDS, RESYNC_SECONDS, runRestCost, type RestResult } from '../../bench/lib/rest-cost.js';
import { parseBenchArgs, REST_SCALE, REST_TIME_SCALE, UsageError } from '../../bench/lib/args.js';
import { REPORT_WITHIN_MAX_SECONDS } from '../../lib/contract/index.js';

const CLUSTERS = 2;
const N = 12;
/** Resyncs an hour: 12. */
const RESYNCS = HOUR_SECONDS / RESYNC_SECONDS;
/** Reports an hour a cluster without marks is asked for: 2 (the backend scales the interval as the forwarders' resync). */
const REPORTS = HOUR_SECONDS / REPORT_WITHIN_MAX_SECONDS;
/** The EC2 actions of the hourly audit: its paged describes of the cluster's disks and snapshots. */
const AUDIT_ACTIONS = ['DescribeSnapshots', 'DescribeVolumes'];

const run = (n: number) => runRestCost({ n, clusters: CLUSTERS, backends: 2, timeScale: 20, restScale: 150, seed: 46, timeoutMs: 240_000, log: () => undefined });

describe('what volhook costs at rest (seeded, small)', () => {
  it('an hour at rest with n and with 2n volumes: EC2 only the audit describes, not growing; fewer than one request per cluster per resync (the report digest, within REPORT_WITHIN_MAX_SECONDS: no marks); DynamoDB writes not growing', async () => {
    const small = await run(N);
    const large = await run(2 * N);
    const context = (r: RestResult) => JSON.stringify({ ec2: r.ec2.actions, requests: r.backendRequests, items: r.itemsByKind, writes: r.dynamodbWrites.byTable, audit: r.audit });
    for (const r of [small, large]) {
      expect(r.readyMs, context(r)).toBeDefined();
      // The control: the audit ran in the hour and its calls were counted.
      expect(r.audit.map((a) => a.outcome), context(r)).toEqual(['audited', 'audited']);
      expect(r.ec2.total.calls, context(r)).toBeGreaterThan(0);
      expect(Object.keys(r.ec2.actions).sort(), context(r)).toEqual(AUDIT_ACTIONS);
      // Only the report went out (its digest, as often as the backend asked): no settled claim, volume or attachment sent again.
      expect(Object.keys(r.itemsByKind), context(r)).toEqual(['VolumeReport']);
      for (const [cluster, requests] of Object.entries(r.backendRequests.byCluster)) {
        // Two digests an hour, and one more for the window's phase against the resync timer: fewer than one a resync.
        expect(requests, `${cluster}: ${context(r)}`).toBeGreaterThan(0);
        expect(requests, `${cluster}: ${context(r)}`).toBeLessThanOrEqual(REPORTS + 1);
        expect(requests, `${cluster}: ${context(r)}`).toBeLessThan(RESYNCS);
      }
      expect(Object.keys(r.backendRequests.byRoute).every((route) => /^POST \/v1\/clusters\/[^/]+\/reconcile$/.test(route)), context(r)).toBe(true);
      // Per request: its webhook id (replay), the report confirmed, at most a verification record; no Events
      // queued, none taken (the confirmation said so).
      const perRequest = (r.dynamodbWrites.byTable['volhook-rest-replay'] ?? 0) + (r.dynamodbWrites.byTable['volhook-rest-reports'] ?? 0);
      expect(perRequest, context(r)).toBeLessThanOrEqual(3 * r.backendRequests.total);
      // Each on a small item: the report is an item of its own, not written at rest.
      expect(r.dynamodbWriteUnits.largestItemBytes, context(r)).toBeLessThan(1024);
      expect(r.dynamodbWriteUnits.units, context(r)).toBeLessThanOrEqual(r.dynamodbWrites.total);
      // The budget: a token per EC2 call.
      expect(r.dynamodbWrites.byTable['volhook-rest-budget'] ?? 0, context(r)).toBeLessThanOrEqual(r.ec2.total.calls);
    }
    // Twice the volumes: not one EC2 call, request or DynamoDB write more (but the phase of one resync per cluster).
    expect(large.ec2.total.calls, `${context(small)}\n${context(large)}`).toBeLessThanOrEqual(small.ec2.total.calls);
    expect(large.backendRequests.total, `${context(small)}\n${context(large)}`).toBeLessThanOrEqual(small.backendRequests.total + CLUSTERS);
    expect(large.dynamodbWrites.total, `${context(small)}\n${context(large)}`).toBeLessThanOrEqual(small.dynamodbWrites.total + 3 * CLUSTERS);
  }, 600_000);
});

describe('bench --only e', () => {
  it('--only e -> 5,000 volumes over 5 clusters, 1 backend, at its time and rest scales; --n and the flags change each', () => {
    const args = parseBenchArgs(['--only', 'e']);
    expect(args).toMatchObject({ only: ['e'], timeScale: REST_TIME_SCALE, rest: { n: 5000, clusters: 5, backends: 1, restScale: REST_SCALE } });
    expect(args !== 'help' && args.command).toContain(`--n 5000 --time-scale ${REST_TIME_SCALE} --only e --seed 1 --rest-clusters 5 --rest-backends 1 --rest-scale ${REST_SCALE}`);
    expect(parseBenchArgs(['--only', 'e', '--n', '10000', '--rest-clusters', '8', '--rest-scale', '60'])).toMatchObject({ rest: { n: 10000, clusters: 8, restScale: 60 } });
    expect(parseBenchArgs(['--only', 'e', '--quick'])).toMatchObject({ rest: { n: 200, clusters: 2 } });
  });

  it('refused: b and e together without --n (their defaults differ); a rest scale below 1; the rest flags with --peer', () => {
    expect(() => parseBenchArgs(['--only', 'b,e'])).toThrow(/--n sizes both/);
    expect(() => parseBenchArgs(['--only', 'e', '--rest-scale', '0.5'])).toThrow(UsageError);
    expect(() => parseBenchArgs(['--peer', 'ebs-csi', '--rest-clusters', '2'])).toThrow(/--rest-clusters is not implemented with --peer/);
    // The control: the same, in range.
    expect(parseBenchArgs(['--only', 'b,e', '--n', '300', '--rest-scale', '1'])).toMatchObject({ n: 300, rest: { n: 300, restScale: 1 } });
  });
});
