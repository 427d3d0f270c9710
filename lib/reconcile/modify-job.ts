/**
 * The first half of changing a bound claim's volume, which needs no cloud: does the claim ask
 * for a bigger volume or another VolumeAttributesClass, may it, and what exactly. Every
 * refusal here (shrinking, a class without `allowVolumeExpansion`, a size over the type's
 * maximum, a claim not bound to a volume of ours, a VolumeAttributesClass EBS cannot honour)
 * happens before any EC2 call, with a Warning Event naming the reason.
 */
import {
  claimClassName,
  claimResizeUnrecorded,
  isBoundClaim,
  isDynamicallyOurs,
  isOurVolume,
  type PersistentVolume,
  type PersistentVolumeClaim,
  type Ownership,
  type PersistentVolumeClaimItem,
  type Write,
} from '../contract/index.js';
import { volumeHandleOf } from './attachment.js';
import {
  infeasibility,
  isVolumeType,
  ParameterError,
  parseQuantity,
  readVolumeAttributes,
  VOLUME_TYPE_LIMITS,
  type VolumeAttributes,
} from '../storageclass/index.js';
import { ceilGiB } from '../storageclass/quantity.js';
import { claimStatusWrites, ResizeStatus, type ModifyPhase } from './claim-status.js';
import type { ReconcileContext } from './context.js';
import { EventReasons, pvcEvent } from './events.js';
import { Requeue } from './outcomes.js';
import { done, failed, requeue, type Settled } from './plan.js';

/** A bound claim whose volume is to grow, change its VolumeAttributesClass, or both. */
export interface ModifyJob {
  pvc: PersistentVolumeClaim;
  pv: PersistentVolume;
  volumeId: string;
  volumeMode: 'Filesystem' | 'Block';
  /** Grow to this many GiB; `allocated` is the claim's request as written (`status.allocatedResources`). */
  resize?: { sizeGiB: number; allocated: string };
  /**
   * The claim's resize is over in EC2 and on the PV (a retry after the claim's status write
   * was lost): only the status is left to write.
   */
  resizeRecorded?: boolean;
  /** Move to this VolumeAttributesClass. */
  modify?: { className: string; attributes: VolumeAttributes };
}

type JobContext = Pick<ReconcileContext, 'registration' | 'driverName' | 'provisionerName' | 'now'>;

/**
 * Pure: the end of the reconcile (nothing to change, or refused) or the job. For a bound claim
 * of ours that is not being deleted.
 */
