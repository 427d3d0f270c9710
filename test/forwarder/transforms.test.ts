/** What the informer caches keep (lib/forwarder/transforms.ts), and that items built from it are unchanged. */
import { describe, expect, it } from 'vitest';
import { ItemSchema } from '../../lib/contract/index.js';
import { buildAttachmentItem, buildClaimItem, buildVolumeItem, type ClusterView } from '../../lib/forwarder/items.js';
import { compact, LAST_APPLIED, TRANSFORMS, UNREAD } from '../../lib/forwarder/transforms.js';
import { DRIVER, attachment, claim, csiNode, node, storageClass, viewOf, volume } from './objects.js';

const managedFields = [{ manager: 'kube-controller-manager', operation: 'Update', apiVersion: 'v1', time: '2026-12-01T10:00:00Z', fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:volumeName': {} } } }];

/** An object as a real API server lists it: managedFields, a last-applied copy, bookkeeping, and the generated client's `undefined` fields and `Date`s. */
function asListed<T extends { metadata?: object }>(object: T): T {
  return {
    ...object,
    metadata: {
      ...object.metadata,
      managedFields,
      generation: 3,
      creationTimestamp: new Date('2026-12-01T10:00:00Z'),
      ownerReferences: undefined,
      annotations: { ...(object.metadata as { annotations?: object }).annotations, [LAST_APPLIED]: JSON.stringify(object) },
    },
  };
}

describe('cache transforms', () => {
  it('a listed PV -> managedFields, last-applied, unread bookkeeping and undefined fields gone; Dates as the API writes them; the rest as it was', () => {
    const pv = volume('pvc-1', { provisionedBy: DRIVER, phase: 'Bound' });
    const listed = asListed({ ...pv, spec: { ...pv.spec, hostPath: undefined }, status: { phase: 'Bound', lastPhaseTransitionTime: new Date('2026-12-01T10:00:01Z') } });
    listed.metadata!.deletionTimestamp = new Date('2026-12-01T10:05:00Z');
    const cached = TRANSFORMS.persistentvolumes(listed);
    expect(cached.metadata).not.toHaveProperty('managedFields');
    expect(cached.metadata).not.toHaveProperty('creationTimestamp');
    expect(cached.metadata).not.toHaveProperty('generation');
    expect(cached.metadata).not.toHaveProperty('ownerReferences');
    expect(cached.metadata?.annotations).toEqual(pv.metadata?.annotations);
    expect(cached.metadata?.deletionTimestamp).toBe('2026-12-01T10:05:00Z');
    expect(cached.spec).not.toHaveProperty('hostPath');
    expect(cached.status).toEqual({ phase: 'Bound' });
    const { creationTimestamp: _created, ...meta } = pv.metadata!;
    expect(cached).toEqual(JSON.parse(JSON.stringify({ ...pv, metadata: { ...meta, deletionTimestamp: '2026-12-01T10:05:00Z' }, status: { phase: 'Bound' } })));
  });

  it('a Date with a fraction -> kept to the millisecond', () => {
    expect(compact({ t: new Date('2026-12-01T10:00:00.250Z') })).toEqual({ t: '2026-12-01T10:00:00.250Z' });
  });

  it('a Node -> name, uid, resourceVersion, labels and providerID only; a CSINode -> its drivers', () => {
    const full = {
      ...asListed(node('n1', 'us-east-1a')),
      status: { conditions: [{ type: 'Ready', status: 'True' }], images: [{ names: ['busybox'], sizeBytes: 1 }] },
    };
    full.metadata!.uid = 'uid-n1';
    expect(TRANSFORMS.nodes(full)).toEqual({ metadata: { name: 'n1', uid: 'uid-n1', labels: full.metadata!.labels }, spec: { providerID: full.spec!.providerID } });
    const cn = csiNode('n1');
    expect(TRANSFORMS.csinodes(asListed(cn))).toEqual({ metadata: { name: 'n1' }, spec: { drivers: cn.spec!.drivers } });
  });

  it('items built from cached objects -> what they were built from the whole objects, less only the dropped fields, and valid for the contract', () => {
    // As listed (managedFields, last-applied copies…), and as cached.
    const pvc = asListed(claim('data', { selectedNode: 'n1', className: 'gp3' }));
    const pv = asListed(volume('pvc-uid-data', { provisionedBy: DRIVER, phase: 'Bound' }));
    const va = asListed(attachment('csi-1', 'pvc-uid-data', 'n1'));
    const sc = asListed(storageClass('gp3', 'WaitForFirstConsumer'));
    const n1 = asListed(node('n1', 'us-east-1a'));
    const cn1 = asListed(csiNode('n1'));
    const whole: ClusterView = viewOf({ classes: [sc], nodes: [n1], csiNodes: [cn1], volumes: [pv] });
    const cached: ClusterView = viewOf({
      classes: [TRANSFORMS.storageclasses(sc)],
      nodes: [TRANSFORMS.nodes(n1)],
      csiNodes: [TRANSFORMS.csinodes(cn1)],
      volumes: [TRANSFORMS.persistentvolumes(pv)],
    });
    // An item carries no managedFields (items.ts drops them) and nothing else of UNREAD.
    const strip = (item: unknown) => JSON.parse(JSON.stringify(item, (key, value: unknown) => (UNREAD.has(key) ? undefined : value)));
    const pairs = [
      [buildClaimItem(pvc, whole, DRIVER), buildClaimItem(TRANSFORMS.persistentvolumeclaims(pvc), cached, DRIVER)],
      [buildVolumeItem(pv, whole), buildVolumeItem(TRANSFORMS.persistentvolumes(pv), cached)],
      [buildAttachmentItem(va, whole, DRIVER), buildAttachmentItem(TRANSFORMS.volumeattachments(va), cached, DRIVER)],
    ];
    for (const [fromWhole, fromCache] of pairs) {
      expect(strip(fromCache)).toEqual(strip(fromWhole));
      expect(ItemSchema.safeParse(fromCache).success).toBe(true);
    }
  });
});
