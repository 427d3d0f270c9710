import { describe, expect, it } from 'vitest';
import { ItemSchema, itemKey } from '../../lib/contract/index.js';
import {
  buildAttachmentItem,
  buildClaimDeletedItem,
  buildClaimItem,
  buildVolumeItem,
  clusterZones,
  parseItemKey,
  withLivePvCheck,
} from '../../lib/forwarder/items.js';
import { isOurAttachment, isOurClaim, isOurVolume, isSettledAttachment, isSettledVolume } from '../../lib/forwarder/filter.js';
import { TRANSFORMS } from '../../lib/forwarder/transforms.js';
import type { V1VolumeAttachment } from '@kubernetes/client-node';
import { DRIVER, attachment, claim, csiNode, node, storageClass, viewOf, volume } from './objects.js';

const ours = { provisioner: DRIVER, driver: DRIVER };

/** Every built item must be valid against the contract. */
function valid<T>(item: T): T {
  expect(ItemSchema.safeParse(item).success).toBe(true);
  return item;
}

describe('buildClaimItem', () => {
  it('WaitForFirstConsumer with a selected node -> its name, labels, providerID and CSINode entry; no zones', () => {
    const view = viewOf({
      classes: [storageClass('gp3', 'WaitForFirstConsumer')],
      nodes: [node('n1', 'eu-west-1a'), node('n2', 'eu-west-1b')],
      csiNodes: [csiNode('n1', 'i-0aaa', 27)],
    });
    const item = valid(buildClaimItem(claim('data', { selectedNode: 'n1' }), view, DRIVER));
    expect(item).toMatchObject({
      kind: 'PersistentVolumeClaim',
      storageClass: { metadata: { name: 'gp3' }, volumeBindingMode: 'WaitForFirstConsumer' },
      selectedNode: {
        name: 'n1',
        labels: { 'topology.kubernetes.io/zone': 'eu-west-1a' },
        providerID: 'aws:///eu-west-1a/i-0123456789abcdef0',
        csiNode: { nodeID: 'i-0aaa', allocatableCount: 27, topologyKeys: ['topology.ebs.csi.aws.com/zone'] },
      },
      pvExists: false,
    });
    expect(item).not.toHaveProperty('clusterZones');
  });

  it('selected node gone, or its CSINode gone -> selectedNode null', () => {
    const classes = [storageClass('gp3', 'WaitForFirstConsumer')];
    const nodeGone = buildClaimItem(claim('a', { selectedNode: 'n1' }), viewOf({ classes, csiNodes: [csiNode('n1')] }), DRIVER);
    const csiGone = buildClaimItem(claim('a', { selectedNode: 'n1' }), viewOf({ classes, nodes: [node('n1', 'eu-west-1a')] }), DRIVER);
    expect(valid(nodeGone)).toMatchObject({ selectedNode: null });
    expect(valid(csiGone)).toMatchObject({ selectedNode: null });
  });

  it('WaitForFirstConsumer, no node selected yet -> no selectedNode field', () => {
    const item = buildClaimItem(claim('a'), viewOf({ classes: [storageClass('gp3', 'WaitForFirstConsumer')] }), DRIVER);
    expect(valid(item)).not.toHaveProperty('selectedNode');
  });

  it('Immediate -> the zones of the cluster nodes, sorted, each once', () => {
    const view = viewOf({
      classes: [storageClass('io2', 'Immediate')],
      nodes: [node('n1', 'eu-west-1b'), node('n2', 'eu-west-1a'), node('n3', 'eu-west-1b'), { metadata: { name: 'no-zone' } }],
    });
    const item = valid(buildClaimItem(claim('a', { className: 'io2' }), view, DRIVER));
    expect(item).toMatchObject({ clusterZones: ['eu-west-1a', 'eu-west-1b'], storageClass: { metadata: { name: 'io2' } } });
  });

  it('class missing -> storageClass null; the beta class annotation wins over spec', () => {
    const pvc = claim('a', { className: 'gp3' });
    pvc.metadata!.annotations!['volume.beta.kubernetes.io/storage-class'] = 'io2';
    const item = buildClaimItem(pvc, viewOf({ classes: [storageClass('io2', 'Immediate'), storageClass('gp3', 'Immediate')] }), DRIVER);
    expect(valid(item)).toMatchObject({ storageClass: { metadata: { name: 'io2' } } });
    expect(valid(buildClaimItem(claim('b', { className: 'nope' }), viewOf({}), DRIVER))).toMatchObject({ storageClass: null });
  });

  it('PV pvc-<uid> exists -> pvExists true', () => {
    const item = buildClaimItem(claim('a', { uid: 'u-1' }), viewOf({ volumes: [volume('pvc-u-1')] }), DRIVER);
    expect(valid(item)).toMatchObject({ pvExists: true });
    expect(itemKey(item)).toBe('PersistentVolumeClaim/default/a');
  });
});

