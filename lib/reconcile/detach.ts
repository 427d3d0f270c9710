/**
 * Detaching the volume of a VolumeAttachment being deleted, as external-attacher does:
 * detach, report `attached: false`, then let the VolumeAttachment go by dropping the attacher
 * finalizer. A volume or instance that is gone counts as detached. The PV's own attacher
 * finalizer is dropped by the reclaim reconciler once no VolumeAttachment names the PV.
 */
import { Finalizers, type VolumeAttachment, type VolumeAttachmentItem, type Write } from '../contract/index.js';
import type { Disk, Ec2Error, Instance } from '../ec2/types.js';
import { attachmentOn, instanceIdOf, ownershipProblem, volumeHandleOf } from './attachment.js';
import type { Scope } from './context.js';
import { converge } from './converge.js';
import { isGone, withAttachment } from './disk-state.js';
import { Requeue } from './outcomes.js';
import { act, done, failed, requeue, type Ec2Action, type Plan, type Settled, type Verdict } from './plan.js';
import { hasFinalizer, kubeTime, removeFinalizer, vaRef, vaStatusWrites } from './writes.js';

type DetachAction = Extract<Ec2Action, { verb: 'detachDisk' }>;

export interface DetachTarget {
  va: VolumeAttachment;
  volumeId: string;
  instanceId: string;
}

export interface DetachObserved {
  disk: Disk | undefined;
  instance: Instance | undefined;
  now: Date;
}

/** Pure: the writes that finish a detach — status, then the finalizer that held the VolumeAttachment. */
export function detachedWrites(va: VolumeAttachment, driverName: string): Write[] {
  return [
    ...vaStatusWrites(va, { attached: false, attachmentMetadata: null, detachError: null }),
    removeFinalizer(vaRef(va), Finalizers.attacher(driverName)),
  ];
}

/** Pure: `failed`, recorded in the VolumeAttachment's `detachError`. */
function detachFailed(va: VolumeAttachment, now: Date, reason: string, message: string, requeueAfterSeconds: number): Settled {
  return failed(reason, message, requeueAfterSeconds, vaStatusWrites(va, { detachError: { time: kubeTime(now), message } }));
}

/** Pure: the next step towards the volume being detached from the node's instance. */
export function decideDetach(target: DetachTarget, observed: DetachObserved, ctx: { clusterId: string; driverName: string }): Plan<DetachAction> {
  const { va, volumeId, instanceId } = target;
  const { disk, instance } = observed;
  if (!disk || isGone(disk) || !instance) return done(detachedWrites(va, ctx.driverName));
  const notOurs = ownershipProblem(disk, instance, ctx.clusterId);
  if (notOurs) return detachFailed(va, observed.now, 'NotOwned', notOurs, Requeue.failedSlow);
  const attachment = attachmentOn(disk, instanceId);
  if (!attachment) return done(detachedWrites(va, ctx.driverName));
  if (attachment.state === 'detaching') return requeue(Requeue.detaching, `volume ${volumeId} is detaching from instance ${instanceId}`);
  return act({ verb: 'detachDisk', volumeId, instanceId });
}

/** Pure: a refused DetachVolume, recorded in `detachError` when it is a failure. */
export function refusedDetach(va: VolumeAttachment, verdict: Verdict, now: Date): Settled {
  if (verdict.outcome !== 'failed') return { writes: [], verdict };
  return detachFailed(va, now, verdict.reason, verdict.message, verdict.requeueAfterSeconds);
}

export async function reconcileDetach(item: VolumeAttachmentItem, scope: Scope): Promise<Settled> {
  const va = item.volumeAttachment;
  if (!hasFinalizer(va, Finalizers.attacher(scope.driverName))) return done();
  const volumeId = item.pv ? volumeHandleOf(item.pv, scope.driverName) : undefined;
  const instanceId = instanceIdOf(item.node);
  // Without the PV or the node there is nothing EC2 could be asked to detach: a gone node's
  // instance is almost always terminated, and its attachments with it.
  if (!volumeId || !instanceId) return done(detachedWrites(va, scope.driverName));
  const target: DetachTarget = { va, volumeId, instanceId };
  const now = scope.now();
  return converge<DetachObserved, DetachAction>({
    observe: async () => {
      const [disk, instance] = await Promise.all([scope.ec2.getDisk(volumeId), scope.ec2.getInstance(instanceId)]);
      return { disk, instance, now };
    },
    decide: (observed) => decideDetach(target, observed, scope),
    perform: async (_action, observed) => {
      await scope.ec2.detachDisk(volumeId, instanceId);
      const { disk } = observed;
      const device = disk && attachmentOn(disk, instanceId)?.device;
      return { ...observed, disk: disk && withAttachment(disk, { instanceId, device: device ?? '', state: 'detaching' }) };
    },
    refused: (_action: DetachAction, _error: Ec2Error, verdict) => refusedDetach(va, verdict, now),
  });
}
