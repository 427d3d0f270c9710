/**
 * Source protection end to end over the local stack (real HTTP: Kubernetes API with the snapshot
 * CRDs and the common snapshot controller, forwarder, backend, EC2 simulator), driven with
 * kubectl as a user would: a VolumeSnapshot restored from, or a claim cloned, that is deleted
 * meanwhile stays Terminating under external-provisioner's finalizer until the new volume
 * exists, then goes; a new claim deleted before its volume is made leaves no finalizer behind
 * (external-provisioner #1507); with nothing made from it, a delete goes through at once.
 *
 * Volumes take 10 s to create here (EC2's CreateVolume latency fixed at 4,000 s, 400× fast),
 * so the deletes land while the new volume is being made.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SourceFinalizers } from '../../lib/contract/index.js';
import { DEFAULT_LATENCY } from '../../lib/local/ec2/config.js';
import { claimYaml, kubectlFor, type Kubectl } from './support/kubectl.js';
import { waitClaimBound, type ScenarioContext } from './support/scenarios.js';
import { STACK_START_MS } from './support/plane.js';
import { IMMEDIATE_CLASS, startScenarioStack, type E2eStack } from './support/stack.js';
import { waitFor } from './support/wait.js';

let stack: E2eStack;
let ctx: ScenarioContext;
let kubectl: Kubectl;

beforeAll(async () => {
  ({ stack, ctx } = await startScenarioStack({ immediateClass: true, ec2: { timeScale: 400 } }));
  kubectl = await kubectlFor(stack);
  await kubectl.create(`apiVersion: snapshot.storage.k8s.io/v1
kind: VolumeSnapshotClass
metadata: { name: ebs-protect }
driver: ebs.csi.aws.com
deletionPolicy: Delete
`);
}, STACK_START_MS);
afterAll(async () => {
  await stack?.stop();
  await kubectl?.close();
});

interface Meta {
  metadata: { finalizers?: string[]; deletionTimestamp?: string };
  status?: { phase?: string; readyToUse?: boolean };
}

/** The object, or undefined once it is gone. */
async function read(kind: string, ns: string, name: string): Promise<Meta | undefined> {
  const out = await kubectl('get', kind, name, '-n', ns, '--ignore-not-found', '-o', 'json');
  return out.trim() ? (JSON.parse(out) as Meta) : undefined;
}


const fromSnapshot = (name: string) => `  dataSource: { apiGroup: snapshot.storage.k8s.io, kind: VolumeSnapshot, name: ${name} }\n`;

/** A bound claim `name` and a ready VolumeSnapshot `snapshot` of it (volumes made at the usual pace). */
async function readySnapshot(ns: string, claim: string, snapshot: string): Promise<void> {
  await kubectl.create(claimYaml(ns, claim));
  await waitClaimBound(ctx, ns, claim);
  await kubectl.create(`apiVersion: snapshot.storage.k8s.io/v1
kind: VolumeSnapshot
metadata: { name: ${snapshot}, namespace: ${ns} }
spec:
  volumeSnapshotClassName: ebs-protect
  source: { persistentVolumeClaimName: ${claim} }
`);
  await waitFor(() => read('volumesnapshot', ns, snapshot), (s) => s?.status?.readyToUse === true, { what: `VolumeSnapshot ${ns}/${snapshot} ready`, timeoutMs: 60_000 });
}

/** New volumes take 10 s to become available (`slow`), or the usual time. */
function slowCreates(slow: boolean): void {
  stack.simulator!.configure({ latency: { create: slow ? { kind: 'fixed', ms: 4_000_000 } : DEFAULT_LATENCY.create } });
}

const hasFinalizer = (object: Meta | undefined, finalizer: string) => object?.metadata.finalizers?.includes(finalizer) ?? false;

