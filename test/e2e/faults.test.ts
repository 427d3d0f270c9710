/**
 * End to end with an unreliable, throttling EC2: a fifth of all calls fail with 5xx, some
 * CreateVolume/AttachVolume calls act and then fail (lost responses), and the buckets are
 * small. Transient errors must only delay things: everything converges, nothing is failed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { provisionedVolumes, tagsOf, TagKeys, volumesState } from './support/ec2.js';
import { createClaim, createNamespace, createPod, listClaims, listVolumes } from './support/kube.js';
import { phaseCounts, waitPodRunning, type ScenarioContext } from './support/scenarios.js';
import { IMMEDIATE_CLASS, startScenarioStack, type E2eStack } from './support/stack.js';
import { show, waitFor } from './support/wait.js';

const FAULTS = {
  '*': { rate: 0.2, code: 'InternalError' },
  CreateVolume: { rate: 0.1, code: 'InternalError', phase: 'after' as const },
  AttachVolume: { rate: 0.1, code: 'ServiceUnavailable', phase: 'after' as const },
};

let stack: E2eStack;
let ctx: ScenarioContext;

beforeAll(async () => {
  ({ stack, ctx } = await startScenarioStack({
    immediateClass: true,
    ec2: {
      timeScale: 40,
      seed: 7,
      faults: FAULTS,
      // Small buckets, refilled slowly (÷ the time scale): throttling is certain.
      throttling: {
        enabled: true,
        buckets: {
          CreateVolume: { capacity: 4, refillPerSecond: 0.1 },
          DeleteVolume: { capacity: 4, refillPerSecond: 0.1 },
          AttachVolume: { capacity: 3, refillPerSecond: 0.1 },
          DetachVolume: { capacity: 3, refillPerSecond: 0.1 },
          DescribeVolumes: { capacity: 6, refillPerSecond: 0.25 },
          DescribeInstances: { capacity: 6, refillPerSecond: 0.25 },
        },
      },
    },
  }));
}, 60_000);
afterAll(async () => stack?.stop());

describe('EC2 with 20% faults and throttling', () => {
  it('claims with and without pods, then all deleted -> all Bound and Running, then all disks gone; no item ever failed', async () => {
    const ns = 'faults';
    await createNamespace(stack.kube, ns);
    stack.simulator!.resetStats();
    const immediate = Array.from({ length: 12 }, (_, i) => `imm-${i}`);
    const withPods = Array.from({ length: 6 }, (_, i) => `wffc-${i}`);
    await Promise.all(immediate.map((name) => createClaim(stack.kube, ns, name, { storageClassName: IMMEDIATE_CLASS })));
    await Promise.all(withPods.map((name) => createClaim(stack.kube, ns, name, { storageClassName: 'gp3' })));
    // Six attaches alone might all escape a 20% fault rate; lose AttachVolume answers until
    // one has been lost for certain, then go back to the random faults.
    stack.simulator!.configure({ faults: { ...FAULTS, AttachVolume: { rate: 1, code: 'ServiceUnavailable', phase: 'after' } } });
    await Promise.all(withPods.map((name) => createPod(stack.kube, ns, `user-${name}`, [name])));
    await waitFor(
      async () => stack.simulator!.getStats().actions.AttachVolume,
      (attach) => (attach?.calls ?? 0) - (attach?.ok ?? 0) > 0,
      { what: 'an AttachVolume answer lost', timeoutMs: 120_000, report: (attach) => attach },
    );
    stack.simulator!.configure({ faults: FAULTS });

    await waitFor(
      () => listClaims(stack.kube, ns),
      (pvcs) => pvcs.length === 18 && pvcs.every((p) => p.status?.phase === 'Bound'),
      { what: '18 claims Bound', timeoutMs: 120_000, report: phaseCounts },
    );
    for (const name of withPods) await waitPodRunning(ctx, ns, `user-${name}`, 120_000);

    const disks = (await provisionedVolumes(stack.ec2, stack.clusterId)).filter((v) => tagsOf(v)[TagKeys.pvcNamespace] === ns);
    expect(disks.length, show(volumesState(disks))).toBe(18);
    expect(new Set(disks.map((d) => tagsOf(d)[TagKeys.pvName])).size).toBe(18);

    // The faults did happen: 5xx answers and throttling, on creates, attaches and describes.
    const stats = stack.simulator!.getStats();
    expect(stats.total.errors.InternalError ?? 0).toBeGreaterThan(0);
    expect(stats.actions.CreateVolume?.errors.InternalError ?? 0).toBeGreaterThan(0);
    expect(stats.actions.DescribeVolumes?.errors.InternalError ?? 0).toBeGreaterThan(0);
    expect((stats.actions.AttachVolume?.calls ?? 0) - (stats.actions.AttachVolume?.ok ?? 0)).toBeGreaterThan(0);
    expect(stats.total.throttled).toBeGreaterThan(0);

    // Now everything goes: pods, then claims; every disk is detached and deleted.
    await Promise.all(withPods.map((name) => stack.kube.core.deleteNamespacedPod({ namespace: ns, name: `user-${name}` })));
    await Promise.all([...immediate, ...withPods].map((name) => stack.kube.core.deleteNamespacedPersistentVolumeClaim({ namespace: ns, name })));
    await waitFor(
      async () => (await provisionedVolumes(stack.ec2, stack.clusterId)).filter((v) => tagsOf(v)[TagKeys.pvcNamespace] === ns),
      (left) => left.length === 0,
      { what: 'every disk of the namespace deleted', timeoutMs: 120_000, report: volumesState },
    );
    const pvNames = new Set(disks.map((d) => tagsOf(d)[TagKeys.pvName]));
    await waitFor(
      async () => (await listVolumes(stack.kube)).filter((pv) => pvNames.has(pv.metadata?.name)),
      (left) => left.length === 0,
      { what: 'every PV of the namespace deleted', report: (pvs) => pvs.map((pv) => `${pv.metadata?.name}:${pv.status?.phase}`) },
    );

    // Transient errors were requeues, never failures, and no claim got a ProvisioningFailed.
    const failed = ctx.results.filter((r) => r.outcome === 'failed');
    expect(failed, show(failed)).toEqual([]);
    // Warnings such as "still attached" (a PV Released before its detach finished) are fine;
    // none may be a provisioning failure or carry a transient EC2 error.
    const transient = /InternalError|Unavailable|RequestLimitExceeded|throttl/i;
    const warnings = (await stack.kube.core.listEventForAllNamespaces()).items.filter(
      (e) => e.type === 'Warning' && (e.reason === 'ProvisioningFailed' || transient.test(e.message ?? '')),
    );
    expect(warnings.map((e) => `${e.involvedObject.name} ${e.reason}: ${e.message}`)).toEqual([]);
  }, 240_000);
});
