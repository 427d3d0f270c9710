/**
 * The disk of a claim that will never get its PV from volhook: the claim was deleted (or
 * bound to another PV) after its disk was asked for. No PV will reclaim that disk, so it is
 * deleted here — found by its name tag — lest it leak. Two items lead here:
 *
 * - a protected claim that releases its disk (`claimReleasesDisk`): still visible, held by
 *   volhook's finalizer; the finalizer goes once the disk is gone and no CreateVolume for it
 *   can still land;
 * - `PersistentVolumeClaimDeleted`: a claim gone without that finalizer (made before it
 *   existed, or the finalizer removed by hand).
 *
 * Deleting rests on live evidence only: the forwarder's live read that no PV exists
 * (`pvCheckedLive`), and EC2's answer now.
 */
import {
  Finalizers,
  pvNameForClaim,
  TagKeys,
  type PersistentVolumeClaim,
  type PersistentVolumeClaimDeletedItem,
  type PersistentVolumeClaimItem,
} from '../contract/index.js';
import { isGone, type Disk } from '../ec2/types.js';
import type { Scope } from './context.js';
import { converge } from './converge.js';
import { deleting } from './disk-state.js';
import { EventReasons, pvcEvent } from './events.js';
import { FRESH_REQUEST_SECONDS } from './freshness.js';
import { Requeue } from './outcomes.js';
import { act, done, failed, requeue, type Ec2Action, type Plan, type Settled } from './plan.js';
import { isOwnedDisk, notAdoptedProblem } from './tags.js';
import { pvcRef, removeFinalizer } from './writes.js';

type DeleteAction = Extract<Ec2Action, { verb: 'deleteDisk' }>;

export interface ClaimDeletedObserved {
  disk: Disk | undefined;
}

/** The claim whose disk is in question, however it reached the backend. */
export interface ReleasedClaim {
  uid: string;
  namespace: string;
  name: string;
}

/**
 * How long after a claim's deletion a CreateVolume for it may still land: a request built
 * just before the deletion creates only while it is fresh (freshness.ts), and works for at
 * most the function's timeout (under 30 s); the rest covers clocks that disagree.
 */
export const CREATE_HORIZON_SECONDS = FRESH_REQUEST_SECONDS + 30 + 30;

/** Pure: the next step for the disk of a released claim; `done` once EC2 shows none of it left. */
export function decideClaimDeleted(claim: ReleasedClaim, { disk }: ClaimDeletedObserved, clusterId: string): Plan<DeleteAction> {
  if (!disk || isGone(disk)) return done();
  const madeForThisClaim =
    disk.tags[TagKeys.pvcNamespace] === claim.namespace && disk.tags[TagKeys.pvcName] === claim.name && isOwnedDisk(disk, clusterId);
  if (!madeForThisClaim) {
    return failed(
      'NotOwned',
      `volume ${disk.volumeId} is named ${pvNameForClaim(claim.uid)} but was not created by cluster "${clusterId}" for claim ${claim.namespace}/${claim.name}; not deleting it`,
      Requeue.failedSlow,
    );
  }
  const unadopted = notAdoptedProblem(disk, clusterId, `delete it (claim ${claim.namespace}/${claim.name} no longer needs it)`);
  if (unadopted) return failed('NotAdopted', unadopted, Requeue.failedSlow);
  if (disk.state === 'creating') return requeue(Requeue.creating, `volume ${disk.volumeId} is still being created`);
  if (disk.state === 'in-use' || disk.attachments.length > 0) {
    return requeue(Requeue.waitForCluster, `volume ${disk.volumeId} is attached; it is deleted once detached`);
  }
  return act({ verb: 'deleteDisk', volumeId: disk.volumeId });
}

