/**
 * volhook as a canary beside the EBS CSI controller: a StorageClass naming volhook's provisioner
 * (`canary.volhook.io`, registered and charted the same) beside one naming `ebs.csi.aws.com`.
 * The controller is a stand-in run by the test on the cluster's store, as the real one would act:
 * its external-provisioner serves claims of `ebs.csi.aws.com` (a PV, no EC2), its
 * external-attacher every VolumeAttachment whose attacher is `ebs.csi.aws.com` — which is both
 * sides' PVs, since volhook's PVs name that driver too so the node plugin mounts them.
 *
 * Each claim is served by its own side and by no other: volhook's backend never sees the
 * controller's claim, PV or any VolumeAttachment, makes no AttachVolume, and creates exactly one
 * disk, for its own claim, whose PV names `csi.driver: ebs.csi.aws.com`; it deletes that disk
 * when its claim goes, and leaves the controller's PV to the controller.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Item, Result } from '../../lib/contract/index.js';
import type { KubeObject, LocalObjectStore } from '../../lib/local/kube/index.js';
import { tagsOf, TagKeys, provisionedVolumes } from './support/ec2.js';
import { createClaim, createNamespace, createPod, createStorageClass, DRIVER, listClaims, readPod } from './support/kube.js';
import { simulatedStore, startE2eStack, type E2eStack } from './support/stack.js';
import { show, waitFor } from './support/wait.js';

const CANARY = 'canary.volhook.io';
const NS = 'canary';
const ATTACHER_FINALIZER = 'external-attacher/ebs-csi-aws-com';
const PROVISIONED_BY = 'pv.kubernetes.io/provisioned-by';

let stack: E2eStack;
const seen: { key: string; result: Result }[] = [];
let stopPeer: () => void = () => undefined;

/** What the stand-in controller did, by object name. */
const peer = { provisioned: new Set<string>(), attached: new Set<string>(), detached: new Set<string>(), reclaimed: new Set<string>(), errors: [] as string[] };

type Obj = KubeObject & { spec?: any; status?: any };

/** One pass of the stand-in EBS CSI controller over the store (idempotent, as a resync is). */
function peerStep(store: LocalObjectStore): void {
  let n = peer.provisioned.size;
  for (const pvc of store.list('persistentvolumeclaims').items as Obj[]) {
    const annotations = pvc.metadata.annotations ?? {};
    if (annotations['volume.kubernetes.io/storage-provisioner'] !== DRIVER || pvc.spec.volumeName || pvc.metadata.deletionTimestamp) continue;
    const name = `pvc-${pvc.metadata.uid}`;
    if (store.get('persistentvolumes', name)) continue;
    store.create('persistentvolumes', {
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: { name, annotations: { [PROVISIONED_BY]: DRIVER } },
      spec: {
        capacity: { storage: pvc.spec.resources.requests.storage },
        accessModes: pvc.spec.accessModes,
        persistentVolumeReclaimPolicy: 'Delete',
        storageClassName: pvc.spec.storageClassName,
        volumeMode: 'Filesystem',
        claimRef: { kind: 'PersistentVolumeClaim', apiVersion: 'v1', namespace: pvc.metadata.namespace, name: pvc.metadata.name, uid: pvc.metadata.uid },
        // A disk of the controller's own, which volhook's EC2 never sees.
        csi: { driver: DRIVER, volumeHandle: `vol-${(0xc0ffee0000 + ++n).toString(16).padStart(17, '0')}`, fsType: 'ext4' },
      },
    });
    peer.provisioned.add(pvc.metadata.name);
  }
  for (const va of store.list('volumeattachments').items as Obj[]) {
    if (va.spec.attacher !== DRIVER) continue;
    const finalizers = va.metadata.finalizers ?? [];
    if (va.metadata.deletionTimestamp) {
      if (finalizers.includes(ATTACHER_FINALIZER)) {
        store.update('volumeattachments', { ...va, metadata: { ...va.metadata, finalizers: finalizers.filter((f) => f !== ATTACHER_FINALIZER) } });
        peer.detached.add(va.metadata.name);
      }
      continue;
    }
    if (va.status?.attached === true) continue;
    const held = finalizers.includes(ATTACHER_FINALIZER) ? va : (store.update('volumeattachments', { ...va, metadata: { ...va.metadata, finalizers: [...finalizers, ATTACHER_FINALIZER] } }) as Obj);
    store.updateStatus('volumeattachments', { ...held, status: { attached: true, attachmentMetadata: { attachedBy: 'stand-in' } } });
    peer.attached.add(va.metadata.name);
  }
  for (const pv of store.list('persistentvolumes').items as Obj[]) {
    if (pv.metadata.annotations?.[PROVISIONED_BY] !== DRIVER || pv.status?.phase !== 'Released' || pv.metadata.deletionTimestamp) continue;
    store.delete('persistentvolumes', pv.metadata.name);
    peer.reclaimed.add(pv.metadata.name);
  }
}

beforeAll(async () => {
  stack = await startE2eStack({
    registration: { provisioner: CANARY },
    forwarder: { provisioner: CANARY, canary: true },
    onResult: (_cluster: string, item: Item, result: Result) => void seen.push({ key: result.key, result }),
  });
  const timer = setInterval(() => {
    try {
      peerStep(simulatedStore(stack, 'the canary scenario'));
    } catch (err) {
      // A conflict with a controller's write is retried on the next pass, as a controller would.
      if (!/conflict|modified/i.test(String(err))) peer.errors.push(String(err));
    }
  }, 100);
  stopPeer = () => clearInterval(timer);
  await createStorageClass(stack.kube, { metadata: { name: 'volhook-canary' }, provisioner: CANARY, parameters: { type: 'gp3' }, volumeBindingMode: 'WaitForFirstConsumer', reclaimPolicy: 'Delete' });
  await createStorageClass(stack.kube, { metadata: { name: 'ebs-controller' }, provisioner: DRIVER, parameters: { type: 'gp3' }, volumeBindingMode: 'WaitForFirstConsumer', reclaimPolicy: 'Delete' });
}, 60_000);

