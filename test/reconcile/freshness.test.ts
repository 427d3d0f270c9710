/**
 * CreateVolume and AttachVolume are made only from a request signed at most
 * FRESH_REQUEST_SECONDS ago, by the backend's clock: one rule for both. A stale request is
 * answered requeue at once (the forwarder sends the item again, freshly signed) and makes no
 * EC2 call; the same item in a request just inside the bound goes through.
 */
import { describe, expect, it } from 'vitest';
import type { ItemInput } from '../../lib/contract/index.js';
import { FRESH_REQUEST_SECONDS } from '../../lib/reconcile/freshness.js';
import type { Verb } from './fake-gateway.js';
import { claimItem, INSTANCE_ID, NOW, reconcileOne, setup, vaItem } from './fixtures.js';

/** The VolumeAttachment's volume; no name tag, so the claim's look-up by name finds no disk. */
const VOL = 'vol-0123456789abcdef0';
const signedAgo = (seconds: number) => new Date(NOW.getTime() - seconds * 1000);

const rows: [string, ItemInput, Verb, string][] = [
  ['a protected claim', claimItem(), 'createDisk', 'a volume is created only from a request'],
  ['a recorded VolumeAttachment', vaItem(), 'attachDisk', 'a volume is attached only from a request'],
];

describe('only a fresh request creates or attaches', () => {
  it.each(rows)('%s in a request signed FRESH_REQUEST_SECONDS + 1 s ago -> requeue at once, no EC2 call; signed FRESH_REQUEST_SECONDS ago -> its CreateVolume or AttachVolume', async (_name, item, verb, said) => {
    const stale = setup();
    stale.ec2.addVolume({ volumeId: VOL });
    stale.ec2.addInstance({ instanceId: INSTANCE_ID });
    const refused = await reconcileOne({ ...stale.ctx, signedAt: signedAgo(FRESH_REQUEST_SECONDS + 1) }, item);
    expect(refused).toMatchObject({ outcome: 'requeue', requeueAfterSeconds: 0, writes: [] });
    expect(refused.outcome === 'requeue' && refused.message).toBe(
      `the request was signed ${FRESH_REQUEST_SECONDS + 1} s ago; ${said} at most ${FRESH_REQUEST_SECONDS} s old`,
    );
    expect(stale.ec2.calls).toEqual([]);

    const fresh = setup();
    fresh.ec2.addVolume({ volumeId: VOL });
    fresh.ec2.addInstance({ instanceId: INSTANCE_ID });
    await reconcileOne({ ...fresh.ctx, signedAt: signedAgo(FRESH_REQUEST_SECONDS) }, item);
    expect(fresh.ec2.mutations.map((c) => c.verb)).toEqual([verb]);
  });
});
