/**
 * The example StorageClasses (infra/examples/storageclasses.yaml) work as shipped: applied to the
 * local stack under names of their own (the stack has classes of the same names), each
 * provisions a claim — the WaitForFirstConsumer ones for a pod, io2 at once. And a class whose
 * IOPS the type caps at the claim's size: capped, and said.
 */
import { readFileSync } from 'node:fs';
import type { V1StorageClass } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { volumeById } from './support/ec2.js';
import { createClaim, createNamespace, createPod, createStorageClass, eventsFor, readClaim, readVolume } from './support/kube.js';
import { waitClaimBound, type ScenarioContext } from './support/scenarios.js';
import { startScenarioStack, type E2eStack } from './support/stack.js';
import { waitFor } from './support/wait.js';

const classes = parseAllDocuments(readFileSync(new URL('../../infra/examples/storageclasses.yaml', import.meta.url), 'utf8'))
  .map((doc) => doc.toJS() as V1StorageClass)
  .filter((doc) => doc?.kind === 'StorageClass');

let stack: E2eStack;
let ctx: ScenarioContext;

beforeAll(async () => {
  ({ stack, ctx } = await startScenarioStack());
}, 120_000);
afterAll(() => stack?.stop());

describe('infra/examples/storageclasses.yaml on the local stack', () => {
  it('every example class provisions a claim: Bound, its PV with the class\'s type, reclaim policy and fsType', async () => {
    expect(classes.map((c) => c.metadata?.name)).toEqual(['gp3', 'gp3-retain', 'io2']);
    await createNamespace(stack.kube, 'examples');
    for (const example of classes) {
      const name = `example-${example.metadata!.name}`;
      // As shipped, but for its name and the default-class mark (the stack has a default).
      await createStorageClass(stack.kube, { ...example, metadata: { name } });
      await createClaim(stack.kube, 'examples', name, { storageClassName: name, size: '16Gi' });
      if (example.volumeBindingMode === 'WaitForFirstConsumer') await createPod(stack.kube, 'examples', `user-${name}`, [name]);
    }
    for (const example of classes) {
      const name = `example-${example.metadata!.name}`;
      const pvc = await waitClaimBound(ctx, 'examples', name);
      const pv = await readVolume(stack.kube, pvc.spec!.volumeName!);
      expect(pv.spec?.persistentVolumeReclaimPolicy, name).toBe(example.reclaimPolicy);
      expect(pv.spec?.csi?.fsType, name).toBe(example.parameters?.['csi.storage.k8s.io/fstype']);
      const volume = await volumeById(stack.ec2, pv.spec!.csi!.volumeHandle);
      expect(volume?.VolumeType, name).toBe(example.parameters?.type);
      expect(volume?.Encrypted, name).toBe(true);
      if (example.parameters?.iops) expect(volume?.Iops, name).toBe(Number(example.parameters.iops));
    }
  }, 120_000);

  it('a class asking for more IOPS than its type allows at the size -> provisioned at the cap, and said: a Normal Event on the claim, an annotation on the PV', async () => {
    await createStorageClass(stack.kube, { metadata: { name: 'io2-greedy' }, provisioner: 'ebs.csi.aws.com', parameters: { type: 'io2', iops: '500000' }, volumeBindingMode: 'Immediate' });
    await createClaim(stack.kube, 'examples', 'greedy', { storageClassName: 'io2-greedy', size: '10Gi' });
    const pvc = await waitClaimBound(ctx, 'examples', 'greedy');
    const pv = await readVolume(stack.kube, pvc.spec!.volumeName!);
    const said = '500,000 IOPS asked, 10,000 given: io2 allows at most 1,000 IOPS per GiB: 10,000 for 10 GiB';
    expect((await volumeById(stack.ec2, pv.spec!.csi!.volumeHandle))?.Iops).toBe(10_000);
    expect(pv.metadata?.annotations?.['volhook.io/iops-adjusted']).toBe(said);
    const events = await waitFor(() => eventsFor(stack.kube, 'examples', 'PersistentVolumeClaim', 'greedy'), (list) => list.some((e) => e.reason === 'IopsAdjusted'), { what: 'the IopsAdjusted Event' });
    expect(events.find((e) => e.reason === 'IopsAdjusted')).toMatchObject({ type: 'Normal', message: `volume ${pv.metadata!.name}: ${said}` });
    // The control: the shipped io2 class (within the limits at 16 GiB) got no such note.
    const shipped = await readVolume(stack.kube, (await readClaim(stack.kube, 'examples', 'example-io2')).spec!.volumeName!);
    expect(shipped.metadata?.annotations ?? {}).not.toHaveProperty('volhook.io/iops-adjusted');
    expect((await eventsFor(stack.kube, 'examples', 'PersistentVolumeClaim', 'example-io2')).map((e) => e.reason)).not.toContain('IopsAdjusted');
  }, 120_000);
});