export function prepareModify(item: PersistentVolumeClaimItem, ctx: JobContext): Settled | { job: ModifyJob } {
  const { pvc } = item;
  const pv = item.pv;
  const now = ctx.now();
  const ownership: Ownership = { provisioner: ctx.provisionerName, driver: ctx.driverName };
  const resizeFail = (reason: string, message: string, extra: Write[] = []) =>
    failed(reason, message, Requeue.failedSlow, [...extra, pvcEvent(pvc, 'Warning', EventReasons.volumeResizeFailed, message)]);

  const modifyWanted = wantsModify(pvc);
  const requested = bytesOf(pvc.spec.resources.requests.storage);
  const pvBytes = pv ? bytesOf(pv.spec.capacity.storage) : undefined;
  const resizeStatus = pvc.status?.allocatedResourceStatuses?.storage;
  // A PV grown without the claim being told (its status writes lost) is resized again: EC2,
  // not the PV, says whether the disk has the size, and if it has, only the status is written.
  const resizeUnrecorded = !!pv && claimResizeUnrecorded(pvc, pv.spec.capacity.storage);
  const resizeWanted = requested !== undefined && pvBytes !== undefined && (requested > pvBytes || resizeUnrecorded);
  const resizeUnfinished = resizeStatus === ResizeStatus.controllerInProgress || resizeStatus === ResizeStatus.controllerInfeasible;
  if (!resizeWanted && !resizeUnfinished && !modifyWanted && !isShrink(pvc, pv, requested, pvBytes, ownership)) return done();
  if (!isBoundClaim(pvc)) {
    return requeue(Requeue.waitForCluster, `claim names PersistentVolume "${pvc.spec.volumeName}" but is not Bound yet (phase ${pvc.status?.phase ?? 'unset'}): its volume is changed once the PV controller has written the claim's status`);
  }

  if (!pv) return requeue(Requeue.waitForCluster, `PersistentVolume "${pvc.spec.volumeName}" of the claim is not known (yet)`);
  if (!pvc.metadata.resourceVersion) return failed('InvalidItem', 'the claim has no resourceVersion: its status cannot be written safely', Requeue.failedSlow);
  const boundHere = pv.spec.claimRef?.uid === pvc.metadata.uid;
  const volumeId = boundHere && isOurVolume(pv, ownership) ? volumeHandleOf(pv, ctx.driverName) : undefined;
  if (!volumeId) {
    const message = `claim is bound to PersistentVolume "${pv.metadata.name}", which is not an EBS volume of ${ctx.driverName} bound to this claim: it cannot be resized or modified`;
    return modifyWanted && !resizeWanted
      ? failed('NotOurVolume', message, Requeue.failedSlow, [pvcEvent(pvc, 'Warning', EventReasons.volumeModifyFailed, message)])
      : resizeFail('NotOurVolume', message);
  }

  if (requested === undefined) return resizeFail('InvalidSize', `spec.resources.requests.storage "${pvc.spec.resources.requests.storage}" is not a Kubernetes quantity`);
  if (isShrink(pvc, pv, requested, pvBytes, ownership)) {
    return resizeFail(
      'ShrinkNotSupported',
      `shrinking volume ${pv.metadata.name} from ${pv.spec.capacity.storage} to ${pvc.spec.resources.requests.storage} is not supported: EBS volumes can only grow`,
    );
  }

  const job: ModifyJob = { pvc, pv, volumeId, volumeMode: pv.spec.volumeMode ?? pvc.spec.volumeMode ?? 'Filesystem' };
  if (resizeWanted) {
    const className = claimClassName(pvc) ?? '';
    if (!item.storageClass || item.storageClass.metadata.name !== className) {
      return requeue(Requeue.waitForCluster, `StorageClass "${className}" of the claim is not known (yet)`);
    }
    if (item.storageClass.allowVolumeExpansion !== true) {
      return resizeFail('ExpansionNotAllowed', `only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize: StorageClass "${className}" does not set allowVolumeExpansion: true`);
    }
    const sizeGiB = Number(ceilGiB(requested));
    const allocated = pvc.spec.resources.requests.storage;
    const type = expectedType(item);
    const max = Math.min(isVolumeType(type) ? VOLUME_TYPE_LIMITS[type].maxSizeGiB : Number.MAX_SAFE_INTEGER, ctx.registration.maxSizeGiB);
    if (sizeGiB > max) {
      const why =
        max === ctx.registration.maxSizeGiB && (!isVolumeType(type) || max < VOLUME_TYPE_LIMITS[type].maxSizeGiB)
          ? `the cluster allows at most ${max} GiB (maxSizeGiB)`
          : `a ${type} volume is at most ${max} GiB`;
      const message = `cannot expand volume ${pv.metadata.name} to ${allocated} (${sizeGiB} GiB): ${why}`;
      return resizeFail('SizeOverMaximum', message, claimStatusWrites(pvc, { kind: 'infeasible', allocated, message }, { kind: 'none' }, now));
    }
    job.resize = { sizeGiB, allocated };
  } else if (resizeUnfinished) {
    job.resizeRecorded = true;
  }

  if (modifyWanted) {
    const prepared = prepareAttributes(item, job, ctx);
    if ('settled' in prepared) return prepared.settled;
    if (prepared.modify) job.modify = prepared.modify;
  }
  return { job };
}

/** The claim asks for another VolumeAttributesClass than it has, or a change is under way. */
export function wantsModify(pvc: PersistentVolumeClaim): boolean {
  const target = pvc.spec.volumeAttributesClassName ?? '';
  const current = pvc.status?.currentVolumeAttributesClassName ?? '';
  return !!pvc.status?.modifyVolumeStatus || target !== current;
}

