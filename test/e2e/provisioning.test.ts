/**
 * End to end over the local stack (real HTTP: Kubernetes API, forwarder, backend, EC2
 * simulator): provisioning, topology, static PVs, reclaim policies, volume modes, classes.
 * One stack; every scenario in its own namespace.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { CreateVolumeCommand, EC2Client } from '@aws-sdk/client-ec2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runClusterCli } from '../../lib/cli/index.js';
import { provisionedVolumes, tagsOf, TagKeys, volumeById } from './support/ec2.js';
import {
  attachmentsOf,
  createClaim,
  createNamespace,
  createPod,
  createStorageClass,
  DRIVER,
  eventsFor,
  orMissing,
  readClaim,
  readPod,
  readVolume,
  volumeZones,
  ZONE_KEY,
} from './support/kube.js';
import { provisionForPod, reclaimPolicies, waitClaimBound, waitPodRunning, type ScenarioContext } from './support/scenarios.js';
import { STACK_START_MS } from './support/plane.js';
import { startScenarioStack, type E2eStack } from './support/stack.js';
import { waitFor } from './support/wait.js';

let stack: E2eStack;
let ctx: ScenarioContext;

/**
 * `npm run cluster -- adopt <id> --apply` against the stack, as an operator runs it: the cluster
 * registered in a registry file, its PVs read through a kubeconfig, EC2 the stack's simulator.
 */