afterAll(async () => {
  stopPeer();
  await stack?.stop();
});

const podRunning = async (name: string) => (await readPod(stack.kube, NS, name)).status?.phase === 'Running';

describe('volhook as a canary beside the EBS CSI controller', () => {
  let canaryPv = '';
  let controllerPv = '';

  it('each claim is served by its own side, none by both: volhook provisions its class only; the controller attaches both', async () => {
    await createNamespace(stack.kube, NS);
    await createClaim(stack.kube, NS, 'on-volhook', { storageClassName: 'volhook-canary' });
    await createClaim(stack.kube, NS, 'on-controller', { storageClassName: 'ebs-controller' });
    await createPod(stack.kube, NS, 'app-volhook', ['on-volhook']);
    await createPod(stack.kube, NS, 'app-controller', ['on-controller']);

    const claims = await waitFor(() => listClaims(stack.kube, NS), (pvcs) => pvcs.length === 2 && pvcs.every((p) => p.status?.phase === 'Bound'), {
      what: 'both claims Bound',
      timeoutMs: 60_000,
      report: (pvcs) => pvcs.map((p) => `${p.metadata?.name}:${p.status?.phase}`),
    });
    await waitFor(async () => (await podRunning('app-volhook')) && (await podRunning('app-controller')), Boolean, { what: 'both pods Running', timeoutMs: 60_000 });
    const byName = new Map(claims.map((c) => [c.metadata!.name!, c]));
    canaryPv = byName.get('on-volhook')!.spec!.volumeName!;
    controllerPv = byName.get('on-controller')!.spec!.volumeName!;

    // volhook's PV: its provisioner name, the driver the node plugin mounts, its own disk.
    const pv = (await stack.kube.core.readPersistentVolume({ name: canaryPv }));
    expect(pv.metadata?.annotations?.[PROVISIONED_BY]).toBe(CANARY);
    expect(pv.spec?.csi?.driver).toBe(DRIVER);
    const disks = await provisionedVolumes(stack.ec2, stack.clusterId);
    expect(disks.map((d) => tagsOf(d)[TagKeys.pvName])).toEqual([canaryPv]);
    expect(pv.spec?.csi?.volumeHandle).toBe(disks[0]!.VolumeId);

    // The controller's claim: its PV, made by it alone.
    expect(peer.provisioned).toEqual(new Set(['on-controller']));
    const theirs = await stack.kube.core.readPersistentVolume({ name: controllerPv });
    expect(theirs.metadata?.annotations?.[PROVISIONED_BY]).toBe(DRIVER);

    // Both VolumeAttachments name ebs.csi.aws.com and were attached by the controller alone.
    const vas = (await stack.kube.storage.listVolumeAttachment()).items;
    expect(vas.map((va) => va.spec.source.persistentVolumeName).sort()).toEqual([canaryPv, controllerPv].sort());
    for (const va of vas) {
      expect(va.spec.attacher).toBe(DRIVER);
      expect(va.status?.attachmentMetadata).toEqual({ attachedBy: 'stand-in' });
    }
    expect(stack.simulator!.getStats().actions.AttachVolume?.calls ?? 0).toBe(0);

    // What reached volhook's backend: its own claim and PV only; nothing of the controller's,
    // no VolumeAttachment, nothing it had to refuse.
    const keys = new Set(seen.map((s) => s.key));
    expect(keys.has(`PersistentVolumeClaim/${NS}/on-volhook`)).toBe(true);
    expect([...keys].filter((k) => k.startsWith('VolumeAttachment/') || k.includes('on-controller') || k === `PersistentVolume/${controllerPv}`)).toEqual([]);
    expect(seen.filter((s) => s.result.outcome === 'failed').map((s) => s.result)).toEqual([]);
    expect(peer.errors).toEqual([]);
  }, 120_000);

  it('claims deleted -> volhook deletes its disk once the controller detached, the controller reclaims its PV; neither touches the other\'s', async () => {
    for (const pod of ['app-volhook', 'app-controller']) await stack.kube.core.deleteNamespacedPod({ namespace: NS, name: pod });
    for (const name of ['on-volhook', 'on-controller']) await stack.kube.core.deleteNamespacedPersistentVolumeClaim({ namespace: NS, name });

    await waitFor(async () => (await stack.kube.core.listPersistentVolume()).items.filter((p) => [canaryPv, controllerPv].includes(p.metadata!.name!)), (pvs) => pvs.length === 0, {
      what: 'both PVs gone',
      timeoutMs: 60_000,
      report: (pvs) => pvs.map((p) => `${p.metadata?.name}:${p.status?.phase}:${(p.metadata?.finalizers ?? []).join(',')}`),
    });
    const disks = await provisionedVolumes(stack.ec2, stack.clusterId);
    expect(disks.filter((d) => d.State !== 'deleted' && d.State !== 'deleting'), show(disks)).toEqual([]);
    expect(peer.reclaimed).toEqual(new Set([controllerPv]));
    expect(peer.detached.size).toBe(2);
    expect(stack.simulator!.getStats().actions.DetachVolume?.calls ?? 0).toBe(0);
    const keys = new Set(seen.map((s) => s.key));
    expect(keys.has(`PersistentVolume/${canaryPv}`)).toBe(true);
    expect([...keys].filter((k) => k.startsWith('VolumeAttachment/') || k.includes('on-controller') || k === `PersistentVolume/${controllerPv}`)).toEqual([]);
  }, 120_000);
});