function prepareAttributes(
  item: PersistentVolumeClaimItem,
  job: ModifyJob,
  ctx: JobContext,
): { settled: Settled } | { modify?: ModifyJob['modify'] } {
  const { pvc, pv } = job;
  const now = ctx.now();
  const target = pvc.spec.volumeAttributesClassName ?? '';
  if (target === '') {
    // A resize goes first; the class's rollback is looked at once it is done.
    if (job.resize || job.resizeRecorded) return {};
    // Back to no class: nothing to undo in EBS; the claim stops saying a change is under way.
    const canceled = pvc.status?.conditions?.some((c) => c.type === 'ModifyingVolume');
    const writes = [
      ...claimStatusWrites(pvc, { kind: 'none' }, { kind: 'rolledBack' }, now),
      ...(canceled ? [pvcEvent(pvc, 'Normal', EventReasons.volumeModifyCanceled, 'Cancelled modify.')] : []),
    ];
    return { settled: done(writes) };
  }
  const refuse = (phase: ModifyPhase, reason: string, message: string, requeueAfterSeconds: number = Requeue.failedSlow): { settled: Settled } => ({
    settled: failed(reason, message, requeueAfterSeconds, [
      ...claimStatusWrites(pvc, { kind: 'none' }, phase, now),
      pvcEvent(pvc, 'Warning', EventReasons.volumeModifyFailed, message),
    ]),
  });
  const vac = item.volumeAttributesClass;
  if (!vac || vac.metadata.name !== target) {
    return refuse({ kind: 'pending' }, 'VolumeAttributesClassNotFound', `VAC "${target}" does not exist.`, Requeue.waitForCluster);
  }
  const infeasible = (message: string) =>
    refuse({ kind: 'infeasible', target, reason: 'InvalidArgument', message }, 'Infeasible', message);
  if (vac.driverName !== ctx.driverName) {
    return infeasible(`VolumeAttributesClass "${target}" is for driver "${vac.driverName}", not ${ctx.driverName}`);
  }
  let attributes: VolumeAttributes;
  try {
    attributes = readVolumeAttributes(vac.parameters, { PVCName: pvc.metadata.name, PVCNamespace: pvc.metadata.namespace, PVName: pv.metadata.name });
  } catch (error) {
    if (error instanceof ParameterError) return infeasible(`invalid parameter of VolumeAttributesClass "${target}": ${error.message}`);
    throw error;
  }
  if (attributes.type && !ctx.registration.allowedVolumeTypes.includes(attributes.type)) {
    return infeasible(`volume type ${attributes.type} is not allowed for this cluster (allowed: ${ctx.registration.allowedVolumeTypes.join(', ')})`);
  }
  // What can be judged without EC2: the class's own type, or the StorageClass's when it names none.
  const type = attributes.type ?? expectedType(item);
  const sizeGiB = Math.max(job.resize?.sizeGiB ?? 0, gibOf(pv.spec.capacity.storage) ?? 0);
  const problem = infeasibility({
    type,
    sizeGiB,
    ...(attributes.iops !== undefined && { iops: attributes.iops }),
    ...(attributes.throughput !== undefined && { throughput: attributes.throughput }),
  });
  if (problem && (attributes.type !== undefined || attributes.iops !== undefined || attributes.throughput !== undefined)) {
    return infeasible(`VolumeAttributesClass "${target}" cannot apply: ${problem}`);
  }
  return { modify: { className: target, attributes } };
}

/** The volume's type as far as the cluster knows it: the StorageClass's `type`, else gp3. */
function expectedType(item: PersistentVolumeClaimItem): string {
  const params = item.storageClass?.parameters ?? {};
  const entry = Object.entries(params).find(([key]) => key.toLowerCase() === 'type');
  return entry?.[1] || 'gp3';
}

/**
 * The claim asks for less than its PV has, after having had it: its PV grew for it (a PV we
 * provisioned is exactly the request rounded up to GiB, and grows only by expansion), or an
 * expansion was recorded. A claim that simply asked for less than a pre-existing PV offers is
 * not shrinking.
 */
function isShrink(
  pvc: PersistentVolumeClaim,
  pv: PersistentVolume | null | undefined,
  requested: bigint | undefined,
  pvBytes: bigint | undefined,
  ownership: Ownership,
): boolean {
  if (!pv || requested === undefined || pvBytes === undefined) return false;
  if (ceilGiB(requested) >= ceilGiB(pvBytes)) return false;
  const allocated = bytesOf(pvc.status?.allocatedResources?.storage);
  return isDynamicallyOurs(pv, ownership) || (allocated !== undefined && requested < allocated);
}


function bytesOf(quantity: string | undefined): bigint | undefined {
  if (quantity === undefined) return undefined;
  try {
    return parseQuantity(quantity);
  } catch (error) {
    if (error instanceof ParameterError) return undefined;
    throw error;
  }
}

export function gibOf(quantity: string | undefined): number | undefined {
  const bytes = bytesOf(quantity);
  return bytes === undefined || bytes < 0n ? undefined : Number(ceilGiB(bytes));
}