async function adopt(): Promise<{ code: number; stdout: string; stderr: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'volhook-adopt-e2e-'));
  try {
    const registry = join(dir, 'clusters.json');
    const kubeconfig = join(dir, 'kubeconfig');
    await writeFile(kubeconfig, stack.operatorKubeconfig);
    let stdout = '';
    let stderr = '';
    const io = {
      stdout: (t: string) => void (stdout += t),
      stderr: (t: string) => void (stderr += t),
      env: {},
      ec2Client: (region: string) => new EC2Client({ region, endpoint: stack.urls.ec2, credentials: { accessKeyId: 'local', secretAccessKey: 'local' }, maxAttempts: 3 }),
    };
    const added = await runClusterCli(['add', stack.clusterId, '--region', 'us-east-1', '--file', registry], io);
    if (added !== 0) throw new Error(`cluster add failed: ${stderr}`);
    const code = await runClusterCli(['adopt', stack.clusterId, '--kubeconfig', kubeconfig, '--file', registry, '--apply'], io);
    return { code, stdout, stderr };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

beforeAll(async () => {
  ({ stack, ctx } = await startScenarioStack());
}, STACK_START_MS);
afterAll(async () => stack?.stop());

describe('provisioning over the local stack', () => {
  it('WaitForFirstConsumer PVC + pod -> PVC Bound, PV and disk in the node zone with every tag, attached, pod Running', async () => {
    const p = await provisionForPod(ctx, 'wffc');
    expect(p.zone).toMatch(/^us-east-1[abc]$/);
  }, 120_000);

  it('Delete and Retain claims, pods then claims deleted -> Delete: detached, disk and PV gone; Retain: disk and Released PV stay', async () => {
    await reclaimPolicies(ctx, 'reclaim');
  }, 150_000);
});

describe('topology, static volumes, volume modes and classes', () => {
  it('Immediate class allowed only in us-east-1b -> disks made in us-east-1b, pods then scheduled onto the us-east-1b node', async () => {
    const ns = 'zone-b';
    await createNamespace(stack.kube, ns);
    await createStorageClass(stack.kube, {
      metadata: { name: 'only-b' },
      provisioner: DRIVER,
      parameters: { type: 'gp3' },
      volumeBindingMode: 'Immediate',
      reclaimPolicy: 'Delete',
      allowedTopologies: [{ matchLabelExpressions: [{ key: ZONE_KEY, values: ['us-east-1b'] }] }],
    });
    const names = ['one', 'two', 'three'];
    for (const name of names) await createClaim(stack.kube, ns, name, { storageClassName: 'only-b' });
    for (const name of names) {
      const pvc = await waitClaimBound(ctx, ns, name);
      const pv = await readVolume(stack.kube, pvc.spec?.volumeName ?? '');
      expect(volumeZones(pv)).toEqual(['us-east-1b']);
      const volume = await volumeById(stack.ec2, pv.spec?.csi?.volumeHandle ?? '');
      expect(volume?.AvailabilityZone).toBe('us-east-1b');
    }
    // Bound before any pod: the pods must follow the disks to their zone.
    const nodeB = stack.nodes.find((n) => n.zone === 'us-east-1b')!;
    for (const name of names) await createPod(stack.kube, ns, `user-${name}`, [name]);
    for (const name of names) {
      const running = await waitPodRunning(ctx, ns, `user-${name}`);
      expect(running.spec?.nodeName).toBe(nodeB.name);
    }
  }, 120_000);

  it('a static PV that fits an io2 claim -> the PV controller binds it, no disk is created, and it attaches', async () => {
    const ns = 'static';
    await createNamespace(stack.kube, ns);
    // The cluster's disk, adopted (the cluster tags `cluster adopt` adds; without
    // ebs.csi.aws.com/cluster, IAM lets volhook attach nothing: see the test below).
    const existing = await stack.ec2.send(
      new CreateVolumeCommand({
        AvailabilityZone: 'us-east-1a',
        Size: 10,
        VolumeType: 'io2',
        Iops: 1000,
        TagSpecifications: [{ ResourceType: 'volume', Tags: [{ Key: TagKeys.owner(stack.clusterId), Value: 'owned' }, { Key: TagKeys.ebsCluster, Value: 'true' }, { Key: TagKeys.volhookCluster, Value: stack.clusterId }] }],
      }),
    );
    const volumeId = existing.VolumeId ?? '';
    await waitFor(() => volumeById(stack.ec2, volumeId), (v) => v?.State === 'available', { what: `${volumeId} available` });
    await stack.kube.core.createPersistentVolume({
      body: {
        metadata: { name: 'static-fits' },
        spec: {
          capacity: { storage: '10Gi' },
          accessModes: ['ReadWriteOnce'],
          persistentVolumeReclaimPolicy: 'Retain',
          storageClassName: 'io2',
          csi: { driver: DRIVER, volumeHandle: volumeId, fsType: 'ext4' },
          nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: ZONE_KEY, operator: 'In', values: ['us-east-1a'] }] }] } },
        },
      },
    });
    await waitFor(() => readVolume(stack.kube, 'static-fits'), (pv) => pv.status?.phase === 'Available', { what: 'PV static-fits Available' });

    const creates = () => stack.simulator!.getStats().actions.CreateVolume?.calls ?? 0;
    const createsBefore = creates();
    const provisionedBefore = (await provisionedVolumes(stack.ec2, stack.clusterId)).length;

    await createClaim(stack.kube, ns, 'fits', { storageClassName: 'io2', size: '8Gi' });
    const pvc = await waitClaimBound(ctx, ns, 'fits');
    expect(pvc.spec?.volumeName).toBe('static-fits');
    expect(pvc.metadata?.annotations?.['volume.kubernetes.io/storage-provisioner']).toBeUndefined();

    await createPod(stack.kube, ns, 'user', ['fits']);
    const running = await waitPodRunning(ctx, ns, 'user');
    expect(running.spec?.nodeName).toBe(stack.nodes.find((n) => n.zone === 'us-east-1a')?.name);
    const attached = await volumeById(stack.ec2, volumeId);
    expect(attached?.State).toBe('in-use');

    expect(creates()).toBe(createsBefore);
    expect((await provisionedVolumes(stack.ec2, stack.clusterId)).length).toBe(provisionedBefore);
    const pv = await readVolume(stack.kube, 'static-fits');
    expect(pv.status?.phase).toBe('Bound');
    expect(pv.spec?.csi?.volumeHandle).toBe(volumeId);
  }, 120_000);

  it("a static PV whose disk is the cluster's but not adopted -> attach refused before AttachVolume, Warning FailedAttachVolume on the PV naming `npm run cluster -- adopt`; after `cluster adopt --apply` the pod made again runs", async () => {
    const ns = 'static-unadopted';
    const pvName = 'static-unadopted';
    await createNamespace(stack.kube, ns);
    // As the EBS CSI controller run with --k8s-tag-cluster-id leaves a disk (docs/deploy.md): the
    // cluster's tag, not the one the function's IAM role needs to touch it.
    const { VolumeId } = await stack.ec2.send(
      new CreateVolumeCommand({ AvailabilityZone: 'us-east-1a', Size: 4, VolumeType: 'gp3', TagSpecifications: [{ ResourceType: 'volume', Tags: [{ Key: TagKeys.owner(stack.clusterId), Value: 'owned' }] }] }),
    );
    const volumeId = VolumeId ?? '';
    await waitFor(() => volumeById(stack.ec2, volumeId), (v) => v?.State === 'available', { what: `${volumeId} available` });
    await stack.kube.core.createPersistentVolume({
      body: {
        metadata: { name: pvName },
        spec: {
          capacity: { storage: '4Gi' },
          accessModes: ['ReadWriteOnce'],
          persistentVolumeReclaimPolicy: 'Retain',
          storageClassName: 'gp3',
          claimRef: { namespace: ns, name: 'data' },
          csi: { driver: DRIVER, volumeHandle: volumeId, fsType: 'ext4' },
          nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: ZONE_KEY, operator: 'In', values: ['us-east-1a'] }] }] } },
        },
      },
    });
    await createClaim(stack.kube, ns, 'data', { storageClassName: 'gp3', size: '4Gi', volumeName: pvName });
    await waitClaimBound(ctx, ns, 'data');
    const attaches = () => stack.simulator!.getStats().actions.AttachVolume?.calls ?? 0;
    const before = attaches();

    await createPod(stack.kube, ns, 'user', ['data']);
    const events = await waitFor(
      () => eventsFor(stack.kube, 'default', 'PersistentVolume', pvName),
      (es) => es.some((e) => e.type === 'Warning' && e.reason === 'FailedAttachVolume'),
      { what: `Warning FailedAttachVolume on PV ${pvName}` },
    );
    const warning = events.find((e) => e.reason === 'FailedAttachVolume')?.message ?? '';
    expect(warning).toContain(volumeId);
    expect(warning).toContain(`npm run cluster -- adopt ${stack.clusterId}`);
    expect(warning).toContain('ebs.csi.aws.com/cluster=true');
    const [va] = await attachmentsOf(stack.kube, pvName);
    expect(va?.status?.attachError?.message).toBe(warning);
    expect(ctx.results).toContainEqual(expect.objectContaining({ key: `VolumeAttachment/${va?.metadata?.name}`, outcome: 'failed', reason: 'NotAdopted' }));
    await sleep(2_000);
    expect((await readPod(stack.kube, ns, 'user')).status?.phase).not.toBe('Running');
    expect(attaches()).toBe(before);
    expect((await volumeById(stack.ec2, volumeId))?.Attachments ?? []).toEqual([]);

    // The control, and the fix the Warning names: adopt, as an operator runs it; then the pod
    // made again (the refused attach itself is tried again only after its 300 s) runs.
    const adopted = await adopt();
    expect(adopted.code, adopted.stderr).toBe(0);
    expect(adopted.stdout).toContain(volumeId);
    expect(tagsOf(await volumeById(stack.ec2, volumeId))).toMatchObject({ [TagKeys.owner(stack.clusterId)]: 'owned', [TagKeys.ebsCluster]: 'true', [TagKeys.volhookCluster]: stack.clusterId, [TagKeys.csiVolumeName]: pvName });
    await stack.kube.core.deleteNamespacedPod({ namespace: ns, name: 'user' });
    await waitFor(() => orMissing(readPod(stack.kube, ns, 'user')), (p) => p === undefined, { what: `pod ${ns}/user gone` });
    await waitFor(() => attachmentsOf(stack.kube, pvName), (vas) => vas.length === 0, { what: `no VolumeAttachment for ${pvName}` });
    await createPod(stack.kube, ns, 'user', ['data']);
    const running = await waitPodRunning(ctx, ns, 'user');
    expect(running.spec?.nodeName).toBe(stack.nodes.find((n) => n.zone === 'us-east-1a')?.name);
    expect(attaches()).toBeGreaterThan(before);
    expect((await volumeById(stack.ec2, volumeId))?.Attachments?.map((a) => a.State)).toEqual(['attached']);
  }, 150_000);

  it('a Block claim -> Block PV without fsType, attached, pod Running', async () => {
    const ns = 'block';
    await createNamespace(stack.kube, ns);
    await createClaim(stack.kube, ns, 'raw', { storageClassName: 'gp3', volumeMode: 'Block' });
    await createPod(stack.kube, ns, 'user', ['raw'], { block: true });
    const pvc = await waitClaimBound(ctx, ns, 'raw');
    await waitPodRunning(ctx, ns, 'user');
    const pv = await readVolume(stack.kube, pvc.spec?.volumeName ?? '');
    expect(pv.spec?.volumeMode).toBe('Block');
    expect(pv.spec?.csi?.fsType).toBeUndefined();
    const [va] = await attachmentsOf(stack.kube, pv.metadata?.name ?? '');
    expect(va?.status?.attached).toBe(true);
    expect((await volumeById(stack.ec2, pv.spec?.csi?.volumeHandle ?? ''))?.State).toBe('in-use');
  }, 120_000);

  it('a claim on the io2 class (iops 4000) -> an io2 disk with 4000 IOPS', async () => {
    const ns = 'io2';
    await createNamespace(stack.kube, ns);
    await createClaim(stack.kube, ns, 'fast', { storageClassName: 'io2', size: '8Gi' });
    const pvc = await waitClaimBound(ctx, ns, 'fast');
    const pv = await readVolume(stack.kube, pvc.spec?.volumeName ?? '');
    expect(pv.spec?.capacity?.storage).toBe('8Gi');
    const volume = await volumeById(stack.ec2, pv.spec?.csi?.volumeHandle ?? '');
    expect(volume).toMatchObject({ VolumeType: 'io2', Iops: 4000, Size: 8 });
  }, 120_000);

  it('classes with an unknown key or iops together with iopsPerGB -> claims stay Pending with Normal Provisioning then Warning ProvisioningFailed naming the parameter, no disk; refused again -> the same two Events counted up, no new ones', async () => {
    const ns = 'bad-params';
    await createNamespace(stack.kube, ns);
    const classes: { name: string; parameters: Record<string, string>; names: string[] }[] = [
      { name: 'bad-unknown', parameters: { type: 'gp3', foo: 'bar' }, names: ['foo'] },
      { name: 'bad-iops', parameters: { type: 'io2', iops: '1000', iopsPerGB: '10' }, names: ['iops', 'iopsPerGB'] },
    ];
    for (const c of classes) {
      await createStorageClass(stack.kube, { metadata: { name: c.name }, provisioner: DRIVER, parameters: c.parameters, volumeBindingMode: 'Immediate' });
      await createClaim(stack.kube, ns, c.name, { storageClassName: c.name, size: '8Gi' });
    }
    for (const c of classes) {
      const events = await waitFor(
        () => eventsFor(stack.kube, ns, 'PersistentVolumeClaim', c.name),
        (es) => es.some((e) => e.type === 'Warning' && e.reason === 'ProvisioningFailed'),
        { what: `a Warning ProvisioningFailed event on PVC ${ns}/${c.name}`, report: (es) => es.map((e) => [e.type, e.reason, e.message]) },
      );
      const failed = events.find((e) => e.reason === 'ProvisioningFailed');
      for (const parameter of c.names) expect(failed?.message).toContain(parameter);
      // As external-provisioner records a Provision call it fails: Normal Provisioning first.
      expect(events.map((e) => `${e.type} ${e.reason}: ${e.message}`)).toContain(`Normal Provisioning: External provisioner is provisioning volume for claim "${ns}/${c.name}"`);
    }
    // Each refusal again (the claim changed, the forwarder sends it anew) counts on the same two
    // Events, as client-go's recorder aggregates them: no new Event per refusal.
    for (const c of classes) {
      for (const n of [1, 2]) {
        await stack.kube.core.patchNamespacedPersistentVolumeClaim({ namespace: ns, name: c.name, body: [{ op: 'add', path: '/metadata/labels', value: { touched: String(n) } }] });
      }
      const events = await waitFor(
        () => eventsFor(stack.kube, ns, 'PersistentVolumeClaim', c.name),
        (es) => es.filter((e) => e.reason === 'ProvisioningFailed').every((e) => (e.count ?? 1) >= 2),
        { what: `the refusal of ${ns}/${c.name} counted again`, report: (es) => es.map((e) => [e.reason, e.count]) },
      );
      const ours = events.filter((e) => e.reason === 'Provisioning' || e.reason === 'ProvisioningFailed');
      expect(ours.map((e) => e.reason).sort()).toEqual(['Provisioning', 'ProvisioningFailed']);
      for (const e of ours) expect(e.count, e.reason).toBeGreaterThanOrEqual(2);
    }
    // A few more retries by the forwarder change nothing.
    await sleep(2_500);
    for (const c of classes) {
      const pvc = await readClaim(stack.kube, ns, c.name);
      expect(pvc.status?.phase).toBe('Pending');
      expect(pvc.spec?.volumeName).toBeUndefined();
    }
    const made = (await provisionedVolumes(stack.ec2, stack.clusterId)).filter((v) => tagsOf(v)[TagKeys.pvcNamespace] === ns);
    expect(made).toEqual([]);
  }, 120_000);
});
