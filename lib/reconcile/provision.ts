/**
 * Provisioning a claim: protect the claim with volhook's finalizer (write before act), find
 * the claim's disk by its name tag, create it if there is none, wait for it to be
 * `available`, then write its PV and drop the protection. The disk is found again on every
 * retry, so a request lost after CreateVolume, or the same item twice, never makes a second
 * disk; and a claim deleted meanwhile stays visible until its disk is dealt with.
 */
import {
  Annotations,
  claimReleasesDisk,
  Finalizers,
  isClaimFor,
  isProtectedClaim,
  pvNameForClaim,
  type PersistentVolumeClaimItem,
} from '../contract/index.js';
import type { Disk, Ec2Error } from '../ec2/types.js';
import { CREATE_FRESHNESS_SECONDS, reconcileClaimRelease } from './claim-deleted.js';
import type { Scope } from './context.js';
import { converge } from './converge.js';
import { deleting } from './disk-state.js';
import { EventReasons, pvcEvent } from './events.js';
import { Requeue } from './outcomes.js';
import { act, done, failed, requeue, type Ec2Action, type Plan, type Settled, type Verdict } from './plan.js';
import { creatingWait } from './timing.js';
import { prepareProvision, provisioningFailed, type ProvisionJob } from './provision-job.js';
import { buildPersistentVolume } from './pv-builder.js';
import { addFinalizer, createPersistentVolume, pvcRef, removeFinalizer, removePvcAnnotation } from './writes.js';

type ProvisionAction = Extract<Ec2Action, { verb: 'createDisk' | 'deleteDisk' }>;

/** What the cloud says about the claim's disk: the volume tagged with its name, if any. */
export interface ProvisionObserved {
  disk: Disk | undefined;
  /** This request deleted the claim's failed volume: its replacement waits for the next one. */
  deletedFailed?: boolean;
  /** When it was observed: a volume `creating` is looked at again when EC2 should be done. */
  now?: Date;
}

type Names = { provisionerName: string; driverName: string };

/** Pure: the next step for a claim's disk. */
export function decideProvision(job: ProvisionJob, { disk, deletedFailed, now }: ProvisionObserved, names: Names): Plan<ProvisionAction> {
  const { pvc } = job;
  if (!disk) {
    const message = `External provisioner is provisioning volume for claim ${pvc.metadata.namespace}/${pvc.metadata.name}`;
    return act({ verb: 'createDisk', request: job.request }, [pvcEvent(pvc, 'Normal', EventReasons.provisioning, message)]);
  }
  switch (disk.state) {
    case 'creating':
      return requeue(creatingWait(disk, now), `volume ${disk.volumeId} is being created`);
    case 'available':
    case 'in-use': {
      const pv = buildPersistentVolume({
        ...names,
        pvName: job.pvName,
        pvc,
        storageClass: job.storageClass,
        className: job.className,
        disk,
        spec: job.spec,
        ...(job.migratedFrom && { migratedFrom: job.migratedFrom }),
      });
      // The PV is written first: once it exists, its reclaim policy owns the disk and the
      // claim's protection has done its job.
      return done([
        createPersistentVolume(pv),
        removeFinalizer(pvcRef(pvc), Finalizers.claimProtection),
        pvcEvent(pvc, 'Normal', EventReasons.provisioningSucceeded, `Successfully provisioned volume ${job.pvName}`),
      ]);
    }
    case 'error': {
      // A volume that failed to create (a KMS key it may not use, say) is ours and useless:
      // delete it, so that a later attempt can create a good one.
      const message = `volume ${disk.volumeId} failed to create (state error, e.g. for a KMS key it may not use); deleting it and creating another`;
      return act({ verb: 'deleteDisk', volumeId: disk.volumeId }, [provisioningFailed(pvc, job.className, message)]);
    }
    case 'deleting':
    case 'deleted': {
      // Only a failed volume of ours is deleted while its claim wants one. Its replacement is
      // made by the next reconcile, so a cause that persists costs one try a minute, not a loop.
      if (deletedFailed) {
        const message = `volume ${disk.volumeId} failed to create and was deleted; another is created in ${Requeue.failed} s`;
        return failed('VolumeCreationFailed', message, Requeue.failed);
      }
      // Under a new ClientToken: the gateway derives it from the failed volume's ID.
      return act({ verb: 'createDisk', request: job.request });
    }
  }
}

/** Pure: what a refused CreateVolume or DeleteVolume means for the claim. */
export function refusedProvision(job: ProvisionJob, action: ProvisionAction, error: Ec2Error, verdict: Verdict): Settled {
  if (verdict.outcome !== 'failed') return { writes: [], verdict };
  const message =
    action.verb === 'createDisk' && error.kind === 'notFound'
      ? `the volume vanished right after it was created (e.g. a KMS key it may not use): ${verdict.message}`
      : verdict.message;
  // Out of capacity in the selected node's zone: let the scheduler try a node elsewhere.
  const reschedule = error.kind === 'capacity' && job.waitForFirstConsumer;
  return failed(verdict.reason, message, verdict.requeueAfterSeconds, [
    provisioningFailed(job.pvc, job.className, message),
    ...(reschedule ? [removePvcAnnotation(job.pvc, Annotations.selectedNode)] : []),
  ]);
}

export async function reconcileProvision(item: PersistentVolumeClaimItem, scope: Scope): Promise<Settled> {
  const { pvc } = item;
  if (!isClaimFor(pvc, scope.provisionerName)) return done();
  if (claimReleasesDisk(pvc)) return reconcileClaimRelease(item, scope);
  const isProtected = isProtectedClaim(pvc);
  if (pvc.metadata.deletionTimestamp) return done();
  if (pvc.spec.volumeName || item.pvExists) {
    return done(isProtected ? [removeFinalizer(pvcRef(pvc), Finalizers.claimProtection)] : []);
  }
  const first = prepareProvision(item, scope);
  // The zone depends on zone IDs: with the Region's zones (cached by the gateway), decide again.
  const prepared = 'needsZones' in first ? prepareProvision(item, scope, await scope.ec2.zones()) : first;
  if (!('job' in prepared)) return prepared;
  const { job } = prepared;
  if (!isProtected) {
    // Write before act: no CreateVolume until the claim cannot vanish unseen.
    return requeue(Requeue.recorded, `protecting claim ${pvc.metadata.namespace}/${pvc.metadata.name} before creating its volume ${pvNameForClaim(pvc.metadata.uid)}`, [
      addFinalizer(pvcRef(pvc), Finalizers.claimProtection),
    ]);
  }
  const age = (scope.now().getTime() - scope.signedAt.getTime()) / 1000;
  if (age > CREATE_FRESHNESS_SECONDS) {
    // The claim may have been deleted since this item was built: a late create could leak.
    return requeue(Requeue.recorded, `the request was signed ${Math.round(age)} s ago; a volume is created only from a request at most ${CREATE_FRESHNESS_SECONDS} s old`);
  }
  return converge<ProvisionObserved, ProvisionAction>({
    observe: async () => ({ disk: await scope.ec2.findDiskByName(job.pvName), now: scope.now() }),
    decide: (observed) => decideProvision(job, observed, scope),
    perform: async (action, observed) => {
      // The reconciler just looked the name up in this request: the gateway need not again.
      if (action.verb === 'createDisk') return { disk: await scope.ec2.createDisk(action.request, { found: observed.disk }), now: scope.now() };
      await scope.ec2.deleteDisk(action.volumeId);
      return { disk: deleting(observed.disk), deletedFailed: true, now: scope.now() };
    },
    refused: (action, error, verdict) => refusedProvision(job, action, error, verdict),
  });
}
