/** Bound claims of ours: sent only while they ask something of their volume (issue 12). */
import { describe, expect, it } from 'vitest';
import { claimWantsVolumeChange } from '../../lib/contract/index.js';
import { claimNews } from '../../lib/forwarder/changes.js';
import { isOurClaim } from '../../lib/forwarder/filter.js';
import { buildClaimItem, withLiveClassCheck } from '../../lib/forwarder/items.js';
import { claim, DRIVER, viewOf, volume } from './objects.js';

const ownership = { provisioner: DRIVER, driver: DRIVER };
const bound = (storage: string, extra: { vac?: string; current?: string; status?: Record<string, unknown> } = {}) => {
  const pvc = claim('data', { volumeName: 'pvc-1' });
  pvc.spec!.resources = { requests: { storage } };
  if (extra.vac) pvc.spec!.volumeAttributesClassName = extra.vac;
  pvc.status = { phase: 'Bound', capacity: { storage: '20Gi' }, ...(extra.current ? { currentVolumeAttributesClassName: extra.current } : {}), ...extra.status };
  return pvc;
};
const pvOf = () => volume('pvc-1', { provisionedBy: DRIVER });

describe('claimWantsVolumeChange / isOurClaim for bound claims', () => {
  it.each([
    ['as its PV (20Gi of 20Gi)', bound('20Gi'), false],
    ['the same in whole GiB (19.5Gi of 20Gi)', bound('19.5Gi'), false],
    ['bigger than its PV', bound('40Gi'), true],
    ['smaller than its PV (refused with an Event)', bound('10Gi'), true],
    ['another VolumeAttributesClass', bound('20Gi', { vac: 'fast' }), true],
    ['the class it has', bound('20Gi', { vac: 'fast', current: 'fast' }), false],
    // The PV controller's bind in two writes: volumeName first, then the status with the class.
    ['named its volume but not Bound yet (another class, bigger)', bound('40Gi', { vac: 'fast', status: { phase: 'Pending' } }), false],
    ['a resize under way', bound('20Gi', { status: { allocatedResourceStatuses: { storage: 'ControllerResizeInProgress' } } }), true],
    ['waiting on the node only', bound('20Gi', { status: { allocatedResourceStatuses: { storage: 'NodeResizePending' } } }), false],
    // Its PV grown to 20Gi while the claim still says 10Gi:
    ['whose PV grew but was never told so (no resize status, no condition: the status writes lost)', bound('20Gi', { status: { capacity: { storage: '10Gi' } } }), true],
    ['whose PV grew, the node told (NodeResizePending)', bound('20Gi', { status: { capacity: { storage: '10Gi' }, allocatedResourceStatuses: { storage: 'NodeResizePending' } } }), false],
    ['whose PV grew, the kubelet at it (NodeResizeInProgress)', bound('20Gi', { status: { capacity: { storage: '10Gi' }, allocatedResourceStatuses: { storage: 'NodeResizeInProgress' } } }), false],
    [
      'whose PV grew, the node told by the condition alone (an API server without allocatedResourceStatuses)',
      bound('20Gi', { status: { capacity: { storage: '10Gi' }, conditions: [{ type: 'FileSystemResizePending', status: 'True' }] } }),
      false,
    ],
  ])('bound claim %s -> offered: %s', (_name, pvc, offered) => {
    expect(isOurClaim(pvc, ownership, () => pvOf())).toBe(offered);
    expect(claimWantsVolumeChange(pvc, '20Gi')).toBe(offered);
  });

  it('the item of a bound claim carries its PV and its VolumeAttributesClass; a class not in the cache is read live', async () => {
    const pvc = bound('20Gi', { vac: 'fast' });
    const fast = { metadata: { name: 'fast' }, driverName: DRIVER, parameters: { iops: '6000' } };
    const item = buildClaimItem(pvc, viewOf({ volumes: [pvOf()] }), DRIVER);
    expect(item.pv?.metadata.name).toBe('pvc-1');
    expect(item.volumeAttributesClass).toBeNull();
    expect((await withLiveClassCheck(item, async () => fast))?.volumeAttributesClass).toEqual(fast);
    expect((await withLiveClassCheck(item, async () => null))?.volumeAttributesClass).toBeNull();
    expect(await withLiveClassCheck(item, async () => undefined)).toBeUndefined();
  });

  it('the status fields volhook writes are not news; the kubelet\'s capacity is', () => {
    const before = bound('40Gi');
    const ours = { ...before, status: { ...before.status, allocatedResources: { storage: '40Gi' }, conditions: [{ type: 'Resizing', status: 'True' }] } };
    expect(JSON.stringify(claimNews(ours, ownership))).toBe(JSON.stringify(claimNews(before, ownership)));
    const kubelet = { ...before, status: { ...before.status, capacity: { storage: '40Gi' } } };
    expect(JSON.stringify(claimNews(kubelet, ownership))).not.toBe(JSON.stringify(claimNews(before, ownership)));
  });
});
