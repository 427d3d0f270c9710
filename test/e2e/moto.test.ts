/**
 * Scenarios 1, 4 and 6 again, with moto's EC2 server in place of the simulator. moto ignores
 * ClientToken and skips transitional states, so this shows that one disk per claim does not
 * rest on the token, and that nothing depends on the simulator's quirks.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { volumeById } from './support/ec2.js';
import { createClaim, createNamespace, createPod, createStorageClass, DRIVER, readVolume } from './support/kube.js';
import { startMoto, type Moto } from './support/moto.js';
import { claimEvents, reasons, waitClaim } from './support/resize.js';
import { manyClaims, provisionForPod, reclaimPolicies, waitClaimBound, waitPodRunning, type ScenarioContext } from './support/scenarios.js';
import { IMMEDIATE_CLASS, startScenarioStack, type E2eStack } from './support/stack.js';
import { waitFor } from './support/wait.js';

let moto: Moto;
let stack: E2eStack;
let ctx: ScenarioContext;

beforeAll(async () => {
  moto = await startMoto();
  ({ stack, ctx } = await startScenarioStack({ immediateClass: true, ec2Endpoint: moto.url }));
}, 90_000);
afterAll(async () => {
  await stack?.stop();
  await moto?.stop();
});

describe('with moto as EC2', () => {
  it('the stack starts on moto -> three node instances launched, one per zone', () => {
    expect(stack.simulator).toBeUndefined();
    expect(stack.nodes.map((n) => n.zone).sort()).toEqual(['us-east-1a', 'us-east-1b', 'us-east-1c']);
    for (const node of stack.nodes) expect(node.instanceId).toMatch(/^i-/);
  });

  it('WaitForFirstConsumer PVC + pod -> PVC Bound, PV and disk in the node zone with every tag, attached, pod Running', async () => {
    await provisionForPod(ctx, 'wffc');
  }, 120_000);

  it('Delete and Retain claims, pods then claims deleted -> Delete: detached, disk and PV gone; Retain: disk and Released PV stay', async () => {
    await reclaimPolicies(ctx, 'reclaim');
  }, 150_000);

  it('50 PVCs on an Immediate class created together, forwarder restarted midway -> all Bound, exactly 50 disks, one per claim', async () => {
    // The restarted forwarder offers every claim again, some while their disks are being
    // made: with moto ignoring ClientToken, only the lookup by tag prevents a second disk.
    await manyClaims(ctx, 'fifty', IMMEDIATE_CLASS, 50, async () => {
      await waitFor(
        () => ctx.results.filter((r) => r.key.startsWith('PersistentVolumeClaim/fifty/')).length,
        (n) => n >= 5,
        { what: 'the first results for the fifty claims', intervalMs: 10 },
      );
      await stack.restartForwarder();
    });
  }, 150_000);

  it('Filesystem claim with a pod, 4Gi -> 8Gi -> one ModifyVolume, disk 8 GiB, PV 8Gi, claim capacity 8Gi after the node grew it', async () => {
    // moto finishes a modification at once (no modifying/optimizing) and keeps no 6-hour wait.
    const ns = 'grow';
    await createNamespace(stack.kube, ns);
    await createStorageClass(stack.kube, {
      metadata: { name: 'gp3-expand' },
      provisioner: DRIVER,
      parameters: { type: 'gp3' },
      volumeBindingMode: 'WaitForFirstConsumer',
      allowVolumeExpansion: true,
    });
    await createClaim(stack.kube, ns, 'data', { storageClassName: 'gp3-expand', size: '4Gi' });
    await createPod(stack.kube, ns, 'app', ['data']);
    await waitPodRunning(ctx, ns, 'app');
    const pvc = await waitClaimBound(ctx, ns, 'data');
    const pvName = pvc.spec?.volumeName ?? '';
    const volumeId = (await readVolume(stack.kube, pvName)).spec?.csi?.volumeHandle ?? '';

    await stack.kube.core.patchNamespacedPersistentVolumeClaim(
      { name: 'data', namespace: ns, body: [{ op: 'replace', path: '/spec/resources/requests/storage', value: '8Gi' }] },
    );

    await waitClaim(stack.kube, ns, 'data', 'capacity 8Gi', (c) => c.status?.capacity?.storage === '8Gi' && !c.status?.allocatedResourceStatuses?.storage);
    expect((await volumeById(stack.ec2, volumeId))?.Size).toBe(8);
    expect((await readVolume(stack.kube, pvName)).spec?.capacity?.storage).toBe('8Gi');
    const resize = reasons(await claimEvents(stack.kube, ns, 'data')).filter((r) => ['Resizing', 'FileSystemResizeRequired', 'FileSystemResizeSuccessful', 'VolumeResizeFailed'].includes(r));
    expect(resize).toEqual(['Resizing', 'FileSystemResizeRequired', 'FileSystemResizeSuccessful']);
    const modified = ctx.results.filter((r) => r.key === `PersistentVolumeClaim/${ns}/data` && r.outcome === 'requeue' && /ModifyVolume of vol-\w+ sent/.test(r.message ?? ''));
    expect(modified).toHaveLength(1);
  }, 120_000);
});
