/**
 * Snapshots, restore and clone end to end over the local stack (real HTTP: Kubernetes API with
 * the snapshot CRDs, the common snapshot controller — the simulator's, or external-snapshotter's
 * own on the real plane — forwarder, backend, EC2 simulator),
 * driven with kubectl and YAML as a user would. The data is notional (the local kubelet writes
 * nothing), so what is checked is the EC2 side: the snapshot, the volume made from it, the copy.
 */
import { CreateVolumeCommand, DescribeSnapshotsCommand, DescribeVolumeStatusCommand, type Snapshot } from '@aws-sdk/client-ec2';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tagsOf, TagKeys, volumeById } from './support/ec2.js';
import { eventsFor, readClaim, readVolume } from './support/kube.js';
import { claimYaml, kubectlFor, podYaml, type Kubectl } from './support/kubectl.js';
import { waitClaimBound, waitPodRunning, type ScenarioContext } from './support/scenarios.js';
import { STACK_START_MS } from './support/plane.js';
import { IMMEDIATE_CLASS, startScenarioStack, type E2eStack } from './support/stack.js';
import { waitFor } from './support/wait.js';

let stack: E2eStack;
let ctx: ScenarioContext;
let kubectl: Kubectl;

beforeAll(async () => {
  ({ stack, ctx } = await startScenarioStack({ immediateClass: true, ec2: { timeScale: 400 } }));
  kubectl = await kubectlFor(stack);
}, STACK_START_MS);
afterAll(async () => {
  await stack?.stop();
  await kubectl?.close();
});


const getJson = async <T>(...args: string[]): Promise<T> => JSON.parse(await kubectl('get', ...args, '-o', 'json')) as T;

/** This cluster's EBS snapshots, as any EC2 client sees them. */
async function clusterSnapshots(): Promise<Snapshot[]> {
  const { Snapshots } = await stack.ec2.send(new DescribeSnapshotsCommand({ OwnerIds: ['self'], Filters: [{ Name: `tag:kubernetes.io/cluster/${stack.clusterId}`, Values: ['owned'] }] }));
  return Snapshots ?? [];
}

const calls = (action: string) => stack.simulator!.getStats().actions[action]?.calls ?? 0;


const classYaml = (name: string, policy: 'Delete' | 'Retain') => `apiVersion: snapshot.storage.k8s.io/v1
kind: VolumeSnapshotClass
metadata: { name: ${name} }
driver: ebs.csi.aws.com
deletionPolicy: ${policy}
parameters:
  tagSpecification_1: "backup={{ .VolumeSnapshotNamespace }}/{{ .VolumeSnapshotName }}"
`;

const snapshotYaml = (ns: string, name: string, className: string, claim: string) => `apiVersion: snapshot.storage.k8s.io/v1
kind: VolumeSnapshot
metadata: { name: ${name}, namespace: ${ns} }
spec:
  volumeSnapshotClassName: ${className}
  source: { persistentVolumeClaimName: ${claim} }
`;

interface VolumeSnapshotJson {
  status?: { readyToUse?: boolean; boundVolumeSnapshotContentName?: string };
}
interface ContentJson {
  status?: { snapshotHandle?: string; readyToUse?: boolean; restoreSize?: number; creationTime?: number };
}

async function snapshotReady(ns: string, name: string): Promise<{ content: string; handle: string }> {
  const vs = await waitFor(
    () => getJson<VolumeSnapshotJson>('volumesnapshot', name, '-n', ns),
    (s) => s.status?.readyToUse === true && !!s.status.boundVolumeSnapshotContentName,
    { what: `VolumeSnapshot ${ns}/${name} readyToUse`, timeoutMs: 90_000 },
  );
  const contentName = vs.status!.boundVolumeSnapshotContentName!;
  const content = await getJson<ContentJson>('volumesnapshotcontent', contentName);
  expect(content.status).toMatchObject({ readyToUse: true, snapshotHandle: expect.stringMatching(/^snap-/) });
  return { content: contentName, handle: content.status!.snapshotHandle! };
}

