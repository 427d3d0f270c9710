/**
 * Two clusters in two accounts behind one backend (issue 23, e2e): each provisions, attaches
 * and reclaims in its own account, signed with its own session; the audit of each sees only its
 * account; the rate budget keeps the accounts' buckets apart, so a burst that empties one
 * account's buckets does not slow the other's calls. Real clients over HTTP throughout: kubectl's
 * API, the SDK's EC2 and STS against the simulator, the forwarders against the backend.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditAllClusters, type AuditResult } from '../../lib/audit/index.js';
import { identityTags } from '../../lib/contract/index.js';
import { createClusterClients, createClusterSessions, createEc2Gateway } from '../../lib/ec2/index.js';
import { THROTTLING_BUCKETS } from '../../lib/ec2/throttling.js';
import { BACKEND_CREDENTIALS } from '../../lib/local/stack/stack.js';
import { createStaticRegistry } from '../../lib/registry/index.js';
import { freshReport, MEMBER_ACCOUNT, OWN_ACCOUNT, REGION, startTwoAccounts, type FleetCluster, type TwoAccounts } from './support/accounts.js';
import { volumeById } from './support/ec2.js';
import { provisionForPod, reclaimPolicies } from './support/scenarios.js';

let fleet: TwoAccounts;
/** More tokens than any bucket holds (THROTTLING_BUCKETS' capacities are at most 100). */
const BURST = 1_000;

beforeAll(async () => {
  fleet = await startTwoAccounts();
}, 120_000);
afterAll(async () => fleet?.stop(), 30_000);

const both = () => [fleet.own, fleet.member] as const;
const other = (c: FleetCluster) => (c === fleet.own ? fleet.member : fleet.own);

describe('two clusters in two accounts behind one backend', () => {
  it("each provisions and attaches in its own account, in its own session: the disk exists in its account only, every token is its account's", async () => {
    for (const cluster of both()) {
      const mark = fleet.takes.length;
      const { volumeId } = await provisionForPod(cluster.ctx, `own-account-${cluster.account}`);
      // The operator of the other account does not see it: it is in this account alone.
      expect(await volumeById(other(cluster).ctx.ec2, volumeId)).toBeUndefined();
      expect(new Set(fleet.takes.slice(mark).map((t) => t.key.account))).toEqual(new Set([cluster.account]));
    }
    // One session per cluster: AssumeRole of each role once, the member's with its ExternalId.
    expect(fleet.sim.sim.getStats().actions.AssumeRole?.calls).toBe(2);
  }, 180_000);

  it('each reclaims in its own account: Delete deletes the disk and the PV, Retain keeps both', async () => {
    for (const cluster of both()) await reclaimPolicies(cluster.ctx, `reclaim-${cluster.account}`);
  }, 240_000);

  it("the audit of each sees only its account: its orphan, not the other account's, nor a disk tagged for it in the other account", async () => {
    const made = new Date(Date.now() - 2 * 3_600_000).toISOString();
    const orphans: Record<string, string> = {};
    for (const cluster of both()) {
      const id = cluster.ctx.clusterId;
      orphans[id] = (await seed(cluster, identityTags(id, `pvc-orphan-${id}`), made))[0]!;
      // A disk tagged for this cluster, in the other account: not this cluster's to audit.
      await seed(other(cluster), identityTags(id, `pvc-stray-${id}`), made);
    }
    const start = Date.now();
    for (const cluster of both()) await freshReport(fleet, cluster, start);

    const sessions = createClusterSessions({ stsClient: { endpoint: fleet.sim.url, region: REGION, credentials: BACKEND_CREDENTIALS } });
    const clients = createClusterClients({ sessions, defaultRoleArn: fleet.ownRoleArn, endpoint: fleet.sim.url });
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
});

async function seed(cluster: FleetCluster, tags: Record<string, string>, createdAt: string): Promise<string[]> {
  const zone = cluster.ctx.nodes[0]!.zone;
  return fleet.sim.sim.account(cluster.account).seedVolumes({ zone, tags, createdAt, sizeGiB: 4 }).map((v) => v.id);
}
