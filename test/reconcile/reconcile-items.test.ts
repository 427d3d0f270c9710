import { describe, expect, it } from 'vitest';
import { ItemSchema, type ItemInput } from '../../lib/contract/index.js';
import type { Disk } from '../../lib/ec2/types.js';
import { reconcileItems } from '../../lib/reconcile/index.js';
import { FakeGateway, throttled, type Verb } from './fake-gateway.js';
import { CLAIM_UID, claim, claimItem, ownedTags, pvItem, reconcile, setup, vaItem, volumeAttachment } from './fixtures.js';

const VOL = 'vol-0123456789abcdef0';
const INSTANCE = 'i-0aaaaaaaaaaaaaaa1';

const items = {
  provision: claimItem(),
  claimDeleted: { kind: 'PersistentVolumeClaimDeleted', uid: CLAIM_UID, namespace: 'shop', name: 'data', pvExists: false, pvCheckedLive: true },
  reclaim: pvItem({ pv: { status: { phase: 'Released' } } }),
  attach: vaItem(),
  detach: vaItem({
    volumeAttachment: volumeAttachment({ metadata: { deletionTimestamp: '2025-03-01T11:59:00Z', finalizers: ['external-attacher/ebs-csi-aws-com'] } }),
  }),
} satisfies Record<string, ItemInput>;

/** A cloud where every reconciler has something to do: the claim's volume, attached. */
function busyCloud(ec2: FakeGateway) {
  ec2.addVolume({ volumeId: VOL, tags: ownedTags(), attachments: [{ instanceId: INSTANCE, device: '/dev/xvdaa', state: 'attached' }] });
  ec2.addInstance({ instanceId: INSTANCE });
}

describe('reconcileItems', () => {
  it('several items -> one result each, in order, keyed by itemKey', async () => {
    const { ec2, ctx } = setup();
    busyCloud(ec2);
    const results = await reconcile(ctx, items.reclaim, items.provision, items.detach);
    expect(results.map((r) => r.key)).toEqual([
      'PersistentVolume/pvc-6f1c2b9e-3d4a-4c5b-9e8f-0a1b2c3d4e5f',
      'PersistentVolumeClaim/shop/data',
      'VolumeAttachment/csi-880af19cc88681d68f80a4a11ffa3d31efb3ee865ea742d7701040e168882925',
    ]);
  });

  it('one item throws an unexpected error -> that item requeues with the message, the others are unaffected', async () => {
    const { ec2, ctx } = setup();
    busyCloud(ec2);
    ec2.fail('findDiskByName', new TypeError('boom'));
    const results = await reconcile(ctx, items.provision, pvItem());
    expect(results[0]).toMatchObject({ outcome: 'requeue', message: expect.stringContaining('boom'), writes: [] });
    expect(results[1]).toMatchObject({ outcome: 'done' });
  });

  const transient: Array<[string, ItemInput, Verb]> = [
    ['provision', items.provision, 'findDiskByName'],
    ['claim deleted', items.claimDeleted, 'findDiskByName'],
    ['reclaim', items.reclaim, 'getDisk'],
    ['attach', items.attach, 'getDisk'],
    ['detach', items.detach, 'getInstance'],
  ];
  it.each(transient)('%s, EC2 throttled -> requeue with backoff, never failed', async (_name, item, verb) => {
    const { ec2, ctx } = setup();
    busyCloud(ec2);
    ec2.fail(verb, throttled());
    const [result] = await reconcile(ctx, item);
    expect(result).toMatchObject({ outcome: 'requeue', requeueAfterSeconds: 5, message: expect.stringContaining('RequestLimitExceeded') });
  });

  it('many claims -> every cloud read is issued before any answers (so the gateway can batch them)', async () => {
    class HeldGateway extends FakeGateway {
      release!: () => void;
      readonly held = new Promise<void>((resolve) => (this.release = resolve));
      override async findDiskByName(name: string): Promise<Disk | undefined> {
        const answer = super.findDiskByName(name);
        await this.held;
        return answer;
      }
    }
    const ec2 = new HeldGateway('alpha');
    ec2.createdState = 'available';
    const { ctx } = setup();
    const claims = Array.from({ length: 20 }, (_, i) =>
      ItemSchema.parse(claimItem({ pvc: claim({ metadata: { uid: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`, name: `data-${i}` } }) })),
    );
    const pending = reconcileItems(claims, { ...ctx, ec2 });
    await new Promise((resolve) => setImmediate(resolve));
    expect(ec2.callsOf('findDiskByName')).toHaveLength(20);
    ec2.release();
    const results = await pending;
    expect(results.map((r) => r.outcome)).toEqual(Array(20).fill('done'));
  });
});
