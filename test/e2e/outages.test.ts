/**
 * End to end with the backend down and the forwarder crashing midway: level-triggered
 * reconciles and the forwarder's resync make everything good, with one disk per claim.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Forwarder } from '../../lib/forwarder/index.js';
import { provisionedVolumes, tagsOf, TagKeys, volumesState } from './support/ec2.js';
import { Finalizers } from '../../lib/contract/index.js';
import { createClaim, createNamespace, createPod, eventsFor, listClaims, listVolumes, orMissing, readClaim } from './support/kube.js';
import { phaseCounts, waitPodRunning, type ScenarioContext } from './support/scenarios.js';
import { IMMEDIATE_CLASS, startScenarioStack, type E2eStack } from './support/stack.js';
import { show, waitFor } from './support/wait.js';

let stack: E2eStack;
let ctx: ScenarioContext;

beforeAll(async () => {
  ({ stack, ctx } = await startScenarioStack({ immediateClass: true }));
}, 60_000);
afterAll(async () => stack?.stop());

/** Items the forwarder could not get an answer for (backend unreachable). */
async function unanswered(forwarder: Forwarder | undefined): Promise<number> {
  if (!forwarder) return 0;
  const { values } = await forwarder.metrics.outcomes.get();
  return values.filter((v) => v.labels.outcome === 'error').reduce((sum, v) => sum + v.value, 0);
}

const CLAIM_PROTECTION = Finalizers.claimProtection;

const createVolumeCalls = () => stack.simulator!.getStats().actions.CreateVolume?.calls ?? 0;

/** Every disk made for `namespace` belongs to a PV that exists: nothing leaked. */
async function expectOneDiskPerClaim(namespace: string, claimCount: number): Promise<void> {
  const disks = (await provisionedVolumes(stack.ec2, stack.clusterId)).filter((v) => tagsOf(v)[TagKeys.pvcNamespace] === namespace);
  expect(disks.length, show(volumesState(disks))).toBe(claimCount);
  const pvs = new Map((await listVolumes(stack.kube)).map((pv) => [pv.metadata?.name, pv]));
  for (const disk of disks) {
    const pv = pvs.get(tagsOf(disk)[TagKeys.pvName]);
    expect(pv?.spec?.csi?.volumeHandle, `PV of ${disk.VolumeId}`).toBe(disk.VolumeId);
  }
  expect(new Set(disks.map((d) => tagsOf(d)[TagKeys.pvcName])).size).toBe(claimCount);
}

describe('backend outage and forwarder restarts', () => {
  it('backend stopped while claims are provisioning, forwarder restarted while it is down and again after -> all converge, one disk per claim', async () => {
    const ns = 'outage';
    await createNamespace(stack.kube, ns);

    // Some claims start provisioning; the backend goes down while EC2 work is under way.
    const callsBefore = createVolumeCalls();
    for (let i = 0; i < 6; i++) await createClaim(stack.kube, ns, `early-${i}`, { storageClassName: IMMEDIATE_CLASS });
    await waitFor(createVolumeCalls, (n) => n > callsBefore, { what: 'a first CreateVolume call', intervalMs: 5 });
    await stack.stopBackend();

    // More work arrives while it is down: claims on both binding modes, and a pod.
    for (let i = 0; i < 6; i++) await createClaim(stack.kube, ns, `late-${i}`, { storageClassName: IMMEDIATE_CLASS });
    await createClaim(stack.kube, ns, 'wffc', { storageClassName: 'gp3' });
    await createPod(stack.kube, ns, 'user', ['wffc']);
    await waitFor(() => unanswered(stack.forwarder()), (n) => n >= 3, { what: 'the forwarder failing to reach the backend' });

    // The forwarder crashes (its queue is lost) while the backend is still down.
    await stack.restartForwarder();
    await sleep(1_000);
    expect((await readClaim(stack.kube, ns, 'late-0')).status?.phase).toBe('Pending');

    await stack.startBackend();
    // Once some claims are bound again, the forwarder crashes once more, mid-provisioning.
    await waitFor(
      () => listClaims(stack.kube, ns),
      (pvcs) => pvcs.some((p) => p.status?.phase === 'Bound'),
      { what: 'a first claim Bound after the backend came back', report: phaseCounts },
    );
    await stack.restartForwarder();

    await waitFor(
      () => listClaims(stack.kube, ns),
      (pvcs) => pvcs.length === 13 && pvcs.every((p) => p.status?.phase === 'Bound'),
      { what: '13 claims Bound', timeoutMs: 120_000, report: (pvcs) => pvcs.map((p) => `${p.metadata?.name}:${p.status?.phase}`) },
    );
    await waitPodRunning(ctx, ns, 'user');
    await expectOneDiskPerClaim(ns, 13);
  }, 180_000);

  it('claim deleted while its disk is being made and the backend goes down -> the claim stays protected until, after restart, its disk is deleted', async () => {
    const ns = 'deleted-midway';
    await createNamespace(stack.kube, ns);
    const pvc = await createClaim(stack.kube, ns, 'short-lived', { storageClassName: IMMEDIATE_CLASS });
    const pvName = `pvc-${pvc.metadata?.uid}`;
    // The disk exists in EC2 (the backend made it), but its PV may not: take the backend away now.
    await waitFor(
      () => stack.simulator!.volumes().some((v) => v.tags.some((t) => t.key === TagKeys.pvName && t.value === pvName)),
      (found) => found,
      { what: `a disk for ${pvName} in the simulator`, intervalMs: 5 },
    );
    await stack.stopBackend();
    await stack.kube.core.deleteNamespacedPersistentVolumeClaim({ namespace: ns, name: 'short-lived' });
    await sleep(500);
    // While a disk of its may exist and no PV names it, the deleted claim cannot vanish: it
    // stays, Terminating, held by volhook's protection (unless its PV got written first, in
    // which case the protection went with it and the PV's reclaim owns the disk).
    const held = await orMissing(readClaim(stack.kube, ns, 'short-lived'));
    const pvWritten = (await listVolumes(stack.kube)).some((pv) => pv.metadata?.name === pvName);
    if (!pvWritten) {
      expect(held?.metadata?.deletionTimestamp).toBeDefined();
      expect(held?.metadata?.finalizers).toContain(CLAIM_PROTECTION);
    }
    await stack.startBackend();

    await waitFor(
      async () => (await provisionedVolumes(stack.ec2, stack.clusterId)).filter((v) => tagsOf(v)[TagKeys.pvName] === pvName),
      (disks) => disks.length === 0,
      { what: `the disk of ${pvName} deleted`, report: volumesState },
    );
    await waitFor(() => listVolumes(stack.kube), (pvs) => !pvs.some((pv) => pv.metadata?.name === pvName), { what: `no PV ${pvName}` });
    // The claim's own reconcile deleted the disk and said so on the claim (or, if the PV got
    // written first, the PV's reclaim did).
    const cleanedBy = ctx.results.filter((r) => r.key === `PersistentVolumeClaim/${ns}/short-lived` || r.key === `PersistentVolume/${pvName}`);
    const saidWhy = (await eventsFor(stack.kube, ns, 'PersistentVolumeClaim', 'short-lived')).some((e) => e.reason === 'VolumeDeleted');
    expect(pvWritten || saidWhy, show(cleanedBy)).toBe(true);
  }, 120_000);
});