/** Why the disk goes, for the claim's Event or the item's result. */
export function deletedBecause(claim: ReleasedClaim, volumeId: string): string {
  return `deleted volume ${volumeId} of claim ${claim.namespace}/${claim.name}: the claim no longer needs it and no PersistentVolume ${pvNameForClaim(claim.uid)} exists (read live from the cluster)`;
}

/** Seconds until no CreateVolume for a claim deleted at `deletedAt` can land any more; 0 once past. */
export function secondsUntilNoCreateCanLand(deletedAt: string | undefined, now: Date): number {
  const since = deletedAt ? Date.parse(deletedAt) : NaN;
  if (Number.isNaN(since)) return 0;
  return Math.max(0, Math.ceil(since / 1000 + CREATE_HORIZON_SECONDS - now.getTime() / 1000));
}

/** Pure: a released claim whose disk is gone keeps its protection until no create can land. */
export function releaseProtection(pvc: PersistentVolumeClaim, now: Date): Settled {
  const wait = secondsUntilNoCreateCanLand(pvc.metadata.deletionTimestamp, now);
  if (wait > 0) {
    return requeue(wait, `no volume of the claim exists; its protection goes once no CreateVolume sent before its deletion can land (${wait} s)`);
  }
  return done([removeFinalizer(pvcRef(pvc), Finalizers.claimProtection)]);
}

/** Deletes the claim's disk; `deleted` names the volume this reconcile deleted, if it did. */
async function reconcileDiskOf(claim: ReleasedClaim, scope: Scope): Promise<{ settled: Settled; deleted?: string }> {
  let deleted: string | undefined;
  const settled = await converge<ClaimDeletedObserved, DeleteAction>({
    observe: async () => ({ disk: await scope.ec2.findDiskByName(pvNameForClaim(claim.uid)) }),
    decide: (observed) => decideClaimDeleted(claim, observed, scope.clusterId),
    perform: async (action, observed) => {
      await scope.ec2.deleteDisk(action.volumeId);
      deleted = action.volumeId;
      return { disk: deleting(observed.disk) };
    },
    refused: (_action, _error, verdict) => ({ writes: [], verdict }),
  });
  return { settled, ...(deleted !== undefined && { deleted }) };
}

/** A protected claim that releases its disk (see `claimReleasesDisk`). */
export async function reconcileClaimRelease(item: PersistentVolumeClaimItem, scope: Scope): Promise<Settled> {
  const { pvc } = item;
  // With a PV, the PV's reclaim policy decides the disk's fate.
  if (item.pvExists) return done([removeFinalizer(pvcRef(pvc), Finalizers.claimProtection)]);
  if (!item.pvCheckedLive) return notLive(pvNameForClaim(pvc.metadata.uid));
  const claim = { uid: pvc.metadata.uid, namespace: pvc.metadata.namespace, name: pvc.metadata.name };
  const { settled, deleted } = await reconcileDiskOf(claim, scope);
  const why = deleted ? [pvcEvent(pvc, 'Normal', EventReasons.volumeDeleted, deletedBecause(claim, deleted))] : [];
  if (settled.verdict.outcome !== 'done') return { ...settled, writes: [...why, ...settled.writes] };
  const released = releaseProtection(pvc, scope.now());
  return { ...released, writes: [...why, ...released.writes] };
}

export async function reconcileClaimDeleted(item: PersistentVolumeClaimDeletedItem, scope: Scope): Promise<Settled> {
  if (item.pvExists) return done();
  if (!item.pvCheckedLive) return notLive(pvNameForClaim(item.uid));
  const { settled, deleted } = await reconcileDiskOf(item, scope);
  // No object is left to record an event on: the result says why.
  if (deleted && settled.verdict.outcome === 'done') return { ...settled, verdict: { outcome: 'done', message: deletedBecause(item, deleted) } };
  return settled;
}

function notLive(pvName: string): Settled {
  return requeue(Requeue.waitForCluster, `whether PersistentVolume ${pvName} exists was not read live; a disk is deleted only on a live read`);
}
