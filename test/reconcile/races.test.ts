/**
 * Requests about one claim that overlap: a slow CreateVolume in one request while another —
 * a restarted forwarder's, say — already sees the claim deleted. No disk may be left behind.
 */
import { expect, it } from 'vitest';
import type { CreateDiskRequest, Disk } from '../../lib/ec2/types.js';
import { FakeGateway } from './fake-gateway.js';
import { CLAIM_PROTECTION, claimItem, reconcileOne, setup } from './fixtures.js';

class SlowCreate extends FakeGateway {
  release!: () => void;
  readonly held = new Promise<void>((resolve) => (this.release = resolve));
  entered!: () => void;
  readonly inside = new Promise<void>((resolve) => (this.entered = resolve));
  override async createDisk(request: CreateDiskRequest): Promise<Disk> {
    this.entered();
    await this.held; // EC2 is slow, or the SDK is retrying a throttled call
    return super.createDisk(request);
  }
}

it('claim deleted while its CreateVolume is in flight, the two requests concurrent -> the protection holds the claim, and the disk that lands is deleted', async () => {
  const { ctx } = setup();
  const ec2 = new SlowCreate('alpha');
  ec2.createdState = 'available';
  const scope = { ...ctx, ec2 };

  const provisioning = reconcileOne(scope, claimItem());
  await ec2.inside;
  // Meanwhile the claim is deleted; another request sees it Terminating, no PV (read live) and no disk yet.
  const deletedNow = claimItem({ pvc: { metadata: { deletionTimestamp: ctx.now().toISOString() } }, pvCheckedLive: true });
  const meanwhile = await reconcileOne(scope, deletedNow);
  expect(meanwhile.outcome).toBe('requeue');
  expect(meanwhile.writes.some((w) => w.op === 'removeFinalizer' && w.finalizer === CLAIM_PROTECTION)).toBe(false);

  ec2.release();
  const created = await provisioning;
  expect(ec2.callsOf('createDisk')).toHaveLength(1);
  const [disk] = [...ec2.volumes.values()];
  expect(disk?.state).toBe('available');
  // Whatever the first request answered, the Terminating claim's next reconcile finds the disk.
  expect(['done', 'requeue']).toContain(created.outcome);

  const after = await reconcileOne(scope, deletedNow);
  expect(ec2.mutations.filter((m) => m.verb === 'deleteDisk').map((m) => m.args[0])).toEqual([disk!.volumeId]);
  expect(after.writes).toContainEqual(expect.objectContaining({ op: 'createEvent', reason: 'VolumeDeleted' }));
});