describe('source protection over the local stack', () => {
  it('restore: the VolumeSnapshot deleted while its volume is made -> Terminating with volumesnapshot-as-source-protection until the claim is Bound, then gone', async () => {
    const ns = 'protect-restore';
    await kubectl('create', 'namespace', ns);
    await readySnapshot(ns, 'data', 'nightly');
    expect(hasFinalizer(await read('volumesnapshot', ns, 'nightly'), SourceFinalizers.snapshot)).toBe(false);

    slowCreates(true);
    try {
      await kubectl.create(claimYaml(ns, 'restored', { spec: fromSnapshot('nightly') }));
      await waitFor(() => read('volumesnapshot', ns, 'nightly'), (s) => hasFinalizer(s, SourceFinalizers.snapshot), { what: 'the source protection on nightly' });
      await kubectl('delete', 'volumesnapshot', 'nightly', '-n', ns, '--wait=false');
      await sleep(2_000);
      const terminating = await read('volumesnapshot', ns, 'nightly');
      expect(terminating?.metadata.deletionTimestamp).toBeDefined();
      expect(terminating?.metadata.finalizers).toContain(SourceFinalizers.snapshot);
      expect((await read('pvc', ns, 'restored'))?.status?.phase).toBe('Pending');

      await waitClaimBound(ctx, ns, 'restored');
      await waitFor(() => read('volumesnapshot', ns, 'nightly'), (s) => s === undefined, { what: 'VolumeSnapshot nightly gone after the restore', timeoutMs: 30_000 });
    } finally {
      slowCreates(false);
    }
  }, 180_000);

  it('restore: the new claim deleted before its volume is made (#1507) -> the protection leaves the VolumeSnapshot at once, nothing left behind', async () => {
    const ns = 'protect-1507';
    await kubectl('create', 'namespace', ns);
    await readySnapshot(ns, 'data', 'weekly');

    slowCreates(true);
    try {
      await kubectl.create(claimYaml(ns, 'doomed', { spec: fromSnapshot('weekly') }));
      await waitFor(() => read('volumesnapshot', ns, 'weekly'), (s) => hasFinalizer(s, SourceFinalizers.snapshot), { what: 'the source protection on weekly' });
      await kubectl('delete', 'pvc', 'doomed', '-n', ns, '--wait=false');
      const released = await waitFor(() => read('volumesnapshot', ns, 'weekly'), (s) => !hasFinalizer(s, SourceFinalizers.snapshot), {
        what: 'the source protection gone from weekly',
        timeoutMs: 20_000,
      });
      expect(released?.metadata.deletionTimestamp).toBeUndefined();
      // Let go before the claim itself is: it stays while a create sent before its deletion may land.
      expect((await read('pvc', ns, 'doomed'))?.metadata.deletionTimestamp).toBeDefined();
      // And it stays off: no later answer puts it back.
      await sleep(3_000);
      expect(hasFinalizer(await read('volumesnapshot', ns, 'weekly'), SourceFinalizers.snapshot)).toBe(false);
    } finally {
      slowCreates(false);
    }
  }, 180_000);

  it('clone: the source claim deleted while its copy is made -> Terminating with cloning-protection until the copy is Bound, then gone', async () => {
    const ns = 'protect-clone';
    await kubectl('create', 'namespace', ns);
    await kubectl.create(claimYaml(ns, 'original'));
    await waitClaimBound(ctx, ns, 'original');

    slowCreates(true);
    try {
      await kubectl.create(claimYaml(ns, 'copy', { spec: `  dataSource: { kind: PersistentVolumeClaim, name: original }\n` }));
      await waitFor(() => read('pvc', ns, 'original'), (c) => hasFinalizer(c, SourceFinalizers.claim), { what: 'the cloning protection on original' });
      await kubectl('delete', 'pvc', 'original', '-n', ns, '--wait=false');
      await sleep(2_000);
      const terminating = await read('pvc', ns, 'original');
      expect(terminating?.metadata.deletionTimestamp).toBeDefined();
      expect(terminating?.metadata.finalizers).toContain(SourceFinalizers.claim);
      expect((await read('pvc', ns, 'copy'))?.status?.phase).toBe('Pending');

      await waitClaimBound(ctx, ns, 'copy');
      await waitFor(() => read('pvc', ns, 'original'), (c) => c === undefined, { what: 'source claim original gone after the copy', timeoutMs: 30_000 });
    } finally {
      slowCreates(false);
    }
  }, 180_000);

  it('the control: nothing made from them -> a VolumeSnapshot and a claim are deleted at once, never protected', async () => {
    const ns = 'protect-none';
    await kubectl('create', 'namespace', ns);
    await readySnapshot(ns, 'data', 'idle');
    const snapshot = await read('volumesnapshot', ns, 'idle');
    const claim = await read('pvc', ns, 'data');
    expect(hasFinalizer(snapshot, SourceFinalizers.snapshot)).toBe(false);
    expect(hasFinalizer(claim, SourceFinalizers.claim)).toBe(false);
    await kubectl('delete', 'volumesnapshot', 'idle', '-n', ns, '--wait=false');
    await waitFor(() => read('volumesnapshot', ns, 'idle'), (s) => s === undefined, { what: 'VolumeSnapshot idle gone', timeoutMs: 15_000 });
    await kubectl('delete', 'pvc', 'data', '-n', ns, '--wait=false');
    await waitFor(() => read('pvc', ns, 'data'), (c) => c === undefined, { what: 'claim data gone', timeoutMs: 15_000 });
  }, 120_000);
});
