/** The table of watched resources (lib/forwarder/watches.ts): "event -> keys offered". */
import type { KubernetesObject } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { Finalizers } from '../../lib/contract/index.js';
import type { EventType } from '../../lib/forwarder/changes.js';
import { Dependents } from '../../lib/forwarder/dependents.js';
import { WATCHES, type Resource, type Watch, type WatchContext, type WatchedObjects } from '../../lib/forwarder/watches.js';
import { DRIVER, attachment, claim, node, storageClass, volume } from './objects.js';

const ownership = { provisioner: DRIVER, driver: DRIVER };

/** A context over plain arrays, the dependents index filled as the informers would fill it. */
function contextOf(objects: Partial<{ [R in Resource]: WatchedObjects[R][] }>, ready = true): WatchContext {
  const cache = <T extends KubernetesObject>(list: T[] = []) => ({
    get: (name: string, namespace?: string) => list.find((o) => o.metadata?.name === name && (namespace === undefined || o.metadata?.namespace === namespace)),
    list: () => list,
  });
  const dependents = new Dependents({ claims: () => objects.persistentvolumeclaims ?? [], attachments: () => objects.volumeattachments ?? [] });
  for (const va of objects.volumeattachments ?? []) dependents.trackAttachment(va, false);
  dependents.refreshZones(objects.nodes ?? []);
  return {
    ownership,
    dependents,
    ready: () => ready,
    caches: {
      persistentvolumeclaims: cache(objects.persistentvolumeclaims),
      persistentvolumes: cache(objects.persistentvolumes),
      volumeattachments: cache(objects.volumeattachments),
      storageclasses: cache(objects.storageclasses),
      nodes: cache(objects.nodes),
      csinodes: cache(objects.csinodes),
      volumeattributesclasses: cache(objects.volumeattributesclasses),
      volumesnapshotcontents: cache(objects.volumesnapshotcontents),
      volumesnapshotclasses: cache(objects.volumesnapshotclasses),
      volumesnapshots: cache(objects.volumesnapshots),
      volumegroupsnapshotcontents: cache(objects.volumegroupsnapshotcontents),
      volumegroupsnapshotclasses: cache(objects.volumegroupsnapshotclasses),
    },
  };
}

function keysOf<R extends Resource>(resource: R, type: EventType, object: WatchedObjects[R], ctx: WatchContext) {
  const watch = WATCHES[resource] as Watch<WatchedObjects[R]>;
  watch.track?.(type, object, ctx);
  return [...watch.keys(type, object, ctx)];
}

const protectedClaim = (name: string, volumeName: string) => {
  const pvc = claim(name, { volumeName });
  pvc.metadata!.finalizers = [Finalizers.claimProtection];
  return pvc;
};

describe('claims', () => {
  it.each([
    ['ours, not bound -> its key', claim('a'), ['PersistentVolumeClaim/default/a']],
    ['ours, bound but still protected by volhook -> its key', protectedClaim('a', 'pvc-1'), ['PersistentVolumeClaim/default/a']],
    ['ours, bound -> nothing', claim('a', { volumeName: 'pvc-1' }), []],
    ['another provisioner’s -> nothing', claim('a', { provisioner: 'efs.csi.aws.com' }), []],
  ])('update: %s', (_name, pvc, expected) => {
    expect(keysOf('persistentvolumeclaims', 'update', pvc, contextOf({})).map((o) => o.key)).toEqual(expected);
  });

  it('delete of a claim of ours before it got a PV -> PersistentVolumeClaimDeleted with what the item needs', () => {
    const offers = keysOf('persistentvolumeclaims', 'delete', claim('gone', { uid: 'u-1' }), contextOf({}));
    expect(offers).toEqual([{ key: 'PersistentVolumeClaimDeleted/u-1', payload: { uid: 'u-1', namespace: 'default', name: 'gone' } }]);
  });

  it('delete of a bound claim -> nothing (its PV carries on)', () => {
    expect(keysOf('persistentvolumeclaims', 'delete', claim('bound', { volumeName: 'pvc-1' }), contextOf({}))).toEqual([]);
  });
});