describe('buildClaimDeletedItem', () => {
  it('deleted claim whose PV was created meanwhile -> pvExists true; without -> false', () => {
    const view = viewOf({ volumes: [volume('pvc-u-2')] });
    expect(valid(buildClaimDeletedItem({ uid: 'u-2', namespace: 'ns', name: 'c' }, view))).toEqual({
      kind: 'PersistentVolumeClaimDeleted',
      uid: 'u-2',
      namespace: 'ns',
      name: 'c',
      pvExists: true,
    });
    expect(buildClaimDeletedItem({ uid: 'u-3', namespace: 'ns', name: 'c' }, view)).toMatchObject({ pvExists: false });
  });
});

describe('withLivePvCheck: a claim-deleted item that may delete a disk', () => {
  const reader = (answer: boolean | undefined) => {
    const asked: string[] = [];
    const read = async (name: string) => {
      asked.push(name);
      return answer;
    };
    return { asked, read };
  };
  const item = (pvExists: boolean) => ({ kind: 'PersistentVolumeClaimDeleted' as const, uid: 'u-4', namespace: 'ns', name: 'c', pvExists });

  it('cache lags (no PV in it) but the API server has the PV -> pvExists true, read live: a Retain disk is never deleted on a stale cache', async () => {
    const { asked, read } = reader(true);
    expect(await withLivePvCheck(item(false), 'pvc-u-4', read)).toEqual({ ...item(true), pvCheckedLive: true });
    expect(asked).toEqual(['pvc-u-4']);
  });

  it('the API server has no such PV either -> pvExists false, read live', async () => {
    expect(await withLivePvCheck(item(false), 'pvc-u-4', reader(false).read)).toEqual({ ...item(false), pvCheckedLive: true });
  });

  it('the live read fails -> sent as it was, not marked live (the backend then waits)', async () => {
    expect(await withLivePvCheck(item(false), 'pvc-u-4', reader(undefined).read)).toEqual(item(false));
  });

  it('the cache has the PV -> no read: keeping a disk needs no confirmation', async () => {
    const { asked, read } = reader(false);
    expect(await withLivePvCheck(item(true), 'pvc-u-4', read)).toEqual(item(true));
    expect(asked).toEqual([]);
  });
});

describe('buildVolumeItem', () => {
  it('PV -> the names of the VolumeAttachments whose source it is; dates as strings', () => {
    const view = viewOf({
      attachments: [attachment('csi-b', 'pvc-1', 'n1'), attachment('csi-a', 'pvc-1', 'n2'), attachment('csi-c', 'pvc-2', 'n1')],
    });
    const item = valid(buildVolumeItem(volume('pvc-1'), view));
    expect(item).toMatchObject({ kind: 'PersistentVolume', volumeAttachments: ['csi-a', 'csi-b'] });
    expect((item as unknown as { pv: { metadata: { creationTimestamp: unknown } } }).pv.metadata.creationTimestamp).toBe('2024-05-01T10:00:00.000Z');
  });
});

describe('buildAttachmentItem', () => {
  it('VA -> its PV, its node and the CSINode entry', () => {
    const view = viewOf({ volumes: [volume('pvc-1')], nodes: [node('n1', 'eu-west-1a')], csiNodes: [csiNode('n1', 'i-0bbb')] });
    const item = valid(buildAttachmentItem(attachment('csi-1', 'pvc-1', 'n1'), view, DRIVER));
    expect(item).toMatchObject({
      kind: 'VolumeAttachment',
      volumeAttachment: { metadata: { name: 'csi-1' } },
      pv: { metadata: { name: 'pvc-1' } },
      node: { name: 'n1', csiNode: { nodeID: 'i-0bbb' } },
    });
  });

  it('PV gone and node gone -> both null; node without CSINode -> node without csiNode', () => {
    expect(valid(buildAttachmentItem(attachment('csi-1', 'pvc-1', 'n1'), viewOf({}), DRIVER))).toMatchObject({ pv: null, node: null });
    const item = valid(buildAttachmentItem(attachment('csi-1', 'pvc-1', 'n1'), viewOf({ nodes: [node('n1', 'eu-west-1a')] }), DRIVER));
    expect((item as { node: object }).node).not.toHaveProperty('csiNode');
  });
});

