/**
 * The leader election loop (lib/forwarder/leader-election.ts) over a real Lease on the local
 * Kubernetes API, through client-node, with short timings (lease 1 s, renew deadline 0.6 s,
 * retry 0.2 s).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { leaseApi, startLeaderElection, type LeaderElector, type LeaseApi } from '../../lib/forwarder/leader-election.js';
import { silentLogger } from '../../lib/forwarder/logger.js';
import { startKube, type KubeHarness } from '../kube/harness.js';
import { eventually } from './fake-backend.js';

const TIMING = { leaseDurationMs: 1000, renewDeadlineMs: 600, retryPeriodMs: 200 };
const LEASE = { namespace: 'default', name: 'volhook-forwarder' };

let kube: KubeHarness;
const electors: LeaderElector[] = [];

beforeEach(async () => {
  kube = await startKube();
});
afterEach(async () => {
  await Promise.all(electors.splice(0).map((e) => e.stop()));
  await kube.close();
});

interface Candidate {
  elector: LeaderElector;
  started: number;
  stopped: number;
}

function candidate(identity: string, api: LeaseApi = leaseApi(kube.kubeConfig)): Candidate {
  const c = { started: 0, stopped: 0 } as Candidate;
  c.elector = startLeaderElection({
    api,
    ...LEASE,
    identity,
    ...TIMING,
    logger: silentLogger,
    onStartedLeading: () => c.started++,
    onStoppedLeading: () => c.stopped++,
  });
  electors.push(c.elector);
  return c;
}

const leaseSpec = () => kube.store.get('leases', LEASE.name, LEASE.namespace)?.spec as Record<string, unknown> | undefined;

/** Samples both candidates every 10 ms until `until` resolves; the most that led at once. */
async function mostLeadersAtOnce(candidates: Candidate[], until: Promise<unknown>): Promise<number> {
  let most = 0;
  let done = false;
  void until.finally(() => (done = true));
  while (!done) {
    most = Math.max(most, candidates.filter((c) => c.elector.isLeader()).length);
    await new Promise((r) => setTimeout(r, 10));
  }
  return most;
}

describe('leader election on a Lease', () => {
  it('two candidates, no Lease -> the first creates it and leads, the other stands by', async () => {
    const a = candidate('a');
    await eventually(() => a.elector.isLeader(), 3000, 'a leads');
    const b = candidate('b');
    await new Promise((r) => setTimeout(r, 3 * TIMING.leaseDurationMs)); // several renewals
    expect(b.elector.isLeader()).toBe(false);
    expect(b.elector.leader()).toBe('a');
    expect(a.started).toBe(1);
    expect(leaseSpec()).toMatchObject({ holderIdentity: 'a', leaseDurationSeconds: 1, leaseTransitions: 0 });
    expect(String(leaseSpec()?.renewTime)).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    // Exactly one create; the renewals are PUTs on the Lease by name.
    const leaseCalls = kube.requests.filter((r) => r.url.includes('/leases'));
    expect(leaseCalls.filter((r) => r.method === 'POST' && r.status === 201)).toHaveLength(1);
    expect(leaseCalls.filter((r) => r.method === 'PUT' && r.status === 200).length).toBeGreaterThan(5);
  });

  it('the holder stops -> it releases the Lease and the standby leads at its next try, not a lease duration later', async () => {
    const a = candidate('a');
    await eventually(() => a.elector.isLeader(), 3000, 'a leads');
    const b = candidate('b');
    await eventually(() => b.elector.leader() === 'a', 3000, 'b sees a');
    const stoppedAt = Date.now();
    await a.elector.stop();
    expect(leaseSpec()).toMatchObject({ holderIdentity: expect.any(String), leaseTransitions: expect.any(Number) });
    await eventually(() => b.elector.isLeader(), 3000, 'b leads');
    const handOver = Date.now() - stoppedAt;
    // At most one jittered retry (0.2 s × 2.2) plus the calls; a lease duration would be 1 s + that.
    expect(handOver).toBeLessThan(TIMING.leaseDurationMs);
    expect(a.stopped).toBe(1);
    expect(leaseSpec()).toMatchObject({ holderIdentity: 'b', leaseDurationSeconds: 1, leaseTransitions: 1 });
  });

  it('the holder cut off from the API server -> it stops leading after the renew deadline, the standby leads only after the lease expires, never both', async () => {
    let cutOff = false;
    const real = leaseApi(kube.kubeConfig);
    const partitioned: LeaseApi = {
      readNamespacedLease: (args) => (cutOff ? Promise.reject(new Error('connect ECONNREFUSED')) : real.readNamespacedLease(args)),
      createNamespacedLease: (args) => (cutOff ? Promise.reject(new Error('connect ECONNREFUSED')) : real.createNamespacedLease(args)),
      replaceNamespacedLease: (args) => (cutOff ? Promise.reject(new Error('connect ECONNREFUSED')) : real.replaceNamespacedLease(args)),
    };
    const a = candidate('a', partitioned);
    await eventually(() => a.elector.isLeader(), 3000, 'a leads');
    const b = candidate('b');
    await eventually(() => b.elector.leader() === 'a', 3000, 'b sees a');
    cutOff = true;
    const cutAt = Date.now();
    const bLeads = eventually(() => b.elector.isLeader(), 5000, 'b leads');
    expect(await mostLeadersAtOnce([a, b], bLeads)).toBe(1);
    expect(Date.now() - cutAt).toBeGreaterThanOrEqual(TIMING.leaseDurationMs - TIMING.retryPeriodMs);
    expect(a.stopped).toBe(1);
    expect(leaseSpec()).toMatchObject({ holderIdentity: 'b', leaseTransitions: 1 });
  });

  it('three candidates at once on a Lease left by a dead holder -> after it expires exactly one leads, transitions + 1', async () => {
    kube.store.create('leases', {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { ...LEASE },
      spec: { holderIdentity: 'gone', leaseDurationSeconds: 1, leaseTransitions: 7, renewTime: '2026-01-01T00:00:00.000000Z' },
    });
    const all = ['a', 'b', 'c'].map((id) => candidate(id));
    const someoneLeads = eventually(() => all.some((c) => c.elector.isLeader()), 5000, 'a leader');
    expect(await mostLeadersAtOnce(all, someoneLeads)).toBeLessThanOrEqual(1);
    await new Promise((r) => setTimeout(r, 2 * TIMING.leaseDurationMs));
    expect(all.filter((c) => c.elector.isLeader())).toHaveLength(1);
    expect(all.reduce((n, c) => n + c.started, 0)).toBe(1);
    expect(leaseSpec()).toMatchObject({ leaseTransitions: 8 });
  });
});
