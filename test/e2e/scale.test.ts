/** End to end, at scale: fifty claims and their pods at once, over the local stack with the EC2 simulator. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { provisionedVolumes, tagsOf, TagKeys } from './support/ec2.js';
import { createClaim, createNamespace, createPod, listAttachments, listClaims } from './support/kube.js';
import { manyClaims, type ScenarioContext } from './support/scenarios.js';
import { IMMEDIATE_CLASS, startScenarioStack, type E2eStack } from './support/stack.js';
import { waitFor } from './support/wait.js';

let stack: E2eStack;
let ctx: ScenarioContext;

beforeAll(async () => {
  // Two nodes per zone: 6 × 26 attachment slots hold both tests' 90 pods.
  ({ stack, ctx } = await startScenarioStack({ immediateClass: true, nodesPerZone: 2 }));
}, 60_000);
afterAll(async () => stack?.stop());

/**
 * Successful CreateVolume answers since the simulator's counters were last reset. Unlike
 * the volumes the simulator holds now, this also counts a duplicate that was deleted since.
 */
const createVolumeSuccesses = () => stack.simulator!.getStats().actions.CreateVolume?.ok ?? 0;

describe('fifty claims at once', () => {
  // Pods after the claims: disks are already spread over the zones by the claim-uid hash,
  // and the pods follow them. 40 pods, not 50, so that no zone's 52 slots can overflow
  // whatever the hash does.
  it('50 PVCs on an Immediate class created together, then 40 pods -> all Bound, exactly 50 disks, 40 attached, pods Running', async () => {
    const ns = 'fifty';
    stack.simulator!.resetStats();
    await manyClaims(ctx, ns, IMMEDIATE_CLASS, 50);
    // Nothing else was ever made for these claims, not even a disk deleted since.
    expect(createVolumeSuccesses()).toBe(50);
    const made = stack.simulator!.volumes().filter((v) => v.tags.some((t) => t.key === TagKeys.pvcNamespace && t.value === ns));
    expect(made.length).toBe(50);

    const claims = (await listClaims(stack.kube, ns)).slice(0, 40);
    await Promise.all(claims.map((c) => createPod(stack.kube, ns, `user-${c.metadata?.name}`, [c.metadata?.name ?? ''])));
    const pods = await waitFor(
      async () => (await stack.kube.core.listNamespacedPod({ namespace: ns })).items,
      (ps) => ps.length === 40 && ps.every((p) => p.status?.phase === 'Running'),
      { what: '40 pods Running', timeoutMs: 120_000, report: (ps) => ps.map((p) => `${p.metadata?.name}:${p.spec?.nodeName}:${p.status?.phase}`) },
    );

    const disks = (await provisionedVolumes(stack.ec2, stack.clusterId)).filter((v) => tagsOf(v)[TagKeys.pvcNamespace] === ns);
    expect(disks.length).toBe(50);
    const usedPvs = new Set(claims.map((c) => c.spec?.volumeName));
    expect(disks.filter((d) => (d.State === 'in-use') !== usedPvs.has(tagsOf(d)[TagKeys.pvName]))).toEqual([]);
    const zoneOfNode = new Map(stack.nodes.map((n) => [n.name, n.zone]));
    const diskOfPv = new Map(disks.map((d) => [tagsOf(d)[TagKeys.pvName], d]));
    for (const pod of pods) {
      const claimName = pod.spec?.volumes?.[0]?.persistentVolumeClaim?.claimName;
      const pvc = claims.find((c) => c.metadata?.name === claimName);
      const disk = diskOfPv.get(pvc?.spec?.volumeName ?? '');
      expect(disk?.AvailabilityZone, `zone of the disk of ${claimName}`).toBe(zoneOfNode.get(pod.spec?.nodeName ?? ''));
    }
    const attachments = (await listAttachments(stack.kube)).filter((va) => diskOfPv.has(va.spec.source.persistentVolumeName ?? ''));
    expect(attachments.length).toBe(40);
    expect(attachments.filter((va) => va.status?.attached !== true)).toEqual([]);
    // Still exactly 50 disks ever made once the pods run: no late duplicate either.
    expect(createVolumeSuccesses()).toBe(50);
  }, 180_000);

  // WaitForFirstConsumer: the scheduler places each pod first (within every node's CSINode
  // volume limit), and each disk is made in its pod's zone.
  it('50 WaitForFirstConsumer PVCs and 50 pods created together -> all Bound, exactly 50 disks, each attached in its pod zone, pods Running', async () => {
    const ns = 'fifty-wffc';
    stack.simulator!.resetStats();
    await createNamespace(stack.kube, ns);
    const names = Array.from({ length: 50 }, (_, i) => `claim-${String(i).padStart(2, '0')}`);
    await Promise.all(
      names.map(async (name) => {
        await createClaim(stack.kube, ns, name, { storageClassName: 'gp3', size: '4Gi' });
        await createPod(stack.kube, ns, `user-${name}`, [name]);
      }),
    );
    const pods = await waitFor(
      async () => (await stack.kube.core.listNamespacedPod({ namespace: ns })).items,
      (ps) => ps.length === 50 && ps.every((p) => p.status?.phase === 'Running'),
      { what: '50 pods Running', timeoutMs: 150_000, report: (ps) => ps.map((p) => `${p.metadata?.name}:${p.spec?.nodeName}:${p.status?.phase}`) },
    );
    const claims = await listClaims(stack.kube, ns);
    expect(claims.filter((c) => c.status?.phase !== 'Bound')).toEqual([]);
    const disks = (await provisionedVolumes(stack.ec2, stack.clusterId)).filter((v) => tagsOf(v)[TagKeys.pvcNamespace] === ns);
    expect(disks.length).toBe(50);
    // Exactly 50 ever made, not just 50 now: a duplicate deleted since would show here.
    expect(createVolumeSuccesses()).toBe(50);
    const zoneOfNode = new Map(stack.nodes.map((n) => [n.name, n.zone]));
    const diskOfPv = new Map(disks.map((d) => [tagsOf(d)[TagKeys.pvName], d]));
    for (const pod of pods) {
      const claimName = pod.spec?.volumes?.[0]?.persistentVolumeClaim?.claimName;
      const disk = diskOfPv.get(claims.find((c) => c.metadata?.name === claimName)?.spec?.volumeName ?? '');
      expect(disk?.State, `disk of ${claimName}`).toBe('in-use');
      expect(disk?.AvailabilityZone, `zone of the disk of ${claimName}`).toBe(zoneOfNode.get(pod.spec?.nodeName ?? ''));
    }
  }, 200_000);
});
