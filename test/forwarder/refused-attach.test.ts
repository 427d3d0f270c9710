/**
 * A VolumeAttachment that EC2 keeps refusing (AttachmentLimitExceeded: the node is full) is
 * tried once per requeue interval, not on every echo of its own status write: the forwarder's
 * queue and change filter, the real reconcilers and the writes they ask for, on a manual
 * clock for three minutes.
 */
import type * as k8s from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { PersistentVolume, VolumeAttachment, Write } from '../../lib/contract/index.js';
import { attachmentNews, ChangeFilter } from '../../lib/forwarder/changes.js';
import { WorkQueue } from '../../lib/forwarder/queue.js';
import { completionOf } from '../../lib/forwarder/sender.js';
import { Requeue } from '../../lib/reconcile/outcomes.js';
import { ec2Error } from '../reconcile/fake-gateway.js';
import { DRIVER, NOW, ownedTags, persistentVolume, reconcile, setup, vaItem, volumeAttachment, INSTANCE_ID } from '../reconcile/fixtures.js';

const VOL = 'vol-0123456789abcdef0';
const MINUTES = 3;

/** Applies the writes the backend asked for to the two objects, as `applyWrites` would. */
function apply(writes: Write[], objects: { va: VolumeAttachment; pv: PersistentVolume }): { vaChanged: boolean } {
  let vaChanged = false;
  for (const write of writes) {
    switch (write.op) {
      case 'addFinalizer': {
        const target = write.target.kind === 'VolumeAttachment' ? objects.va : objects.pv;
        const finalizers = target.metadata.finalizers ?? [];
        if (!finalizers.includes(write.finalizer)) target.metadata.finalizers = [...finalizers, write.finalizer];
        vaChanged ||= write.target.kind === 'VolumeAttachment';
        break;
      }
      case 'setAnnotation':
        objects.va.metadata.annotations = { ...objects.va.metadata.annotations, [write.key]: write.value };
        vaChanged = true;
        break;
      case 'updateVolumeAttachmentStatus':
        objects.va.status = write.status;
        vaChanged = true;
        break;
      case 'createEvent':
        break;
      default:
        throw new Error(`unexpected write ${write.op}`);
    }
  }
  return { vaChanged };
}

describe('a VolumeAttachment refused with AttachmentLimitExceeded', () => {
  it(`for ${MINUTES} minutes on a manual clock gets no more AttachVolume calls than its requeue interval allows`, async () => {
    let now = NOW.getTime();
    const { ec2, ctx } = setup();
    ctx.now = () => new Date(now);
    ctx.signedAt = NOW;
    ec2.addVolume({ volumeId: VOL, tags: ownedTags() });
    ec2.addInstance({ instanceId: INSTANCE_ID });
    ec2.fail('attachDisk', ec2Error('attachmentLimit', 'AttachmentLimitExceeded', 'You have reached the limit of attachments for this instance'), 1_000);

    const objects = { va: volumeAttachment() as VolumeAttachment, pv: persistentVolume() as PersistentVolume };
    const key = `VolumeAttachment/${objects.va.metadata.name}`;
    const queue = new WorkQueue({ batchSize: 100, maxInFlight: 4, now: () => now });
    const filter = new ChangeFilter<k8s.V1VolumeAttachment>((va) => attachmentNews(va, { driver: DRIVER }));
    filter.isNews('add', objects.va as unknown as k8s.V1VolumeAttachment);
    queue.add(key);

    const end = now + MINUTES * 60_000;
    let resourceVersion = 1;
    for (; now < end; now += 250) {
      ctx.signedAt = new Date(now);
      for (let batch = queue.take(); batch; batch = queue.take()) {
        const [result] = await reconcile(ctx, vaItem({ volumeAttachment: objects.va, pv: objects.pv }));
        const { vaChanged } = apply(result!.writes, objects);
        if (vaChanged) {
          objects.va.metadata.resourceVersion = String(++resourceVersion);
          // The watch delivers the update; only news goes back into the queue.
          if (filter.isNews('update', objects.va as unknown as k8s.V1VolumeAttachment)) queue.add(key);
        }
        queue.settle(batch, new Map([[key, completionOf(result!)]]));
      }
    }

    const attaches = ec2.callsOf('attachDisk').length;
    // One try at the start, then one per requeue interval: never the storm of a retry per echo.
    expect(attaches).toBeGreaterThanOrEqual(MINUTES);
    expect(attaches).toBeLessThanOrEqual(1 + Math.floor((MINUTES * 60) / Requeue.failed));
    // The refusal is on the VolumeAttachment, with the time it began.
    // errorCode 8: gRPC ResourceExhausted, as external-attacher writes it (the kubelet refreshes the node's attach limit).
    expect(objects.va.status?.attachError).toEqual({ time: '2025-03-01T12:00:00Z', message: expect.stringContaining('AttachmentLimitExceeded'), errorCode: 8 });
  });
});
