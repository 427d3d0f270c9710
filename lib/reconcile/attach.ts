/**
 * Attaching a volume for a VolumeAttachment, as external-attacher does: only from a request
 * signed at most FRESH_REQUEST_SECONDS ago (freshness.ts); check that the PV, the node, the
 * volume and the instance are all in order and ours, the volume adopted before EC2 is asked
 * anything of it (`notAdoptedProblem`: IAM would refuse it); record the attachment
 * first — the attacher finalizer on the PV and the VolumeAttachment, and the instance in the
 * VolumeAttachment's node-id annotation — and call AttachVolume only once the item shows them
 * applied (write before act: a VolumeAttachment deleted or an answer lost mid-attach still
 * holds the finalizer that makes the detach happen, and the detach knows the instance even if
 * the Node is gone); attach under the first free device name; report `attached` with the
 * device path once EC2 says so.
 */
import { Annotations, Finalizers, type PersistentVolume, type VolumeAttachment, type VolumeAttachmentItem, type Write } from '../contract/index.js';
import type { Disk, DiskInitialization, Ec2Error, Instance } from '../ec2/types.js';
import { BLOCK_ATTACH_UNTIL_INITIALIZED_ATTRIBUTE } from '../storageclass/index.js';
import { attachmentOn, inlineVolumeHandleOf, inlineVolumeProblem, instanceIdOf, ownershipProblem, volumeHandleOf, volumeHandleProblem, volumeNameOf } from './attachment.js';
import type { Scope } from './context.js';
import { converge } from './converge.js';
import { withAttachment } from './disk-state.js';
import { EventReasons, pvEvent } from './events.js';
import { staleRequest } from './freshness.js';
import { attachErrorCode } from './grpc-codes.js';
import { Requeue } from './outcomes.js';
import { stuckAttachment } from './stuck-attachment.js';
import { notAdoptedProblem } from './tags.js';
import { attachingWait, creatingWait, initializingWait } from './timing.js';
import { act, done, failed, requeue, type Ec2Action, type Plan, type Settled, type Verdict } from './plan.js';
import { ensureAnnotation, ensureFinalizer, kubeTime, pvRef, vaRef, vaStatusWrites } from './writes.js';

type AttachAction = Extract<Ec2Action, { verb: 'attachDisk' | 'detachDisk' }>;

/** What is to be attached where, once the VolumeAttachment's PV and node check out. */
export interface AttachTarget {
  va: VolumeAttachment;
  /** Absent for an inline volume (`spec.source.inlineVolumeSpec`). */
  pv?: PersistentVolume;
  volumeId: string;
  instanceId: string;
  nodeName: string;
}

export interface AttachObserved {
  disk: Disk | undefined;
  instance: Instance | undefined;
  now: Date;
  /** Every device name on the instance is taken (by EC2 or by other attaches of this request). */
  noFreeDevice?: boolean;
  /** Read only when the volume asks to be attached once initialized and is not attached yet. */
  initialization?: DiskInitialization | undefined;
}

type AttachContext = { clusterId: string; driverName: string; ec2TimeScale?: number };

/** EC2 refusing a device name as in use is answered with the next name, this many times. */
export const MAX_DEVICE_ATTEMPTS = 4;

/**
 * Pure: `failed`, recorded in the VolumeAttachment's `attachError` with the gRPC code the
 * driver would have failed with (grpc-codes.ts). While the message stays
 * the same, so does its time (when the failure began): a retry refused for the same reason
 * writes nothing, so there is no update for anyone to take for news.
 */
export function attachFailed(va: VolumeAttachment, now: Date, reason: string, message: string, requeueAfterSeconds: number = Requeue.failed, extra: Write[] = []): Settled {
  const previous = va.status?.attachError;
  const time = previous?.message === message && previous.time ? previous.time : kubeTime(now);
  const attachError = { time, message, errorCode: attachErrorCode(reason) };
  return failed(reason, message, requeueAfterSeconds, [...vaStatusWrites(va, { attachError }), ...extra]);
}

