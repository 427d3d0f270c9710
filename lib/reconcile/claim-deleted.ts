/**
 * A claim deleted before its PV was written (or while its disk was still creating): its disk
 * has no PV to reclaim it, so it is deleted here — found by its name tag — lest it leak.
 */
import { pvNameForClaim, type PersistentVolumeClaimDeletedItem } from '../contract/index.js';
import type { Disk } from '../ec2/types.js';
import type { Scope } from './context.js';
import { converge } from './converge.js';
import { deleting, isGone } from './disk-state.js';
import { Requeue } from './outcomes.js';
import { act, done, failed, requeue, type Ec2Action, type Plan, type Settled } from './plan.js';
import { isOwnedDisk, TagKeys } from './tags.js';

type DeleteAction = Extract<Ec2Action, { verb: 'deleteDisk' }>;

export interface ClaimDeletedObserved {
  disk: Disk | undefined;
}

/** Pure: the next step for the disk of a deleted claim. */
export function decideClaimDeleted(item: PersistentVolumeClaimDeletedItem, { disk }: ClaimDeletedObserved, clusterId: string): Plan<DeleteAction> {
  if (!disk || isGone(disk)) return done();
  const madeForThisClaim =
    disk.tags[TagKeys.pvcNamespace] === item.namespace && disk.tags[TagKeys.pvcName] === item.name && isOwnedDisk(disk, clusterId);
  if (!madeForThisClaim) {
    return failed(
      'NotOwned',
      `volume ${disk.volumeId} is named ${pvNameForClaim(item.uid)} but was not created by cluster "${clusterId}" for claim ${item.namespace}/${item.name}; not deleting it`,
      Requeue.failedSlow,
    );
  }
  if (disk.state === 'creating') return requeue(Requeue.creating, `volume ${disk.volumeId} is still being created`);
  if (disk.state === 'in-use' || disk.attachments.length > 0) {
    return requeue(Requeue.waitForCluster, `volume ${disk.volumeId} is attached; it is deleted once detached`);
  }
  return act({ verb: 'deleteDisk', volumeId: disk.volumeId });
}

export async function reconcileClaimDeleted(item: PersistentVolumeClaimDeletedItem, scope: Scope): Promise<Settled> {
  // With a PV, the PV's reclaim policy decides the disk's fate.
  if (item.pvExists) return done();
  return converge<ClaimDeletedObserved, DeleteAction>({
    observe: async () => ({ disk: await scope.ec2.findDiskByName(pvNameForClaim(item.uid)) }),
    decide: (observed) => decideClaimDeleted(item, observed, scope.clusterId),
    perform: async (action, observed) => {
      await scope.ec2.deleteDisk(action.volumeId);
      return { disk: deleting(observed.disk) };
    },
    // No object is left to record an event on: the verdict alone.
    refused: (_action, _error, verdict) => ({ writes: [], verdict }),
  });
}
