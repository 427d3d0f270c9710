/**
 * A PersistentVolume's reclaim: keep its finalizers right, and when it is Released with the
 * Delete policy, delete its disk and then the PV. The disk is deleted only when every rule
 * holds: the PV is ours, Released, Delete, no VolumeAttachment names it, the volume is owned by
 * this cluster, adopted (`isAdoptedDisk`: within the IAM role's scope) and attached nowhere.
 */
import {
  Finalizers,
  isDynamicallyOurs,
  isOurVolume,
  isReclaimedByUs,
  reclaimPolicy,
  type Ownership,
  type PersistentVolume,
  type PersistentVolumeItem,
  type Write,
} from '../contract/index.js';
import { isGone, type Disk, type Ec2Error } from '../ec2/types.js';
import { volumeHandleOf, volumeHandleProblem, volumeNameOf } from './attachment.js';
import type { ReconcileContext, Scope } from './context.js';
import { converge } from './converge.js';
import { deleting } from './disk-state.js';
import { EventReasons, pvEvent } from './events.js';
import { Requeue } from './outcomes.js';
import { act, done, failed, requeue, type Ec2Action, type Plan, type Settled, type Verdict } from './plan.js';
import { isOwnedDisk, notAdoptedProblem } from './tags.js';
import { deletePersistentVolume, dropFinalizer, ensureFinalizer, pvRef } from './writes.js';

type DeleteAction = Extract<Ec2Action, { verb: 'deleteDisk' }>;
type Names = Pick<ReconcileContext, 'provisionerName' | 'driverName'>;

export interface ReclaimObserved {
  /** The PV's volume as EC2 describes it; undefined when EC2 has no such volume. */
  disk: Disk | undefined;
}

const ownership = (names: Names): Ownership => ({ provisioner: names.provisionerName, driver: names.driverName });

/**
 * Pure: finalizer upkeep, in any phase. The attacher finalizer goes once no VolumeAttachment
 * names the PV. The provisioner finalizer exists only to delete the disk before the PV goes:
 * a Bound Delete PV we provisioned gets it (PVs from before it existed, and those the in-tree
 * plugin provisioned before CSI migration), any other policy loses it.
 */
export function finalizerUpkeep(item: PersistentVolumeItem, names: Names): Write[] {
  const { pv } = item;
  const ref = pvRef(pv);
  const writes: Write[] = [];
  if (item.volumeAttachments.length === 0) writes.push(...dropFinalizer(pv, ref, Finalizers.attacher(names.driverName)));
  if (reclaimPolicy(pv) !== 'Delete') {
    writes.push(...dropFinalizer(pv, ref, Finalizers.provisioner));
  } else if (isDynamicallyOurs(pv, ownership(names)) && pv.status?.phase === 'Bound' && !pv.metadata.deletionTimestamp) {
    // An object being deleted takes no new finalizers; the API server would refuse.
    writes.push(...ensureFinalizer(pv, ref, Finalizers.provisioner));
  }
  return writes;
}

/** Pure: the next step for the disk of a Released PV with the Delete policy. */
export function decideReclaim(pv: PersistentVolume, { disk }: ReclaimObserved, clusterId: string): Plan<DeleteAction> {
  if (!disk || isGone(disk)) {
    // The disk is gone: delete this PV (its uid, never a namesake), then drop the finalizer
    // that held it. In this order the PV stays visible, Terminating, until the very last
    // write; if the writes stop between the two, the next reconcile finds the disk gone and
    // writes both again.
    return done([deletePersistentVolume(pv), ...dropFinalizer(pv, pvRef(pv), Finalizers.provisioner)]);
  }
  const warn = (message: string) => [pvEvent(pv, 'Warning', EventReasons.volumeFailedDelete, message)];
  if (!isOwnedDisk(disk, clusterId)) {
    const message = `volume ${disk.volumeId} is not owned by cluster "${clusterId}"; not deleting it`;
    return failed('NotOwned', message, Requeue.failedSlow, warn(message));
  }
  const unadopted = notAdoptedProblem(disk, clusterId, `delete it (PersistentVolume "${pv.metadata.name}" is Released, reclaim policy Delete)`);
  if (unadopted) return failed('NotAdopted', unadopted, Requeue.failedSlow, warn(unadopted));
  const attachedTo = disk.attachments.map((a) => a.instanceId);
  if (disk.state === 'in-use' || attachedTo.length > 0) {
    const message = `persistentvolume ${pv.metadata.name} is still attached to instance ${attachedTo.join(', ') || '(unknown)'}`;
    return requeue(Requeue.waitForCluster, message, warn(message));
  }
  if (disk.state === 'creating') return requeue(Requeue.creating, `volume ${disk.volumeId} is still being created`);
  return act({ verb: 'deleteDisk', volumeId: disk.volumeId });
}

/** Pure: a refused DeleteVolume, recorded on the PV. */
export function refusedReclaim(pv: PersistentVolume, verdict: Verdict): Settled {
  if (verdict.outcome === 'done') return { writes: [], verdict };
  return { writes: [pvEvent(pv, 'Warning', EventReasons.volumeFailedDelete, verdict.message)], verdict };
}

export async function reconcileReclaim(item: PersistentVolumeItem, scope: Scope): Promise<Settled> {
  const { pv } = item;
  if (!isOurVolume(pv, ownership(scope))) return done();
  const upkeep = finalizerUpkeep(item, scope);
  // Bound (even while being deleted), Available, Pending or Failed: the disk stays. So it does
  // for a PV whose disk is not ours to delete, such as a statically created in-tree one.
  if (pv.status?.phase !== 'Released' || reclaimPolicy(pv) !== 'Delete' || !isReclaimedByUs(pv, ownership(scope))) return done(upkeep);

  const warn = (message: string) => [...upkeep, pvEvent(pv, 'Warning', EventReasons.volumeFailedDelete, message)];
  if (item.volumeAttachments.length > 0) {
    const message = `persistentvolume ${pv.metadata.name} is still attached: VolumeAttachment ${item.volumeAttachments.join(', ')} still names it`;
    return requeue(Requeue.waitForCluster, message, warn(message));
  }
  // An in-tree PV's volume ID is read as CSI migration reads it: aws://<zone>/vol-… -> vol-….
  const handle = volumeHandleOf(pv, scope.driverName);
  if (!handle) {
    const message = `${volumeHandleProblem(pv, scope.driverName)}; cannot delete its volume`;
    return failed('NoVolumeHandle', message, Requeue.failedSlow, warn(message));
  }
  return converge<ReclaimObserved, DeleteAction>(
    {
      observe: async () => ({ disk: await scope.ec2.getDisk(handle, volumeNameOf(pv, scope.provisionerName)) }),
      decide: (observed) => decideReclaim(pv, observed, scope.clusterId),
      perform: async (action, observed) => {
        await scope.ec2.deleteDisk(action.volumeId);
        return { disk: deleting(observed.disk) };
      },
      refused: (_action: DeleteAction, _error: Ec2Error, verdict) => refusedReclaim(pv, verdict),
    },
    upkeep,
  );
}