/** Pure: the PV and node of a VolumeAttachment, or why it cannot be attached. */
export function attachTarget(item: VolumeAttachmentItem, ctx: AttachContext, now: Date): Settled | { target: AttachTarget } {
  const va = item.volumeAttachment;
  const pvName = va.spec.source.persistentVolumeName;
  const nodeName = va.spec.nodeName;
  const refuse = (reason: string, message: string) => attachFailed(va, now, reason, message);
  const { node } = item;
  let pv: PersistentVolume | undefined;
  let volumeId: string | undefined;
  if (pvName) {
    pv = item.pv ?? undefined;
    if (!pv) return refuse('PersistentVolumeNotFound', `PersistentVolume "${pvName}" not found`);
    if (pv.metadata.deletionTimestamp) return refuse('PersistentVolumeDeleting', `PersistentVolume "${pv.metadata.name}" is being deleted`);
    volumeId = volumeHandleOf(pv, ctx.driverName);
    if (!volumeId) return refuse('NoVolumeHandle', volumeHandleProblem(pv, ctx.driverName));
  } else if (va.spec.source.inlineVolumeSpec) {
    // An inline volume has no PV: the disk is named by the spec, and checked at the disk like any other.
    volumeId = inlineVolumeHandleOf(va, ctx.driverName);
    if (!volumeId) return refuse('NoVolumeHandle', inlineVolumeProblem(va, ctx.driverName));
  } else {
    return refuse('NoVolumeSource', 'the VolumeAttachment names neither a PersistentVolume nor an inlineVolumeSpec');
  }
  if (!node) return refuse('NodeNotFound', `node "${nodeName}" not found`);
  const instanceId = instanceIdOf(node);
  if (!instanceId) {
    return refuse('NoInstanceId', `node "${nodeName}" has no EC2 instance ID (no CSINode nodeID for ${ctx.driverName}, no aws:/// providerID)`);
  }
  return { target: { va, ...(pv && { pv }), volumeId, instanceId, nodeName } };
}

/** Pure: the next step towards the volume being attached to the node's instance. */
export function decideAttach(target: AttachTarget, observed: AttachObserved, ctx: AttachContext): Plan<AttachAction> {
  const { va, pv, volumeId, instanceId } = target;
  const { disk, instance, now } = observed;
  const refuse = (reason: string, message: string, after?: number) => attachFailed(va, now, reason, message, after);

  if (!disk) return refuse('VolumeNotFound', `volume ${volumeId} not found`);
  if (!instance) return refuse('InstanceNotFound', `instance ${instanceId} of node "${target.nodeName}" not found`);
  const notOurs = ownershipProblem(disk, instance, ctx.clusterId);
  if (notOurs) return refuse('NotOwned', notOurs, Requeue.failedSlow);
  // A disk attached already needs nothing of EC2; one that does must be adopted first.
  const unadopted = notAdoptedProblem(disk, ctx.clusterId, `attach it to node "${target.nodeName}"`);
  const mutate = (action: AttachAction, writes: Write[] = []): Plan<AttachAction> =>
    unadopted
      ? // Said on the PV too: the VolumeAttachment's error reaches only the pod's events, and
        // this one needs a person, not a retry.
        attachFailed(va, now, 'NotAdopted', unadopted, Requeue.failedSlow, pv ? [pvEvent(pv, 'Warning', EventReasons.failedAttachVolume, unadopted)] : [])
      : act(action, writes);
  if (disk.zone !== instance.zone) {
    return refuse('ZoneMismatch', `volume ${volumeId} is in zone ${disk.zone}, instance ${instanceId} in zone ${instance.zone}`, Requeue.failedSlow);
  }

  const record = attachmentRecord(target, ctx.driverName);
  if (record.length > 0) {
    return requeue(Requeue.recorded, `recording the attachment of volume ${volumeId} to instance ${instanceId} before attaching`, record);
  }
  const mine = attachmentOn(disk, instanceId);
  switch (mine?.state) {
    case 'attached':
    case 'busy':
      return done(vaStatusWrites(va, { attached: true, attachmentMetadata: { devicePath: mine.device }, attachError: null }));
    case 'attaching': {
      const stuck = stuckAttachment(volumeId, mine, instance, now, ctx.ec2TimeScale, va.status?.attachError?.message);
      if (!stuck) return requeue(attachingWait(mine, now, ctx.ec2TimeScale), `volume ${volumeId} is attaching to instance ${instanceId} as ${mine.device}`);
      // Said in the VolumeAttachment's error, as external-attacher records the driver's.
      return mutate({ verb: 'detachDisk', volumeId, instanceId }, attachFailed(va, now, 'AttachmentStuck', stuck).writes);
    }
    case 'detaching':
      return requeue(Requeue.detaching, `volume ${volumeId} is detaching from instance ${instanceId}; it is attached again after`);
    case undefined:
    case 'detached':
      break;
  }

  const elsewhere = disk.multiAttach ? [] : disk.attachments.filter((a) => a.instanceId !== instanceId && a.state !== 'detached');
  const held = elsewhere.filter((a) => a.state !== 'detaching').map((a) => a.instanceId);
  if (held.length > 0) return refuse('AttachedElsewhere', `volume ${volumeId} is attached to instance ${held.join(', ')}`);
  const leaving = elsewhere[0];
  if (leaving) return requeue(Requeue.detaching, `volume ${volumeId} is detaching from instance ${leaving.instanceId}`);
  if (disk.state === 'creating') return requeue(creatingWait(disk, now, ctx.ec2TimeScale), `volume ${volumeId} is still being created`);
  if (disk.state !== 'available' && disk.state !== 'in-use') {
    return refuse('VolumeNotAvailable', `volume ${volumeId} is ${disk.state}`);
  }
  if (observed.noFreeDevice) return refuse('NoDeviceName', `instance ${instanceId} has no free device name left`);
  // The driver's blockAttachUntilInitialized: no attach while EC2 still fetches the snapshot's blocks.
  if (waitsForInitialization(target) && observed.initialization?.state === 'initializing') {
    return requeue(
      initializingWait(observed.initialization),
      `volume ${volumeId} is still initializing (${BLOCK_ATTACH_UNTIL_INITIALIZED_ATTRIBUTE}: "true"): attached once EC2 reports it initialized`,
    );
  }
  return mutate({ verb: 'attachDisk', volumeId, instanceId, attempt: 0 });
}

