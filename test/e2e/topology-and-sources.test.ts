/**
 * End to end over the local stack (real HTTP: Kubernetes API, forwarder, backend, EC2
 * simulator): claims and classes a cluster made for the EBS CSI driver may already have —
 * a clone claim, classes placed by zone ID, a class with a topology key volhook does not read.
 * One stack; every scenario in its own namespace.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { DescribeAvailabilityZonesCommand } from '@aws-sdk/client-ec2';
import type { V1PersistentVolumeClaim, V1StorageClass } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { provisionedVolumes, tagsOf, TagKeys, volumeById } from './support/ec2.js';
import { claim, createNamespace, createPod, createStorageClass, DRIVER, eventsFor, readClaim, readVolume, ZONE_KEY } from './support/kube.js';
import { waitClaimBound, waitPodRunning, type ScenarioContext } from './support/scenarios.js';
import { STACK_START_MS } from './support/plane.js';
import { IMMEDIATE_CLASS, startScenarioStack, type E2eStack } from './support/stack.js';
import { waitFor } from './support/wait.js';

const ZONE_ID_KEY = 'topology.k8s.aws/zone-id';

let stack: E2eStack;
let ctx: ScenarioContext;

beforeAll(async () => {
  ({ stack, ctx } = await startScenarioStack({ immediateClass: true }));
}, STACK_START_MS);
afterAll(async () => stack?.stop());

const creates = () => stack.simulator!.getStats().actions.CreateVolume?.calls ?? 0;

/** The simulator's ID of `zone`, read as any EC2 client would. */
async function zoneIdOf(zone: string): Promise<string> {
  const { AvailabilityZones } = await stack.ec2.send(new DescribeAvailabilityZonesCommand({ ZoneNames: [zone] }));
  const id = AvailabilityZones?.[0]?.ZoneId;
  if (!id) throw new Error(`EC2 gave no ID for ${zone}`);
  return id;
}

/** Waits for the claim's Warning ProvisioningFailed; returns its message. */
async function provisioningFailure(namespace: string, name: string): Promise<string> {
  const events = await waitFor(
    () => eventsFor(stack.kube, namespace, 'PersistentVolumeClaim', name),
    (es) => es.some((e) => e.type === 'Warning' && e.reason === 'ProvisioningFailed'),
    { what: `Warning ProvisioningFailed on claim ${namespace}/${name}` },
  );
  return events.find((e) => e.type === 'Warning' && e.reason === 'ProvisioningFailed')?.message ?? '';
}

/** The claim is refused for good: Pending, no PV, no protection finalizer, no disk of its namespace. */
async function expectNothingProvisioned(namespace: string, name: string): Promise<V1PersistentVolumeClaim> {
  // A resync or two for anything that would still go wrong.
  await sleep(2_500);
  const pvc = await readClaim(stack.kube, namespace, name);
  expect(pvc.status?.phase).toBe('Pending');
  expect(pvc.spec?.volumeName).toBeUndefined();
  expect(pvc.metadata?.finalizers ?? []).not.toContain('volhook.io/provisioning-protection');
  const ours = (await provisionedVolumes(stack.ec2, stack.clusterId)).filter((v) => tagsOf(v)[TagKeys.pvcNamespace] === namespace);
  expect(ours).toEqual([]);
  return pvc;
}

describe('data sources over the local stack', () => {
  it('a clone claim (dataSource PersistentVolumeClaim) -> Pending, Warning ProvisioningFailed naming the kind, no CreateVolume', async () => {
    const ns = 'clone';
    await createNamespace(stack.kube, ns);
    const before = creates();
    const body = claim(ns, 'copy', { storageClassName: IMMEDIATE_CLASS });
    body.spec!.dataSource = { kind: 'PersistentVolumeClaim', name: 'original' };
    await stack.kube.core.createNamespacedPersistentVolumeClaim({ namespace: ns, body });

    const message = await provisioningFailure(ns, 'copy');
    expect(message).toContain(`failed to provision volume with StorageClass "${IMMEDIATE_CLASS}"`);
    expect(message).toContain('PersistentVolumeClaim "original"');
    await expectNothingProvisioned(ns, 'copy');
    expect(creates()).toBe(before);
  }, 120_000);
});

