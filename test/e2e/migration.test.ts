/**
 * CSI migration end to end over the local stack (real HTTP: Kubernetes API, forwarder,
 * backend, EC2 simulator), driven with kubectl and YAML as a user would: EKS's in-tree `gp2`
 * class (`kubernetes.io/aws-ebs`) and an in-tree PV from before migration, served by volhook as
 * external-provisioner and external-attacher serve them for the migrated plugin.
 */
import { CreateVolumeCommand } from '@aws-sdk/client-ec2';
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tagsOf, TagKeys, volumeById } from './support/ec2.js';
import { attachmentsOf, createNamespace, DRIVER, eventsFor, listAttachments, orMissing, readClaim, readVolume } from './support/kube.js';
import { kubectlFor, podYaml, type Kubectl } from './support/kubectl.js';
import { waitClaimBound, waitPodRunning, type ScenarioContext } from './support/scenarios.js';
import { STACK_START_MS } from './support/plane.js';
import { startScenarioStack, type E2eStack } from './support/stack.js';
import { waitFor } from './support/wait.js';

let stack: E2eStack;
let ctx: ScenarioContext;
let kubectl: Kubectl;

beforeAll(async () => {
  ({ stack, ctx } = await startScenarioStack());
  kubectl = await kubectlFor(stack);
}, STACK_START_MS);
afterAll(async () => {
  await stack?.stop();
  await kubectl?.close();
});


const attachmentName = (volumeHandle: string, nodeName: string) =>
  `csi-${createHash('sha256').update(`${volumeHandle}${DRIVER}${nodeName}`).digest('hex')}`;