/** Pure: whether the volume's attributes ask for the attach to wait for its initialization, as the driver's volume context does. */
export function waitsForInitialization(target: AttachTarget): boolean {
  const attributes = target.pv?.spec.csi?.volumeAttributes ?? target.va.spec.source.inlineVolumeSpec?.csi?.volumeAttributes;
  return attributes?.[BLOCK_ATTACH_UNTIL_INITIALIZED_ATTRIBUTE] === 'true';
}

/**
 * Pure: what must be on the objects before AttachVolume — the attacher finalizer on the PV
 * (an inline volume has none) and the VolumeAttachment, and the instance in the VolumeAttachment's node-id annotation.
 * Empty once the item shows all of it applied.
 */
export function attachmentRecord(target: AttachTarget, driverName: string): Write[] {
  const { va, pv, instanceId } = target;
  const finalizer = Finalizers.attacher(driverName);
  return [
    ...(pv ? ensureFinalizer(pv, pvRef(pv), finalizer) : []),
    ...ensureFinalizer(va, vaRef(va), finalizer),
    ...ensureAnnotation(va, vaRef(va), Annotations.attachedNodeId, instanceId),
  ];
}

/** Pure: a refused AttachVolume (or the DetachVolume of a stuck attach). */
export function refusedAttach(target: AttachTarget, action: AttachAction, error: Ec2Error, verdict: Verdict, now: Date): Plan<AttachAction> {
  if (action.verb === 'attachDisk' && error.kind === 'deviceInUse' && action.attempt + 1 < MAX_DEVICE_ATTEMPTS) {
    // The name stays claimed for this request, so the retry gets the next one.
    return act({ ...action, attempt: action.attempt + 1 });
  }
  if (verdict.outcome !== 'failed') return { writes: [], verdict };
  const message =
    error.kind === 'attachmentLimit'
      ? `node "${target.nodeName}" has no free attachment slot (AttachmentLimitExceeded): ${verdict.message}`
      : verdict.message;
  return attachFailed(target.va, now, verdict.reason, message, verdict.requeueAfterSeconds);
}

export async function reconcileAttach(item: VolumeAttachmentItem, scope: Scope): Promise<Settled> {
  const now = scope.now();
  const checked = attachTarget(item, scope, now);
  if (!('target' in checked)) return checked;
  // The VolumeAttachment may have been deleted, and its disk detached, since this item was built.
  const stale = staleRequest(scope, 'a volume is attached');
  if (stale) return stale;
  const { target } = checked;
  const { volumeId, instanceId } = target;
  return converge<AttachObserved, AttachAction>({
    observe: async () => {
      const initialization = waitsForInitialization(target) && target.va.status?.attached !== true;
      const [disk, instance, init] = await Promise.all([
        scope.ec2.getDisk(volumeId, volumeNameOf(target.pv, scope.provisionerName)),
        scope.ec2.getInstance(instanceId),
        initialization ? scope.ec2.getInitialization(volumeId) : undefined,
      ]);
      return { disk, instance, now, ...(initialization && { initialization: init }) };
    },
    decide: (observed) => decideAttach(target, observed, scope),
    perform: (action, observed) => performAttach(scope, action, observed),
    refused: (action, error, verdict) => refusedAttach(target, action, error, verdict, now),
  });
}

/** Takes an attach reconciler's action and returns what EC2 said, as the disk's attachments. */
async function performAttach(scope: Scope, action: AttachAction, observed: AttachObserved): Promise<AttachObserved> {
  const { disk, instance } = observed;
  if (!disk || !instance) throw new Error(`${action.verb} was decided without a volume and an instance`);
  const { volumeId, instanceId } = action;
  if (action.verb === 'detachDisk') {
    await scope.ec2.detachDisk(volumeId, instanceId);
    const device = attachmentOn(disk, instanceId)?.device ?? '';
    return { ...observed, disk: withAttachment(disk, { instanceId, device, state: 'detaching' }) };
  }
  const device = scope.devices.claim(instanceId, instance.devicesInUse, volumeId);
  if (device === undefined) return { ...observed, noFreeDevice: true };
  const state = await scope.ec2.attachDisk(volumeId, instanceId, device);
  return { ...observed, disk: withAttachment(disk, { instanceId, device, state, attachTime: observed.now.toISOString() }) };
}
