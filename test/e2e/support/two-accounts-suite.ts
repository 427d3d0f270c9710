/**
 * Two clusters in two accounts behind one backend (issue 23, e2e), run against the simulator
 * (accounts.test.ts: IAM evaluated, the member role's ExternalId checked) and against moto
 * (accounts-moto.test.ts: accounts told apart by credentials, no IAM): each cluster provisions,
 * attaches and reclaims in its own account, in its own session; the audit of each sees only
 * its account; the rate budget keeps the accounts' buckets apart, so a burst that keeps one
 * account's buckets empty does not take a token from the other's. Real clients over HTTP
 * throughout: the Kubernetes client against each cluster's API, the SDK's EC2 and STS, the
 * forwarders against the backend.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { auditAllClusters, type AuditResult } from '../../../lib/audit/index.js';
import { CLOCK_SKEW_MS } from '../../../lib/audit/findings.js';
import { identityTags } from '../../../lib/contract/index.js';
import { createClusterClients, createClusterSessions, createEc2Gateway } from '../../../lib/ec2/index.js';
import { THROTTLING_BUCKETS } from '../../../lib/ec2/throttling.js';
import { BACKEND_CREDENTIALS } from '../../../lib/local/stack/stack.js';
import { createStaticRegistry } from '../../../lib/registry/index.js';
import { MEMBER_ACCOUNT, OWN_ACCOUNT, REGION, type FleetCluster, type TwoAccounts } from './accounts.js';
import { freshReport } from './audit.js';
import { volumeById } from './ec2.js';
import { provisionForPod, reclaimPolicies } from './scenarios.js';

/** The suite's tests, in the calling describe, over the fleet `start` brings up. */
export function twoAccountsSuite(start: () => Promise<TwoAccounts>): void {
  let fleet: TwoAccounts;
  /** More tokens than any bucket holds (THROTTLING_BUCKETS' capacities are at most 100). */
  const BURST = 1_000;

  beforeAll(async () => {
    fleet = await start();
  }, 120_000);
  afterAll(async () => fleet?.stop(), 30_000);

  const both = () => [fleet.own, fleet.member] as const;
  const other = (c: FleetCluster) => (c === fleet.own ? fleet.member : fleet.own);

  it("each provisions and attaches in its own account, in its own session: the disk exists in its account only, every token is its account's", async () => {
    for (const cluster of both()) {
      const mark = fleet.takes.length;
      const { volumeId } = await provisionForPod(cluster.ctx, `own-account-${cluster.account}`);
      // The operator of the other account does not see it: it is in this account alone.
      expect(await volumeById(other(cluster).ctx.ec2, volumeId)).toBeUndefined();
      expect(new Set(fleet.takes.slice(mark).map((t) => t.key.account))).toEqual(new Set([cluster.account]));
    }
    // One session per cluster: AssumeRole of each role once, the member's with its ExternalId.
    expect(fleet.sessions.stats()).toMatchObject({ assumeRoleCalls: 2, assumeRoleFailures: 0 });
  }, 180_000);

  it('each reclaims in its own account: Delete deletes the disk and the PV, Retain keeps both', async () => {
    for (const cluster of both()) await reclaimPolicies(cluster.ctx, `reclaim-${cluster.account}`);
  }, 240_000);

  it("the audit of each sees only its account: its orphan, not the other account's, nor a disk tagged for it in the other account", async () => {
    const orphans: Record<string, string> = {};
    for (const cluster of both()) {
      const id = cluster.ctx.clusterId;
      orphans[id] = await fleet.seedOrphan(cluster, identityTags(id, `pvc-orphan-${id}`));
      // A disk tagged for this cluster, in the other account: not this cluster's to audit.
      await fleet.seedOrphan(other(cluster), identityTags(id, `pvc-stray-${id}`));
    }
    // A report the audit may judge them by: dated more than the allowed clock skew after they
    // were made (where they could not be made older, as on moto; the grace is 1 s).
    const after = Date.now() + CLOCK_SKEW_MS;
    for (const cluster of both()) await freshReport(cluster.stack, after, fleet.reports);

    const sessions = createClusterSessions({ stsClient: { endpoint: fleet.url, region: REGION, credentials: BACKEND_CREDENTIALS } });
    const clients = createClusterClients({ sessions, defaultRoleArn: fleet.ownRoleArn, endpoint: fleet.url });
    const results: AuditResult[] = [];
    const outcomes = await auditAllClusters({
      registry: createStaticRegistry(both().map((c) => c.registration)),
      reports: fleet.reports,
      gatewayFor: (registration) => createEc2Gateway({ client: clients.for(registration).client, clusterId: registration.clusterId, deadline: Date.now() + 60_000 }),
      onResult: (result) => void results.push(result),
      onSkipped: (clusterId, why) => expect.fail(`${clusterId} skipped: ${why}`),
    });
    clients.destroy();
    expect(outcomes.map((o) => o.outcome)).toEqual(['audited', 'audited']);
    for (const cluster of both()) {
      const result = results.find((r) => r.clusterId === cluster.ctx.clusterId)!;
      expect(result.orphans.map((o) => o.volumeId)).toEqual([orphans[cluster.ctx.clusterId]]);
      // Every disk it audited is in its own account.
      const inOwnAccount = await Promise.all(result.orphans.map((o) => volumeById(cluster.ctx.ec2, o.volumeId)));
      expect(inOwnAccount.every((v) => v !== undefined)).toBe(true);
    }
  }, 120_000);

  it("the budget keeps the accounts apart: a burst keeps the member account's buckets empty -> its next token is refused, while the own account's claim provisions without one refused token", async () => {
    const drain = () => Promise.all(Object.keys(THROTTLING_BUCKETS).map((bucket) => fleet.budget.take({ account: MEMBER_ACCOUNT, region: REGION, bucket }, BURST)));
    await drain();
    // The control: the burst does empty the member account's buckets.
    expect((await fleet.budget.take({ account: MEMBER_ACCOUNT, region: REGION, bucket: 'CreateVolume' }, 1)).granted).toBe(0);
    const burst = setInterval(() => void drain(), 25);
    const mark = fleet.takes.length;
    try {
      await provisionForPod(fleet.own.ctx, 'after-burst');
    } finally {
      clearInterval(burst);
    }
    const ownTakes = fleet.takes.slice(mark).filter((t) => t.key.account === OWN_ACCOUNT);
    expect(ownTakes.length).toBeGreaterThan(0);
    expect(ownTakes.filter((t) => t.granted < t.wanted)).toEqual([]);
  }, 180_000);
}