describe('snapshots over the local stack', () => {
  it('VolumeSnapshot -> content readyToUse, one EBS snapshot tagged for the cluster; restored claim Bound from it; Delete policy -> the EBS snapshot goes with the VolumeSnapshot', async () => {
    const ns = 'snap-delete';
    await kubectl('create', 'namespace', ns);
    await kubectl.create(claimYaml(ns, 'data'));
    await waitClaimBound(ctx, ns, 'data');
    await kubectl.create(classYaml('ebs-delete', 'Delete'));
    await kubectl.create(snapshotYaml(ns, 'nightly', 'ebs-delete', 'data'));

    const { content, handle } = await snapshotReady(ns, 'nightly');
    const ours = (await clusterSnapshots()).filter((s) => tagsOf(s as never)['CSIVolumeSnapshotName'] === content);
    expect(ours.map((s) => s.SnapshotId)).toEqual([handle]);
    expect(tagsOf(ours[0] as never)).toMatchObject({ 'ebs.csi.aws.com/cluster': 'true', backup: `${ns}/nightly` });
    expect(calls('CreateSnapshot')).toBeGreaterThanOrEqual(1);
    expect(await kubectl('get', 'volumesnapshot', '-n', ns)).toContain('nightly');

    await kubectl.create(claimYaml(ns, 'restored', { size: '6Gi', spec: `  dataSource: { apiGroup: snapshot.storage.k8s.io, kind: VolumeSnapshot, name: nightly }\n` }));
    const restored = await waitClaimBound(ctx, ns, 'restored');
    const pv = await readVolume(stack.kube, restored.spec!.volumeName!);
    const volume = await volumeById(stack.ec2, pv.spec!.csi!.volumeHandle);
    expect(volume?.SnapshotId).toBe(handle);
    expect(volume?.Size).toBeGreaterThanOrEqual(ours[0]!.VolumeSize!);
    expect(volume?.Size).toBe(6);
    expect(tagsOf(volume)[TagKeys.pvcName]).toBe('restored');

    await kubectl('delete', 'volumesnapshot', 'nightly', '-n', ns, '--wait=false');
    await waitFor(clusterSnapshots, (all) => !all.some((s) => s.SnapshotId === handle), { what: `EBS snapshot ${handle} deleted`, timeoutMs: 60_000 });
    await waitFor(
      () => kubectl('get', 'volumesnapshotcontent', '--ignore-not-found', '-o', 'name'),
      (out) => !out.includes(content),
      { what: `content ${content} gone` },
    );
  }, 180_000);

  it('Retain policy -> the VolumeSnapshot deleted, the EBS snapshot stays', async () => {
    const ns = 'snap-retain';
    await kubectl('create', 'namespace', ns);
    await kubectl.create(claimYaml(ns, 'data'));
    await waitClaimBound(ctx, ns, 'data');
    await kubectl.create(classYaml('ebs-retain', 'Retain'));
    await kubectl.create(snapshotYaml(ns, 'keep', 'ebs-retain', 'data'));
    const { handle } = await snapshotReady(ns, 'keep');
    const deletes = calls('DeleteSnapshot');

    await kubectl('delete', 'volumesnapshot', 'keep', '-n', ns, '--wait=false');
    await waitFor(() => kubectl('get', 'volumesnapshot', '-n', ns, '--ignore-not-found', '-o', 'name'), (out) => !out.includes('keep'), { what: 'VolumeSnapshot keep gone' });
    await sleep(2_000);
    expect((await clusterSnapshots()).some((s) => s.SnapshotId === handle)).toBe(true);
    expect(calls('DeleteSnapshot')).toBe(deletes);
  }, 180_000);

  it('clone: a claim with dataSource of a bound claim -> CopyVolumes once, the copy in the source zone, Bound', async () => {
    const ns = 'clone-ok';
    await kubectl('create', 'namespace', ns);
    await kubectl.create(claimYaml(ns, 'original'));
    const source = await waitClaimBound(ctx, ns, 'original');
    const sourcePv = await readVolume(stack.kube, source.spec!.volumeName!);
    const sourceVolume = await volumeById(stack.ec2, sourcePv.spec!.csi!.volumeHandle);
    const copies = calls('CopyVolumes');
    const blanks = calls('CreateVolume');

    await kubectl.create(claimYaml(ns, 'copy', { spec: `  dataSource: { kind: PersistentVolumeClaim, name: original }\n` }));
    const copy = await waitClaimBound(ctx, ns, 'copy');
    const pv = await readVolume(stack.kube, copy.spec!.volumeName!);
    const volume = await volumeById(stack.ec2, pv.spec!.csi!.volumeHandle);
    expect(volume?.AvailabilityZone).toBe(sourceVolume?.AvailabilityZone);
    expect(pv.spec?.nodeAffinity?.required?.nodeSelectorTerms?.[0]?.matchExpressions?.[0]?.values).toEqual([sourceVolume?.AvailabilityZone]);
    expect(volume?.VolumeId).not.toBe(sourceVolume?.VolumeId);
    expect(calls('CopyVolumes') - copies).toBe(1);
    expect(calls('CreateVolume')).toBe(blanks); // never a blank disk for the copy
  }, 180_000);

  it("clone of a claim bound to a static PV naming another cluster's disk -> Pending, failed SourceNotOwned with a Warning naming the disk, 0 CopyVolumes; the same of the cluster's own disk (the control) -> copied, Bound", async () => {
    const ns = 'clone-foreign';
    await kubectl('create', 'namespace', ns);
    /** A disk in us-east-1a with exactly `tags`, a static Retain PV naming it and a claim bound to that PV. */
    const staticClaim = async (name: string, tags: Record<string, string>): Promise<string> => {
      const { VolumeId } = await stack.ec2.send(
        new CreateVolumeCommand({ AvailabilityZone: 'us-east-1a', Size: 4, VolumeType: 'gp3', TagSpecifications: [{ ResourceType: 'volume', Tags: Object.entries(tags).map(([Key, Value]) => ({ Key, Value })) }] }),
      );
      await waitFor(() => volumeById(stack.ec2, VolumeId!), (v) => v?.State === 'available', { what: `${VolumeId} available` });
      await kubectl.create(`apiVersion: v1
kind: PersistentVolume
metadata: { name: ${ns}-${name} }
spec:
  capacity: { storage: 4Gi }
  accessModes: [ReadWriteOnce]
  persistentVolumeReclaimPolicy: Retain
  storageClassName: ${IMMEDIATE_CLASS}
  claimRef: { namespace: ${ns}, name: ${name} }
  csi: { driver: ebs.csi.aws.com, volumeHandle: ${VolumeId}, fsType: ext4 }
  nodeAffinity:
    required:
      nodeSelectorTerms:
        - matchExpressions: [{ key: topology.kubernetes.io/zone, operator: In, values: [us-east-1a] }]
---
${claimYaml(ns, name, { spec: `  volumeName: ${ns}-${name}\n` })}`);
      await waitClaimBound(ctx, ns, name);
      return VolumeId!;
    };
    const foreign = await staticClaim('theirs', { [TagKeys.owner('other-cluster')]: 'owned', [TagKeys.ebsCluster]: 'true', [TagKeys.volhookCluster]: 'other-cluster' });
    const own = await staticClaim('ours', { [TagKeys.owner(stack.clusterId)]: 'owned', [TagKeys.ebsCluster]: 'true', [TagKeys.volhookCluster]: stack.clusterId });
    const copies = calls('CopyVolumes');

    await kubectl.create(claimYaml(ns, 'stolen', { spec: `  dataSource: { kind: PersistentVolumeClaim, name: theirs }\n` }));
    const events = await waitFor(
      () => eventsFor(stack.kube, ns, 'PersistentVolumeClaim', 'stolen'),
      (es) => es.some((e) => e.type === 'Warning' && e.reason === 'ProvisioningFailed'),
      { what: 'Warning ProvisioningFailed on stolen' },
    );
    const warning = events.find((e) => e.reason === 'ProvisioningFailed')?.message ?? '';
    expect(warning).toContain(foreign);
    expect(warning).toContain(`is not owned by cluster "${stack.clusterId}"`);
    expect(ctx.results).toContainEqual(expect.objectContaining({ key: `PersistentVolumeClaim/${ns}/stolen`, outcome: 'failed', reason: 'SourceNotOwned' }));
    await sleep(2_000);
    expect((await readClaim(stack.kube, ns, 'stolen')).status?.phase).toBe('Pending');
    expect(calls('CopyVolumes')).toBe(copies);

    // The same path, the cluster's own disk: copied once, into the source's zone.
    await kubectl.create(claimYaml(ns, 'copy', { spec: `  dataSource: { kind: PersistentVolumeClaim, name: ours }\n` }));
    const copy = await waitClaimBound(ctx, ns, 'copy');
    const volume = await volumeById(stack.ec2, (await readVolume(stack.kube, copy.spec!.volumeName!)).spec!.csi!.volumeHandle);
    expect(volume?.VolumeId).not.toBe(own);
    expect(volume?.AvailabilityZone).toBe('us-east-1a');
    expect(calls('CopyVolumes')).toBe(copies + 1);
    expect((await readClaim(stack.kube, ns, 'stolen')).status?.phase).toBe('Pending');
  }, 180_000);

  it('a dataSourceRef to an unknown kind -> Pending, Warning naming it, no EC2 call', async () => {
    const ns = 'unknown-source';
    await kubectl('create', 'namespace', ns);
    const before = { create: calls('CreateVolume'), copy: calls('CopyVolumes') };
    await kubectl.create(claimYaml(ns, 'seeded', { spec: `  dataSourceRef: { apiGroup: populator.example.com, kind: Seed, name: golden }\n` }));
    const events = await waitFor(
      () => eventsFor(stack.kube, ns, 'PersistentVolumeClaim', 'seeded'),
      (es) => es.some((e) => e.type === 'Warning' && e.reason === 'ProvisioningFailed'),
      { what: 'Warning ProvisioningFailed on seeded' },
    );
    expect(events.find((e) => e.reason === 'ProvisioningFailed')?.message).toContain('populator.example.com/Seed "golden"');
    await sleep(2_000);
    expect((await readClaim(stack.kube, ns, 'seeded')).status?.phase).toBe('Pending');
    expect({ create: calls('CreateVolume'), copy: calls('CopyVolumes') }).toEqual(before);
  }, 120_000);

  it('blockAttachUntilInitialized: "true" on a restore -> its VolumeAttachment unattached, no AttachVolume, while EC2 says initializing; attached after; the same class without it (the control) attached while initializing', async () => {
    const ns = 'init-wait';
    await kubectl('create', 'namespace', ns);
    await kubectl.create(claimYaml(ns, 'seed'));
    await waitClaimBound(ctx, ns, 'seed');
    await kubectl.create(classYaml('ebs-init', 'Delete'));
    await kubectl.create(snapshotYaml(ns, 'golden', 'ebs-init', 'seed'));
    await snapshotReady(ns, 'golden');
    // 200 GiB at 100 MiB/s: 2,048 s of EC2's clock, 5.1 s here (400× fast); EC2 gives its estimate.
    const storageClass = (name: string, block: boolean) => `apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: { name: ${name} }
provisioner: ebs.csi.aws.com
volumeBindingMode: Immediate
parameters:
  type: gp3
  volumeInitializationRate: "100"
${block ? '  blockAttachUntilInitialized: "true"\n' : ''}`;
    await kubectl.create(storageClass('restore-blocking', true));
    await kubectl.create(storageClass('restore-plain', false));

    const restore = async (claim: string, className: string) => {
      await kubectl.create(
        claimYaml(ns, claim, { size: '200Gi', spec: `  dataSource: { apiGroup: snapshot.storage.k8s.io, kind: VolumeSnapshot, name: golden }\n` }).replace(`storageClassName: ${IMMEDIATE_CLASS}`, `storageClassName: ${className}`),
      );
      const bound = await waitClaimBound(ctx, ns, claim);
      const volumeId = (await readVolume(stack.kube, bound.spec!.volumeName!)).spec!.csi!.volumeHandle;
      await kubectl.create(podYaml(ns, `${claim}-app`, claim));
      return { volumeId, pv: bound.spec!.volumeName! };
    };
    const initializing = async (volumeId: string) => {
      const { VolumeStatuses } = await stack.ec2.send(new DescribeVolumeStatusCommand({ VolumeIds: [volumeId] }));
      return VolumeStatuses?.[0]?.VolumeStatus?.Details?.find((d) => d.Name === 'initialization-state')?.Status === 'initializing';
    };
    const attachment = async (pv: string) => {
      const list = await getJson<{ items: { spec: { source: { persistentVolumeName?: string } }; status?: { attached?: boolean } }[] }>('volumeattachments');
      return list.items.find((va) => va.spec.source.persistentVolumeName === pv);
    };

    const blocking = await restore('blocking', 'restore-blocking');
    // Seen while initializing: the VolumeAttachment exists and is not attached, and EC2 has no attachment.
    const seen = await waitFor(
      async () => ({ va: await attachment(blocking.pv), init: await initializing(blocking.volumeId), volume: await volumeById(stack.ec2, blocking.volumeId) }),
      (s) => s.va !== undefined && s.init,
      { what: 'the blocking restore\'s VolumeAttachment while the volume initializes', timeoutMs: 30_000 },
    );
    expect(seen.va?.status?.attached).not.toBe(true);
    expect(seen.volume?.Attachments ?? []).toEqual([]);
    await waitPodRunning(ctx, ns, 'blocking-app');
    const attached = await volumeById(stack.ec2, blocking.volumeId);
    const initializedAt = attached!.CreateTime!.getTime() + (200 * 1024 * 1000) / 100 / 400;
    expect(attached!.Attachments?.[0]?.AttachTime!.getTime()).toBeGreaterThanOrEqual(initializedAt - 1_000);
    expect(await initializing(blocking.volumeId)).toBe(false);

    const plain = await restore('plain', 'restore-plain');
    await waitPodRunning(ctx, ns, 'plain-app');
    const control = await volumeById(stack.ec2, plain.volumeId);
    const controlInitializedAt = control!.CreateTime!.getTime() + (200 * 1024 * 1000) / 100 / 400;
    expect(control!.Attachments?.[0]?.AttachTime!.getTime()).toBeLessThan(controlInitializedAt);
  }, 120_000);
});