describe('CSI migration of in-tree kubernetes.io/aws-ebs over the local stack', () => {
  it('an in-tree gp2 class claim with a pod -> Bound, attached, Running, PV as external-provisioner writes it for a migrated plugin; claim deleted -> Delete reclaims disk and PV', async () => {
    const gp2 = JSON.parse(await kubectl('get', 'storageclass', 'gp2', '-o', 'json')) as Record<string, unknown>;
    expect(gp2).toMatchObject({
      provisioner: 'kubernetes.io/aws-ebs',
      parameters: { fsType: 'ext4', type: 'gp2' },
      reclaimPolicy: 'Delete',
      volumeBindingMode: 'WaitForFirstConsumer',
    });

    const ns = 'in-tree';
    await createNamespace(stack.kube, ns);
    const created = await kubectl.create(
      `apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: data
  namespace: ${ns}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: gp2
  resources:
    requests:
      storage: 5Gi
---
${podYaml(ns, 'app', 'data')}`,
    );
    expect(created).toContain('persistentvolumeclaim/data created');
    expect(created).toContain('pod/app created');

    const pvc = await waitClaimBound(ctx, ns, 'data');
    const running = await waitPodRunning(ctx, ns, 'app');
    const nodeName = running.spec?.nodeName ?? '';
    const node = stack.nodes.find((n) => n.name === nodeName)!;
    expect(node, `the pod's node ${nodeName}`).toBeDefined();
    const pvName = `pvc-${pvc.metadata?.uid}`;
    expect(pvc.spec?.volumeName).toBe(pvName);
    // The PV controller handed the claim of the in-tree class to the CSI driver.
    expect(pvc.metadata?.annotations).toMatchObject({
      'volume.kubernetes.io/storage-provisioner': DRIVER,
      'volume.beta.kubernetes.io/storage-provisioner': DRIVER,
    });
    const reasons = (await eventsFor(stack.kube, ns, 'PersistentVolumeClaim', 'data')).map((e) => e.reason);
    expect(reasons).toEqual(expect.arrayContaining(['ExternalProvisioning', 'Provisioning', 'ProvisioningSucceeded']));

    // The PV, as external-provisioner writes it for a migrated plugin (CSI PV translated back
    // to in-tree), plus what the API server, the PV controller and the attacher add.
    const pv = await readVolume(stack.kube, pvName);
    const volumeId = pv.spec?.awsElasticBlockStore?.volumeID ?? '';
    expect(volumeId).toMatch(/^vol-[0-9a-f]+$/);
    expect(pv.metadata?.annotations).toEqual({
      'pv.kubernetes.io/provisioned-by': 'kubernetes.io/aws-ebs',
      'volume.kubernetes.io/provisioner-deletion-secret-name': '',
      'volume.kubernetes.io/provisioner-deletion-secret-namespace': '',
      'pv.kubernetes.io/migrated-to': DRIVER,
    });
    expect(pv.metadata?.labels).toEqual({ 'topology.kubernetes.io/zone': node.zone, 'topology.kubernetes.io/region': 'us-east-1' });
    expect([...(pv.metadata?.finalizers ?? [])].sort()).toEqual(
      ['external-attacher/ebs-csi-aws-com', 'external-provisioner.volume.kubernetes.io/finalizer', 'kubernetes.io/pv-protection'],
    );
    expect(pv.spec).toEqual({
      accessModes: ['ReadWriteOnce'],
      capacity: { storage: '5Gi' },
      awsElasticBlockStore: { volumeID: volumeId, fsType: 'ext4' },
      claimRef: expect.objectContaining({ kind: 'PersistentVolumeClaim', apiVersion: 'v1', namespace: ns, name: 'data', uid: pvc.metadata?.uid }),
      persistentVolumeReclaimPolicy: 'Delete',
      storageClassName: 'gp2',
      volumeMode: 'Filesystem',
      nodeAffinity: {
        required: {
          nodeSelectorTerms: [
            {
              matchExpressions: [
                { key: 'topology.kubernetes.io/zone', operator: 'In', values: [node.zone] },
                { key: 'topology.kubernetes.io/region', operator: 'In', values: ['us-east-1'] },
              ],
            },
          ],
        },
      },
    });
    expect(pv.status?.phase).toBe('Bound');

    // The disk: gp2 (the class's type), in the node's zone, attached to its instance.
    const volume = await waitFor(() => volumeById(stack.ec2, volumeId), (v) => v?.State === 'in-use', { what: `${volumeId} in-use` });
    expect(volume).toMatchObject({ VolumeType: 'gp2', Size: 5, AvailabilityZone: node.zone });
    expect(volume?.Attachments?.map((a) => a.InstanceId)).toEqual([node.instanceId]);
    expect(tagsOf(volume)).toMatchObject({ [TagKeys.csiVolumeName]: pvName, [TagKeys.owner(stack.clusterId)]: 'owned', [TagKeys.pvcNamespace]: ns });

    // The VolumeAttachment the attach/detach controller makes for a migrated PV.
    const [va, ...more] = await attachmentsOf(stack.kube, pvName);
    expect(more).toEqual([]);
    expect(va?.metadata?.name).toBe(attachmentName(volumeId, nodeName));
    expect(va?.spec).toEqual({ attacher: DRIVER, nodeName, source: { persistentVolumeName: pvName } });
    expect(va?.status?.attached).toBe(true);

    // Pod, then claim, deleted: detached, then the disk and the PV go (Delete).
    await kubectl('delete', 'pod', 'app', '-n', ns, '--wait=false');
    await waitFor(() => attachmentsOf(stack.kube, pvName), (vas) => vas.length === 0, { what: `no VolumeAttachment for ${pvName}` });
    await kubectl('delete', 'pvc', 'data', '-n', ns, '--wait=false');
    await waitFor(() => orMissing(readVolume(stack.kube, pvName)), (gone) => gone === undefined, { what: `PV ${pvName} deleted` });
    await waitFor(() => volumeById(stack.ec2, volumeId), (v) => v === undefined, { what: `EC2 volume ${volumeId} deleted` });
  }, 150_000);

  it('an in-tree PV from before migration (aws://zone/vol-…, provisioned-by kubernetes.io/aws-ebs) -> migrated-to, binds, attaches, pod Running; claim deleted -> its disk is deleted', async () => {
    const ns = 'before-migration';
    const zone = 'us-east-1a';
    const node = stack.nodes.find((n) => n.zone === zone)!;
    // The in-tree plugin's disk once adopted (`npm run cluster -- adopt` adds the cluster tags): the
    // function's IAM role may attach, detach and delete only disks tagged ebs.csi.aws.com/cluster=true.
    const disk = await stack.ec2.send(
      new CreateVolumeCommand({
        AvailabilityZone: zone,
        Size: 4,
        VolumeType: 'gp2',
        TagSpecifications: [{ ResourceType: 'volume', Tags: [{ Key: TagKeys.owner(stack.clusterId), Value: 'owned' }, { Key: TagKeys.ebsCluster, Value: 'true' }, { Key: TagKeys.volhookCluster, Value: stack.clusterId }] }],
      }),
    );
    const volumeId = disk.VolumeId ?? '';
    await waitFor(() => volumeById(stack.ec2, volumeId), (v) => v?.State === 'available', { what: `${volumeId} available` });

    await createNamespace(stack.kube, ns);
    await kubectl.create(
      `apiVersion: v1
kind: PersistentVolume
metadata:
  name: pvc-legacy
  annotations:
    pv.kubernetes.io/provisioned-by: kubernetes.io/aws-ebs
  labels:
    failure-domain.beta.kubernetes.io/zone: ${zone}
    failure-domain.beta.kubernetes.io/region: us-east-1
spec:
  capacity: { storage: 4Gi }
  accessModes: [ReadWriteOnce]
  persistentVolumeReclaimPolicy: Delete
  storageClassName: gp2
  claimRef: { namespace: ${ns}, name: legacy }
  awsElasticBlockStore:
    volumeID: aws://${zone}/${volumeId}
    fsType: ext4
  nodeAffinity:
    required:
      nodeSelectorTerms:
        - matchExpressions:
            - { key: topology.kubernetes.io/zone, operator: In, values: [${zone}] }
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: legacy
  namespace: ${ns}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: gp2
  volumeName: pvc-legacy
  resources:
    requests:
      storage: 4Gi
---
${podYaml(ns, 'app', 'legacy')}`,
    );
    await waitClaimBound(ctx, ns, 'legacy');
    const running = await waitPodRunning(ctx, ns, 'app');
    expect(running.spec?.nodeName).toBe(node.name);

    const pv = await waitFor(
      () => readVolume(stack.kube, 'pvc-legacy'),
      (v) => (v.metadata?.finalizers ?? []).includes('external-provisioner.volume.kubernetes.io/finalizer'),
      { what: 'PV pvc-legacy with the provisioner finalizer (Bound, Delete, migrated)' },
    );
    expect(pv.metadata?.annotations?.['pv.kubernetes.io/migrated-to']).toBe(DRIVER);
    expect(pv.spec?.awsElasticBlockStore?.volumeID).toBe(`aws://${zone}/${volumeId}`);
    // The attachment is named from the translated ID, and the disk attached under it.
    const [va] = await attachmentsOf(stack.kube, 'pvc-legacy');
    expect(va?.metadata?.name).toBe(attachmentName(volumeId, node.name));
    expect(va?.status?.attached).toBe(true);
    const attached = await volumeById(stack.ec2, volumeId);
    expect(attached?.Attachments?.map((a) => a.InstanceId)).toEqual([node.instanceId]);

    await kubectl('delete', 'pod', 'app', '-n', ns, '--wait=false');
    await waitFor(() => attachmentsOf(stack.kube, 'pvc-legacy'), (vas) => vas.length === 0, { what: 'no VolumeAttachment for pvc-legacy' });
    await kubectl('delete', 'pvc', 'legacy', '-n', ns, '--wait=false');
    await waitFor(() => orMissing(readVolume(stack.kube, 'pvc-legacy')), (gone) => gone === undefined, { what: 'PV pvc-legacy deleted' });
    await waitFor(() => volumeById(stack.ec2, volumeId), (v) => v === undefined, { what: `EC2 volume ${volumeId} deleted` });
    expect(await orMissing(readClaim(stack.kube, ns, 'legacy'))).toBeUndefined();
  }, 150_000);
  it('a pod with an inline awsElasticBlockStore volume -> a VolumeAttachment with the translated inlineVolumeSpec and no PV, attached, Running; pod deleted -> detached, the disk kept', async () => {
    const ns = 'inline';
    const zone = 'us-east-1a';
    const node = stack.nodes.find((n) => n.zone === zone)!;
    const disk = await stack.ec2.send(
      new CreateVolumeCommand({
        AvailabilityZone: zone,
        Size: 4,
        VolumeType: 'gp3',
        TagSpecifications: [{ ResourceType: 'volume', Tags: [{ Key: TagKeys.owner(stack.clusterId), Value: 'owned' }, { Key: TagKeys.ebsCluster, Value: 'true' }, { Key: TagKeys.volhookCluster, Value: stack.clusterId }] }],
      }),
    );
    const volumeId = disk.VolumeId ?? '';
    await waitFor(() => volumeById(stack.ec2, volumeId), (v) => v?.State === 'available', { what: `${volumeId} available` });

    await createNamespace(stack.kube, ns);
    await kubectl.create(
      `apiVersion: v1
kind: Pod
metadata:
  name: app
  namespace: ${ns}
spec:
  nodeName: ${node.name}
  terminationGracePeriodSeconds: 1
  containers:
    - name: app
      image: nginx:1.27
      volumeMounts: [{ name: disk, mountPath: /data }]
  volumes:
    - name: disk
      awsElasticBlockStore:
        volumeID: aws://${zone}/${volumeId}
        fsType: ext4`,
    );
    await waitPodRunning(ctx, ns, 'app');
    const name = attachmentName(volumeId, node.name);
    const va = (await listAttachments(stack.kube)).find((a) => a.metadata?.name === name);
    expect(va?.spec).toEqual({
      attacher: DRIVER,
      nodeName: node.name,
      // volumeMode: the API server's default of every PersistentVolumeSpec.
      source: { inlineVolumeSpec: { csi: { driver: DRIVER, volumeHandle: volumeId, fsType: 'ext4', volumeAttributes: { partition: '0' } }, accessModes: ['ReadWriteOnce'], volumeMode: 'Filesystem' } },
    });
    expect(va?.status?.attached).toBe(true);
    expect(va?.metadata?.finalizers).toEqual(['external-attacher/ebs-csi-aws-com']);
    expect((await volumeById(stack.ec2, volumeId))?.Attachments?.map((a) => a.InstanceId)).toEqual([node.instanceId]);

    await kubectl('delete', 'pod', 'app', '-n', ns, '--wait=false');
    await waitFor(() => listAttachments(stack.kube), (vas) => !vas.some((a) => a.metadata?.name === name), { what: `VolumeAttachment ${name} gone` });
    const after = await waitFor(() => volumeById(stack.ec2, volumeId), (v) => v?.State === 'available', { what: `${volumeId} detached` });
    expect(after?.Attachments ?? []).toEqual([]);
  }, 150_000);
});
