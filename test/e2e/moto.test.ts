/**
 * Scenarios 1, 4 and 6 again, with moto's EC2 server in place of the simulator. moto ignores
 * ClientToken and skips transitional states, so this shows that one disk per claim does not
 * rest on the token, and that nothing depends on the simulator's quirks. Snapshots too: moto
 * makes a snapshot `completed` at once (no `pending`), and answers DescribeSnapshots filtered
 * by tag and `OwnerIds: self` as EC2 does.
 */
import { DescribeSnapshotsCommand } from '@aws-sdk/client-ec2';
import { CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { volumeById } from './support/ec2.js';
import { claim, createClaim, createNamespace, createPod, createStorageClass, DRIVER, readVolume } from './support/kube.js';
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

  it('snapshot, restore and delete -> one EBS snapshot for the content, a volume restored from it, the snapshot gone with its Delete VolumeSnapshot', async () => {
    const ns = 'moto-snap';
    await stack.kube.core.createNamespace({ body: { metadata: { name: ns } } });
    await stack.kube.core.createNamespacedPersistentVolumeClaim({ namespace: ns, body: claim(ns, 'data', { storageClassName: IMMEDIATE_CLASS }) });
    await waitClaimBound(ctx, ns, 'data');
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'local', server: stack.urls.kube, skipTLSVerify: true }],
      users: [{ name: 'local' }],
      contexts: [{ name: 'local', cluster: 'local', user: 'local' }],
      currentContext: 'local',
    });
    const custom = kc.makeApiClient(CustomObjectsApi);
    const group = 'snapshot.storage.k8s.io';
    const version = 'v1';
    await custom.createClusterCustomObject({ group, version, plural: 'volumesnapshotclasses', body: { apiVersion: `${group}/${version}`, kind: 'VolumeSnapshotClass', metadata: { name: 'moto-delete' }, driver: 'ebs.csi.aws.com', deletionPolicy: 'Delete' } });
    await custom.createNamespacedCustomObject({
      group, version, namespace: ns, plural: 'volumesnapshots',
      body: { apiVersion: `${group}/${version}`, kind: 'VolumeSnapshot', metadata: { name: 'nightly', namespace: ns }, spec: { volumeSnapshotClassName: 'moto-delete', source: { persistentVolumeClaimName: 'data' } } },
    });
    type Vs = { status?: { readyToUse?: boolean; boundVolumeSnapshotContentName?: string } };
    const vs = await waitFor(
      () => custom.getNamespacedCustomObject({ group, version, namespace: ns, plural: 'volumesnapshots', name: 'nightly' }) as Promise<Vs>,
      (s) => s.status?.readyToUse === true,
      { what: 'VolumeSnapshot nightly readyToUse on moto', timeoutMs: 60_000 },
    );
    const contentName = vs.status!.boundVolumeSnapshotContentName!;
    const content = (await custom.getClusterCustomObject({ group, version, plural: 'volumesnapshotcontents', name: contentName })) as { status?: { snapshotHandle?: string } };
    const handle = content.status!.snapshotHandle!;
    const named = async () =>
      (await stack.ec2.send(new DescribeSnapshotsCommand({ OwnerIds: ['self'], Filters: [{ Name: 'tag:CSIVolumeSnapshotName', Values: [contentName] }] }))).Snapshots ?? [];
    expect((await named()).map((s) => s.SnapshotId)).toEqual([handle]);

    const restore = claim(ns, 'restored', { storageClassName: IMMEDIATE_CLASS });
    restore.spec!.dataSource = { apiGroup: group, kind: 'VolumeSnapshot', name: 'nightly' };
    await stack.kube.core.createNamespacedPersistentVolumeClaim({ namespace: ns, body: restore });
    const bound = await waitClaimBound(ctx, ns, 'restored');
    const pv = await readVolume(stack.kube, bound.spec!.volumeName!);
    expect((await volumeById(stack.ec2, pv.spec!.csi!.volumeHandle))?.SnapshotId).toBe(handle);

    await custom.deleteNamespacedCustomObject({ group, version, namespace: ns, plural: 'volumesnapshots', name: 'nightly' });
    await waitFor(named, (all) => all.length === 0, { what: `EBS snapshot ${handle} deleted on moto`, timeoutMs: 60_000 });
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
