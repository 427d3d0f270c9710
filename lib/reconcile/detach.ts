/**
 * Detaching the volume of a VolumeAttachment being deleted, as external-attacher does:
 * detach, report `attached: false`, then let the VolumeAttachment go by dropping the attacher
 * finalizer. The instance is the one recorded on the VolumeAttachment before attaching (its
 * node-id annotation), so a deleted Node does not stop the detach. "Detached" is concluded
 * from EC2 only: the volume or the instance gone, or no attachment between them. The PV's own
 * attacher finalizer is dropped by the reclaim reconciler once no VolumeAttachment names the PV.
 */
import { Annotations, Finalizers, type PersistentVolume, type VolumeAttachment, type VolumeAttachmentItem, type Write } from '../contract/index.js';
import { isGone, type Disk, type Ec2Error, type Instance } from '../ec2/types.js';
import { attachmentOn, attachmentVolumeIdOf, instanceIdOf, ownershipProblem, volumeNameOf } from './attachment.js';
import type { Scope } from './context.js';
import { converge } from './converge.js';
import { withAttachment } from './disk-state.js';
import { EventReasons, pvEvent } from './events.js';
import { Requeue } from './outcomes.js';
import { notAdoptedProblem } from './tags.js';
import { act, done, failed, requeue, type Ec2Action, type Plan, type Settled, type Verdict } from './plan.js';
import { hasFinalizer, kubeTime, removeFinalizer, vaRef, vaStatusWrites } from './writes.js';

type DetachAction = Extract<Ec2Action, { verb: 'detachDisk' }>;

export interface DetachTarget {
  va: VolumeAttachment;
  /** The PV whose volume is detached: where a refusal that needs a person is said. */
  pv?: PersistentVolume;
  volumeId: string;
  /** Unknown only for a VolumeAttachment with neither the node-id annotation nor its Node. */
  instanceId: string | undefined;
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

/** Pure: `failed`, recorded in the VolumeAttachment's `detachError`; its time kept while the message is the same. */
function detachFailed(va: VolumeAttachment, now: Date, reason: string, message: string, requeueAfterSeconds: number, extra: Write[] = []): Settled {
  const previous = va.status?.detachError;
  const time = previous?.message === message && previous.time ? previous.time : kubeTime(now);
  return failed(reason, message, requeueAfterSeconds, [...vaStatusWrites(va, { detachError: { time, message } }), ...extra]);
}

/** Pure: the next step towards the volume being detached from the node's instance. */
export function decideDetach(target: DetachTarget, observed: DetachObserved, ctx: { clusterId: string; driverName: string }): Plan<DetachAction> {
  const { va, volumeId, instanceId } = target;
  const { disk, instance } = observed;
  if (!disk || isGone(disk)) return done(detachedWrites(va, ctx.driverName));
  if (instanceId === undefined) {
    const live = disk.attachments.filter((a) => a.state !== 'detached');
    if (live.length === 0) return done(detachedWrites(va, ctx.driverName));
    const message = `volume ${volumeId} is attached to instance ${live.map((a) => a.instanceId).join(', ')}, and neither the node-id annotation nor node "${va.spec.nodeName}" says which one is this VolumeAttachment's; not detaching`;
    return detachFailed(va, observed.now, 'InstanceUnknown', message, Requeue.failedSlow);
  }
  if (!instance) return done(detachedWrites(va, ctx.driverName));
  const notOurs = ownershipProblem(disk, instance, ctx.clusterId);
  if (notOurs) return detachFailed(va, observed.now, 'NotOwned', notOurs, Requeue.failedSlow);
  const attachment = attachmentOn(disk, instanceId);
  if (!attachment) return done(detachedWrites(va, ctx.driverName));
  if (attachment.state === 'detaching') return requeue(Requeue.detaching, `volume ${volumeId} is detaching from instance ${instanceId}`);
  const unadopted = notAdoptedProblem(disk, ctx.clusterId, `detach it from node "${va.spec.nodeName}"`);
  if (unadopted) {
    const warning = target.pv ? [pvEvent(target.pv, 'Warning', EventReasons.failedDetachVolume, unadopted)] : [];
    return detachFailed(va, observed.now, 'NotAdopted', unadopted, Requeue.failedSlow, warning);
  }
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
  // An inline volume's disk is read from the same spec the attach read it from.
  const volumeId = attachmentVolumeIdOf(va, item.pv, scope.driverName);
  // The PV holds the attacher finalizer while a VolumeAttachment names it, so it is only
  // missing for a PV that was never ours to attach: nothing in EC2 to detach.
  if (!volumeId) return done(detachedWrites(va, scope.driverName));
  const instanceId = va.metadata.annotations?.[Annotations.attachedNodeId] ?? instanceIdOf(item.node);
  const target: DetachTarget = { va, ...(item.pv && { pv: item.pv }), volumeId, instanceId };
  const now = scope.now();
  return converge<DetachObserved, DetachAction>({
    observe: async () => {
      const [disk, instance] = await Promise.all([
        scope.ec2.getDisk(volumeId, volumeNameOf(item.pv, scope.provisionerName)),
        instanceId === undefined ? undefined : scope.ec2.getInstance(instanceId),
      ]);
      return { disk, instance, now };
    },
    decide: (observed) => decideDetach(target, observed, scope),
    perform: async (action, observed) => {
      await scope.ec2.detachDisk(action.volumeId, action.instanceId);
      const { disk } = observed;
      const device = disk && attachmentOn(disk, action.instanceId)?.device;
      return { ...observed, disk: disk && withAttachment(disk, { instanceId: action.instanceId, device: device ?? '', state: 'detaching' }) };
    },
    refused: (_action: DetachAction, _error: Ec2Error, verdict) => refusedDetach(va, verdict, now),
  });
}
