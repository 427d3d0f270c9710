/** Provisioning a claim that names a VolumeAttributesClass: its parameters override the class's. */
import { describe, expect, it } from 'vitest';
import type { CreateDiskRequest } from '../../lib/ec2/types.js';
import { claimItem, DRIVER, reconcileOne, setup } from './fixtures.js';

const vac = { metadata: { name: 'fast' }, driverName: DRIVER, parameters: { iops: '4000', throughput: '300', tagSpecification_1: 'tier=fast' } };
const withClass = (override: unknown = {}) => claimItem({ pvc: { spec: { volumeAttributesClassName: 'fast' } }, volumeAttributesClass: vac, ...(override as object) });

describe('provisioning with a VolumeAttributesClass', () => {
  it('class gp3, VAC iops 4000 / 300 MiB/s / tag -> CreateVolume with them; the PV names the class', async () => {
    const { ec2, ctx } = setup();
    ec2.createdState = 'available';
    const result = await reconcileOne(ctx, withClass());
    const request = ec2.callsOf('createDisk')[0]?.args[0] as CreateDiskRequest;
    expect(request).toMatchObject({ type: 'gp3', iops: 4000, throughput: 300 });
    expect(request.tags.tier).toBe('fast');
    const pv = result.writes.find((w) => w.op === 'createPersistentVolume');
    expect(pv && pv.op === 'createPersistentVolume' ? pv.pv.spec.volumeAttributesClassName : undefined).toBe('fast');
  });

  it('the disk was made before the claim named the class (it does not have it) -> the PV does not name it', async () => {
    const { ec2, ctx } = setup();
    ec2.createdState = 'available';
    await reconcileOne(ctx, claimItem());
    const result = await reconcileOne(ctx, withClass());
    const pv = result.writes.find((w) => w.op === 'createPersistentVolume');
    expect(pv?.op).toBe('createPersistentVolume');
    expect(pv && pv.op === 'createPersistentVolume' ? pv.pv.spec.volumeAttributesClassName : 'x').toBeUndefined();
  });

  it.each([
    ['does not exist', { volumeAttributesClass: null }, /VolumeAttributesClass "fast" does not exist/],
    ['is for another driver', { volumeAttributesClass: { ...vac, driverName: 'other.csi.example.com' } }, /is for driver "other\.csi\.example\.com"/],
    ['has an unknown key', { volumeAttributesClass: { ...vac, parameters: { burst: 'on' } } }, /burst: is not a mutable parameter/],
  ])('the VAC %s -> ProvisioningFailed naming it, no CreateVolume', async (_name, override, message) => {
    const { ec2, ctx } = setup();
    const result = await reconcileOne(ctx, withClass(override));
    expect(result.outcome).toBe('failed');
    expect(result.writes).toContainEqual(expect.objectContaining({ op: 'createEvent', reason: 'ProvisioningFailed', message: expect.stringMatching(message) }));
    expect(ec2.callsOf('createDisk')).toHaveLength(0);
  });
});