describe('PersistentVolumes and VolumeAttachments', () => {
  const pv = volume('pvc-1', { provisionedBy: DRIVER, phase: 'Released' });
  const vas = [attachment('csi-1', 'pvc-1', 'n1'), attachment('csi-2', 'pvc-1', 'n2', 'efs.csi.aws.com'), attachment('csi-3', 'pvc-other', 'n1')];

  it('PV update -> its key and its attachments of ours (they carry it as context)', () => {
    const ctx = contextOf({ persistentvolumes: [pv], volumeattachments: vas });
    // Listed first (its disk known), then updated.
    ctx.dependents.trackVolumeDisk('pvc-1', 'vol-0123456789abcdef0');
    expect(keysOf('persistentvolumes', 'update', pv, ctx).map((o) => o.key)).toEqual(['PersistentVolume/pvc-1', 'VolumeAttachment/csi-1']);
  });

  it('PV update before every cache synced -> only its key', () => {
    const ctx = contextOf({ persistentvolumes: [pv], volumeattachments: vas }, false);
    expect(keysOf('persistentvolumes', 'update', pv, ctx).map((o) => o.key)).toEqual(['PersistentVolume/pvc-1']);
  });

  it('PV delete -> only its attachments', () => {
    const ctx = contextOf({ volumeattachments: vas });
    expect(keysOf('persistentvolumes', 'delete', pv, ctx).map((o) => o.key)).toEqual(['VolumeAttachment/csi-1']);
  });

  it('PV added (ours, naming a disk: a static PV made for a Retain disk) -> the volume report too, so the audit learns of it at once; an update leaving its disk -> not; its handle changed, or the PV deleted -> the report; a PV of another driver -> not', () => {
    const ctx = contextOf({});
    const keys = (type: EventType, object: typeof pv) => keysOf('persistentvolumes', type, object, ctx).map((o) => o.key);
    const staticPv = volume('reused', { phase: 'Available' });
    expect(keys('add', staticPv)).toEqual(['PersistentVolume/reused', 'VolumeReport/cluster']);
    expect(keys('update', { ...staticPv, status: { phase: 'Bound' } })).toEqual(['PersistentVolume/reused']);
    const moved = structuredClone(staticPv);
    moved.spec!.csi!.volumeHandle = 'vol-0fedcba9876543210';
    expect(keys('update', moved)).toEqual(['PersistentVolume/reused', 'VolumeReport/cluster']);
    // Gone (the report must stop naming it), then made again for the same disk: a new PV naming it.
    expect(keys('delete', moved)).toEqual(['VolumeReport/cluster']);
    expect(keys('add', moved)).toEqual(['PersistentVolume/reused', 'VolumeReport/cluster']);
    expect(keys('add', volume('theirs', { driver: 'efs.csi.aws.com' }))).toEqual([]);
  });

  it('PVs listed before every cache synced -> no report for each (the synced forwarder sends one anyway); a handle changed after -> the report', () => {
    let ready = false;
    const ctx = { ...contextOf({}), ready: () => ready };
    const listed = volume('listed');
    expect(keysOf('persistentvolumes', 'add', listed, ctx).map((o) => o.key)).toEqual(['PersistentVolume/listed']);
    ready = true;
    expect(keysOf('persistentvolumes', 'update', { ...listed, status: { phase: 'Released' } }, ctx).map((o) => o.key)).not.toContain('VolumeReport/cluster');
    const moved = structuredClone(listed);
    moved.spec!.csi!.volumeHandle = 'vol-0fedcba9876543210';
    expect(keysOf('persistentvolumes', 'update', moved, ctx).map((o) => o.key)).toContain('VolumeReport/cluster');
  });

  it('VolumeAttachment deleted -> its unsettled PV (it may now be deletable); the index forgets it', () => {
    const ctx = contextOf({ persistentvolumes: [pv], volumeattachments: vas });
    expect(keysOf('volumeattachments', 'delete', vas[0]!, ctx).map((o) => o.key)).toEqual(['PersistentVolume/pvc-1']);
    expect(ctx.dependents.attachmentsOf('pvc-1')).toEqual(['csi-2']);
  });

  it('VolumeAttachment added -> its key and its unsettled PV; a settled PV is not offered', () => {
    const bound = volume('pvc-1', { provisionedBy: DRIVER, phase: 'Bound' });
    bound.metadata!.finalizers = [Finalizers.provisioner];
    const va = attachment('csi-9', 'pvc-1', 'n1');
    expect(keysOf('volumeattachments', 'add', va, contextOf({ persistentvolumes: [pv] })).map((o) => o.key)).toEqual(['VolumeAttachment/csi-9', 'PersistentVolume/pvc-1']);
    expect(keysOf('volumeattachments', 'add', va, contextOf({ persistentvolumes: [bound] })).map((o) => o.key)).toEqual(['VolumeAttachment/csi-9']);
  });
});

