import { describe, expect, it } from 'vitest';
import { throttled } from './fake-gateway.js';
import { CLAIM_UID, CLUSTER, ownedTags, reconcileOne, setup } from './fixtures.js';

/** As the forwarder sends it: pvExists read live from the API server. */
const deleted = (pvExists = false) => ({ kind: 'PersistentVolumeClaimDeleted' as const, uid: CLAIM_UID, namespace: 'shop', name: 'data', pvExists, pvCheckedLive: true });

describe('claim deleted', () => {
  it('a PV exists -> done, the PV\'s reclaim owns the disk, zero gateway calls', async () => {
    const { ec2, ctx } = setup();
    ec2.addVolume({ volumeId: 'vol-0000000000000000a', tags: ownedTags() });
    const result = await reconcileOne(ctx, deleted(true));
    expect(result).toEqual({ key: `PersistentVolumeClaimDeleted/${CLAIM_UID}`, outcome: 'done', writes: [] });
    expect(ec2.calls).toEqual([]);
  });

  it('no disk by that name -> done, nothing deleted', async () => {
    const { ec2, ctx } = setup();
    const result = await reconcileOne(ctx, deleted());
    expect(result.outcome).toBe('done');
    expect(ec2.calls.map((c) => c.verb)).toEqual(['findDiskByName']);
  });

  it('disk found by tag, made for this claim -> DeleteVolume, done', async () => {
    const { ec2, ctx } = setup();
    ec2.addVolume({ volumeId: 'vol-0000000000000000a', tags: ownedTags() });
    const result = await reconcileOne(ctx, deleted());
    expect(result).toMatchObject({ outcome: 'done', writes: [] });
    expect(ec2.mutations).toEqual([{ verb: 'deleteDisk', args: ['vol-0000000000000000a'] }]);
    // No object is left for an Event: the answer itself says why the disk went.
    expect(result).toMatchObject({ message: expect.stringMatching(/deleted volume vol-0000000000000000a of claim shop\/data: .*no PersistentVolume .* \(read live/) });
  });

  it('pvExists false from a cache, not a live read -> requeue, no DeleteVolume (a lagging informer never decides a deletion)', async () => {
    const { ec2, ctx } = setup();
    ec2.addVolume({ volumeId: 'vol-0000000000000000a', tags: ownedTags() });
    const result = await reconcileOne(ctx, { ...deleted(), pvCheckedLive: false });
    expect(result).toMatchObject({ outcome: 'requeue', message: expect.stringContaining('not read live') });
    expect(ec2.calls).toEqual([]);
  });

  it('disk still creating -> requeue, no DeleteVolume yet', async () => {
    const { ec2, ctx } = setup();
    ec2.addVolume({ volumeId: 'vol-0000000000000000a', state: 'creating', tags: ownedTags() });
    const result = await reconcileOne(ctx, deleted());
    expect(result).toMatchObject({ outcome: 'requeue', requeueAfterSeconds: 2 });
    expect(ec2.mutations).toEqual([]);
  });

  it.each([
    ['made for another claim', ownedTags({ 'kubernetes.io/created-for/pvc/name': 'other' })],
    ['made in another namespace', ownedTags({ 'kubernetes.io/created-for/pvc/namespace': 'other' })],
  ])('disk %s -> failed NotOwned, no DeleteVolume', async (_name, tags) => {
    const { ec2, ctx } = setup();
    ec2.addVolume({ volumeId: 'vol-0000000000000000a', tags });
    const result = await reconcileOne(ctx, deleted());
    expect(result).toMatchObject({ outcome: 'failed', reason: 'NotOwned' });
    expect(result.outcome === 'failed' && result.message).toContain(`cluster "${CLUSTER}"`);
    expect(ec2.mutations).toEqual([]);
  });

  it('disk attached somewhere -> requeue, no DeleteVolume', async () => {
    const { ec2, ctx } = setup();
    ec2.addVolume({
      volumeId: 'vol-0000000000000000a',
      state: 'in-use',
      tags: ownedTags(),
      attachments: [{ instanceId: 'i-0aaaaaaaaaaaaaaa1', device: '/dev/xvdaa', state: 'attached' }],
    });
    const result = await reconcileOne(ctx, deleted());
    expect(result.outcome).toBe('requeue');
    expect(ec2.mutations).toEqual([]);
  });

  it.each(['findDiskByName', 'deleteDisk'] as const)('%s throttled -> requeue, never failed', async (verb) => {
    const { ec2, ctx } = setup();
    ec2.addVolume({ volumeId: 'vol-0000000000000000a', tags: ownedTags() });
    ec2.fail(verb, throttled());
    const result = await reconcileOne(ctx, deleted());
    expect(result).toMatchObject({ outcome: 'requeue', requeueAfterSeconds: 5 });
  });
});