describe('topology over the local stack', () => {
  it("Immediate class on the zone ID of us-east-1b -> the disk in us-east-1b, PV nodeAffinity topology.kubernetes.io/zone In [us-east-1b], pod Running there", async () => {
    const ns = 'zone-id-immediate';
    await createNamespace(stack.kube, ns);
    const zoneId = await zoneIdOf('us-east-1b');
    const nodeB = stack.nodes.find((n) => n.zone === 'us-east-1b')!;
    expect(nodeB.zoneId).toBe(zoneId);
    const node = await stack.kube.core.readNode({ name: nodeB.name });
    expect(node.metadata?.labels?.[ZONE_ID_KEY]).toBe(zoneId);

    await createStorageClass(stack.kube, {
      metadata: { name: 'by-zone-id' },
      provisioner: DRIVER,
      parameters: { type: 'gp3' },
      volumeBindingMode: 'Immediate',
      allowedTopologies: [{ matchLabelExpressions: [{ key: ZONE_ID_KEY, values: [zoneId] }] }],
    });
    await stack.kube.core.createNamespacedPersistentVolumeClaim({ namespace: ns, body: claim(ns, 'data', { storageClassName: 'by-zone-id' }) });
    const pvc = await waitClaimBound(ctx, ns, 'data');
    const pv = await readVolume(stack.kube, pvc.spec?.volumeName ?? '');
    expect(pv.spec?.nodeAffinity).toEqual({
      required: { nodeSelectorTerms: [{ matchExpressions: [{ key: ZONE_KEY, operator: 'In', values: ['us-east-1b'] }] }] },
    });
    const volume = await volumeById(stack.ec2, pv.spec?.csi?.volumeHandle ?? '');
    expect(volume?.AvailabilityZone).toBe('us-east-1b');

    await createPod(stack.kube, ns, 'user', ['data']);
    const running = await waitPodRunning(ctx, ns, 'user');
    expect(running.spec?.nodeName).toBe(nodeB.name);
  }, 120_000);

  it('WaitForFirstConsumer class on the zone ID of us-east-1c -> the pod scheduled onto the us-east-1c node, the disk there', async () => {
    const ns = 'zone-id-wffc';
    await createNamespace(stack.kube, ns);
    const zoneId = await zoneIdOf('us-east-1c');
    const nodeC = stack.nodes.find((n) => n.zone === 'us-east-1c')!;
    await createStorageClass(stack.kube, {
      metadata: { name: 'by-zone-id-wffc' },
      provisioner: DRIVER,
      parameters: { type: 'gp3' },
      volumeBindingMode: 'WaitForFirstConsumer',
      allowedTopologies: [{ matchLabelExpressions: [{ key: ZONE_ID_KEY, values: [zoneId] }] }],
    });
    await stack.kube.core.createNamespacedPersistentVolumeClaim({ namespace: ns, body: claim(ns, 'data', { storageClassName: 'by-zone-id-wffc' }) });
    await createPod(stack.kube, ns, 'user', ['data']);
    const running = await waitPodRunning(ctx, ns, 'user');
    expect(running.spec?.nodeName).toBe(nodeC.name);
    const pvc = await waitClaimBound(ctx, ns, 'data');
    const pv = await readVolume(stack.kube, pvc.spec?.volumeName ?? '');
    expect(pv.spec?.nodeAffinity?.required?.nodeSelectorTerms).toEqual([
      { matchExpressions: [{ key: ZONE_KEY, operator: 'In', values: ['us-east-1c'] }] },
    ]);
    const volume = await volumeById(stack.ec2, pv.spec?.csi?.volumeHandle ?? '');
    expect(volume?.AvailabilityZone).toBe('us-east-1c');
  }, 120_000);

  it('a class whose term uses a key volhook does not read -> Warning ProvisioningFailed naming the key, no disk', async () => {
    const ns = 'unknown-key';
    await createNamespace(stack.kube, ns);
    const before = creates();
    const byRegion: V1StorageClass = {
      metadata: { name: 'by-region' },
      provisioner: DRIVER,
      parameters: { type: 'gp3' },
      volumeBindingMode: 'Immediate',
      allowedTopologies: [{ matchLabelExpressions: [{ key: 'topology.kubernetes.io/region', values: ['us-east-1'] }] }],
    };
    await createStorageClass(stack.kube, byRegion);
    await stack.kube.core.createNamespacedPersistentVolumeClaim({ namespace: ns, body: claim(ns, 'data', { storageClassName: 'by-region' }) });

    const message = await provisioningFailure(ns, 'data');
    expect(message).toContain('"topology.kubernetes.io/region"');
    await expectNothingProvisioned(ns, 'data');
    expect(creates()).toBe(before);
  }, 120_000);
});
