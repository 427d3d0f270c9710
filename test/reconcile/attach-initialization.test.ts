/**
 * The driver's `blockAttachUntilInitialized`: a volume whose PV asks it is not attached while
 * DescribeVolumeStatus says it is initializing (lib/reconcile/attach.ts): "situation -> outcome".
 */
import { describe, expect, it } from 'vitest';
import { initializingWait } from '../../lib/reconcile/timing.js';
import type { FakeGateway } from './fake-gateway.js';
import { attachedVolume, ownedTags, reconcileOne, setup, vaItem } from './fixtures.js';

const VOL = 'vol-0123456789abcdef0';
const INSTANCE = 'i-0aaaaaaaaaaaaaaa1';

function cloud(ec2: FakeGateway) {
  ec2.addVolume({ volumeId: VOL, snapshotId: 'snap-0123456789abcdef0', tags: ownedTags() });
  ec2.addInstance({ instanceId: INSTANCE });
}

const blocking = (value = 'true') => vaItem({ pv: attachedVolume({ spec: { csi: { volumeAttributes: { blockattachuntilinitialized: value } } } }) });

describe('attach of a volume that asks to be initialized first', () => {
  it('initializing, with EC2\'s estimate of 40 s -> no AttachVolume, no status write, requeue in 40 s', async () => {
    const { ec2, ctx } = setup();
    cloud(ec2);
    ec2.initializations.set(VOL, { volumeId: VOL, state: 'initializing', secondsLeft: 40 });
    const result = await reconcileOne(ctx, blocking());
    expect(ec2.callsOf('attachDisk')).toEqual([]);
    expect(ec2.callsOf('getInitialization')).toHaveLength(1);
    expect(result).toMatchObject({ outcome: 'requeue', requeueAfterSeconds: 40, message: expect.stringContaining('still initializing'), writes: [] });
  });

  it('initializing without an estimate -> requeue in 30 s', async () => {
    const { ec2, ctx } = setup();
    cloud(ec2);
    ec2.initializations.set(VOL, { volumeId: VOL, state: 'initializing' });
    const result = await reconcileOne(ctx, blocking());
    expect(result).toMatchObject({ outcome: 'requeue', requeueAfterSeconds: 30 });
    expect(ec2.callsOf('attachDisk')).toEqual([]);
  });

  it('initialization completed -> AttachVolume', async () => {
    const { ec2, ctx } = setup();
    cloud(ec2);
    ec2.initializations.set(VOL, { volumeId: VOL, state: 'completed' });
    await reconcileOne(ctx, blocking());
    expect(ec2.callsOf('attachDisk')).toHaveLength(1);
  });

  it('an empty volume (no initialization reported) -> AttachVolume', async () => {
    const { ec2, ctx } = setup();
    cloud(ec2);
    await reconcileOne(ctx, blocking());
    expect(ec2.callsOf('attachDisk')).toHaveLength(1);
  });

  it('control: the same initializing volume without the attribute, or with "false" -> AttachVolume at once, DescribeVolumeStatus not called', async () => {
    for (const item of [vaItem(), blocking('false')]) {
      const { ec2, ctx } = setup();
      cloud(ec2);
      ec2.initializations.set(VOL, { volumeId: VOL, state: 'initializing', secondsLeft: 40 });
      await reconcileOne(ctx, item);
      expect(ec2.callsOf('attachDisk')).toHaveLength(1);
      expect(ec2.callsOf('getInitialization')).toEqual([]);
    }
  });

  it('already attached (the VolumeAttachment says so) -> DescribeVolumeStatus not called', async () => {
    const { ec2, ctx } = setup();
    cloud(ec2);
    ec2.volumes.get(VOL)!.attachments.push({ instanceId: INSTANCE, device: '/dev/xvdaa', state: 'attached' });
    const item = blocking();
    item.volumeAttachment.status = { attached: true, attachmentMetadata: { devicePath: '/dev/xvdaa' } };
    const result = await reconcileOne(ctx, item);
    expect(result.outcome).toBe('done');
    expect(ec2.callsOf('getInitialization')).toEqual([]);
  });

  it.each([
    [{ volumeId: VOL, state: 'initializing' as const, secondsLeft: 0 }, 1],
    [{ volumeId: VOL, state: 'initializing' as const, secondsLeft: 90_000 }, 300],
  ])('the wait for %o -> %s s (at least 1 s, at most 5 min)', (initialization, seconds) => {
    expect(initializingWait(initialization)).toBe(seconds);
  });
});