describe('StorageClasses and Nodes', () => {
  it('StorageClass changed -> the claims of ours in that class', () => {
    const ctx = contextOf({ persistentvolumeclaims: [claim('a', { className: 'gp3' }), claim('b', { className: 'io2' }), claim('c', { className: 'gp3', volumeName: 'pvc-c' })] });
    expect(keysOf('storageclasses', 'update', storageClass('gp3', 'Immediate'), ctx).map((o) => o.key)).toEqual(['PersistentVolumeClaim/default/a']);
  });

  it('Node changed -> the claims that selected it and the attachments on it', () => {
    const n1 = node('n1', 'eu-west-1a');
    const ctx = contextOf({
      nodes: [n1],
      storageclasses: [storageClass('gp3', 'WaitForFirstConsumer')],
      persistentvolumeclaims: [claim('on-n1', { selectedNode: 'n1' }), claim('on-n2', { selectedNode: 'n2' })],
      volumeattachments: [attachment('csi-1', 'pvc-1', 'n1'), attachment('csi-2', 'pvc-2', 'n2')],
    });
    expect(keysOf('nodes', 'update', n1, ctx).map((o) => o.key)).toEqual(['PersistentVolumeClaim/default/on-n1', 'VolumeAttachment/csi-1']);
  });

  it('a Node in a new zone -> also every Immediate claim of ours (it may go to any zone)', () => {
    const n1 = node('n1', 'eu-west-1a');
    const n2 = node('n2', 'eu-west-1b');
    const nodes = [n1];
    const ctx = contextOf({
      nodes,
      storageclasses: [storageClass('gp3', 'WaitForFirstConsumer'), storageClass('io2', 'Immediate')],
      persistentvolumeclaims: [claim('wffc', { className: 'gp3' }), claim('immediate', { className: 'io2' })],
    });
    nodes.push(n2);
    expect(keysOf('nodes', 'add', n2, ctx).map((o) => o.key)).toEqual(['PersistentVolumeClaim/default/immediate']);
    expect(ctx.dependents.zones).toEqual(['eu-west-1a', 'eu-west-1b']);
  });
});

describe('resync', () => {
  it('offers every claim of ours, and only the PVs and attachments that are not settled', () => {
    const settled = volume('pvc-settled', { provisionedBy: DRIVER });
    settled.metadata!.finalizers = [Finalizers.provisioner];
    const attached = attachment('csi-done', 'pvc-settled', 'n1');
    attached.status = { attached: true };
    attached.metadata!.finalizers = [Finalizers.attacher(DRIVER)];
    const ctx = contextOf({});
    const resync = <R extends Resource>(resource: R, object: WatchedObjects[R]) => [...((WATCHES[resource] as Watch<WatchedObjects[R]>).resync?.(object, ctx) ?? [])].map((o) => o.key);
    expect(resync('persistentvolumeclaims', claim('a'))).toEqual(['PersistentVolumeClaim/default/a']);
    expect(resync('persistentvolumes', settled)).toEqual([]);
    expect(resync('persistentvolumes', volume('pvc-released', { provisionedBy: DRIVER, phase: 'Released' }))).toEqual(['PersistentVolume/pvc-released']);
    expect(resync('volumeattachments', attached)).toEqual([]);
    expect(resync('volumeattachments', attachment('csi-new', 'pvc-settled', 'n1'))).toEqual(['VolumeAttachment/csi-new']);
    expect(resync('nodes', node('n1', 'eu-west-1a'))).toEqual([]);
  });
});