describe('buildAttachmentItem: an inline volume', () => {
  it('VA with spec.source.inlineVolumeSpec and no PV name -> pv null, the inline spec carried as the cluster has it (also from the cache), valid', () => {
    const inline: V1VolumeAttachment = {
      metadata: { name: 'csi-inline', uid: 'uid-inline', resourceVersion: '1' },
      spec: {
        attacher: DRIVER,
        nodeName: 'n1',
        source: { inlineVolumeSpec: { csi: { driver: DRIVER, volumeHandle: 'vol-0123456789abcdef0', fsType: 'ext4', volumeAttributes: { partition: '0' } }, accessModes: ['ReadWriteOnce'] } },
      },
    };
    const view = viewOf({ nodes: [node('n1', 'eu-west-1a')], csiNodes: [csiNode('n1', 'i-0bbb')] });
    for (const va of [inline, TRANSFORMS.volumeattachments(inline)]) {
      const item = valid(buildAttachmentItem(va, view, DRIVER));
      expect(item).toMatchObject({ pv: null, node: { name: 'n1', csiNode: { nodeID: 'i-0bbb' } } });
      const parsed = ItemSchema.parse(item);
      expect(parsed.kind === 'VolumeAttachment' && parsed.volumeAttachment.spec.source.inlineVolumeSpec?.csi?.volumeHandle).toBe('vol-0123456789abcdef0');
    }
  });
});

describe('filters', () => {
  it('claims: our provisioner (either key) and unbound -> ours; other provisioner, bound or unannotated -> not', () => {
    const beta = claim('beta', { provisioner: null });
    beta.metadata!.annotations!['volume.beta.kubernetes.io/storage-provisioner'] = DRIVER;
    expect(isOurClaim(claim('a'), ours)).toBe(true);
    expect(isOurClaim(beta, ours)).toBe(true);
    expect(isOurClaim(claim('b', { provisioner: 'kubernetes.io/aws-ebs' }), ours)).toBe(false);
    expect(isOurClaim(claim('c', { volumeName: 'pvc-x' }), ours)).toBe(false);
    expect(isOurClaim(claim('d', { provisioner: null }), ours)).toBe(false);
  });

  it('claims: an in-tree claim whose provisioner annotation still names kubernetes.io/aws-ebs but is migrated to our driver -> ours, as the backend takes it', () => {
    const migrated = claim('m', { provisioner: 'kubernetes.io/aws-ebs' });
    migrated.metadata!.annotations!['pv.kubernetes.io/migrated-to'] = DRIVER;
    expect(isOurClaim(migrated, ours)).toBe(true);
    expect(isOurClaim(claim('n', { provisioner: 'kubernetes.io/aws-ebs' }), ours)).toBe(false);
  });

  it('claims: bound but still carrying volhook\'s provisioning protection -> ours, so the backend can take it off', () => {
    const bound = claim('e', { volumeName: 'pvc-x' });
    bound.metadata!.finalizers = ['kubernetes.io/pvc-protection', 'volhook.io/provisioning-protection'];
    expect(isOurClaim(bound, ours)).toBe(true);
  });

  it('volumes: provisioned by us or naming our driver -> ours; others -> not', () => {
    expect(isOurVolume(volume('a'), ours)).toBe(true);
    expect(isOurVolume(volume('b', { driver: 'efs.csi.aws.com', provisionedBy: DRIVER }), ours)).toBe(true);
    expect(isOurVolume(volume('c', { driver: 'efs.csi.aws.com' }), ours)).toBe(false);
  });

  it('attachments: our attacher -> ours; settled only when attached, finalized and not deleting', () => {
    const va = attachment('csi-1', 'pv', 'n1');
    expect(isOurAttachment(va, ours)).toBe(true);
    expect(isOurAttachment(attachment('csi-2', 'pv', 'n1', 'efs.csi.aws.com'), ours)).toBe(false);
    expect(isSettledAttachment(va, ours)).toBe(false);
    va.status = { attached: true };
    va.metadata!.finalizers = ['external-attacher/ebs-csi-aws-com'];
    expect(isSettledAttachment(va, ours)).toBe(true);
    va.metadata!.deletionTimestamp = new Date();
    expect(isSettledAttachment(va, ours)).toBe(false);
  });

  it('volumes: Bound with the provisioner finalizer -> settled; Released or finalizer missing -> not', () => {
    const pv = volume('a');
    expect(isSettledVolume(pv)).toBe(false); // Delete policy, no finalizer
    pv.metadata!.finalizers = ['external-provisioner.volume.kubernetes.io/finalizer'];
    expect(isSettledVolume(pv)).toBe(true);
    expect(isSettledVolume(volume('b', { phase: 'Released' }))).toBe(false);
  });
});

describe('keys', () => {
  it('parseItemKey inverts itemKey; junk -> undefined', () => {
    expect(parseItemKey('PersistentVolumeClaim/ns/a')).toEqual({ kind: 'PersistentVolumeClaim', namespace: 'ns', name: 'a' });
    expect(parseItemKey('PersistentVolumeClaimDeleted/u')).toEqual({ kind: 'PersistentVolumeClaimDeleted', uid: 'u' });
    expect(parseItemKey('Pod/ns/a')).toBeUndefined();
    expect(clusterZones([])).toEqual([]);
  });
});
