/**
 * Provisioning a claim: find the claim's disk by its name tag, create it if there is none,
 * wait for it to be `available`, then write its PV. The disk is found again on every retry,
 * so a request lost after CreateVolume, or the same item twice, never makes a second disk.
 */
import { Annotations, type PersistentVolumeClaimItem } from '../contract/index.js';
import type { Disk, Ec2Error } from '../ec2/types.js';
import type { Scope } from './context.js';
import { converge } from './converge.js';
import { deleting } from './disk-state.js';
import { EventReasons, pvcEvent } from './events.js';
import { Requeue } from './outcomes.js';
import { act, done, failed, requeue, type Ec2Action, type Plan, type Settled, type Verdict } from './plan.js';
import { prepareProvision, provisioningFailed, type ProvisionJob } from './provision-job.js';
import { buildPersistentVolume } from './pv-builder.js';
import { createPersistentVolume, removePvcAnnotation } from './writes.js';

type ProvisionAction = Extract<Ec2Action, { verb: 'createDisk' | 'deleteDisk' }>;

/** What the cloud says about the claim's disk: the volume tagged with its name, if any. */
export interface ProvisionObserved {
  disk: Disk | undefined;
}

type Names = { provisionerName: string; driverName: string };

/** Pure: the next step for a claim's disk. */
export function decideProvision(job: ProvisionJob, { disk }: ProvisionObserved, names: Names): Plan<ProvisionAction> {
  const { pvc } = job;
  if (!disk) {
    const message = `External provisioner is provisioning volume for claim ${pvc.metadata.namespace}/${pvc.metadata.name}`;
    return act({ verb: 'createDisk', request: job.request }, [pvcEvent(pvc, 'Normal', EventReasons.provisioning, message)]);
  }
  switch (disk.state) {
    case 'creating':
      return requeue(Requeue.creating, `volume ${disk.volumeId} is being created`);
    case 'available':
    case 'in-use': {
      const pv = buildPersistentVolume({ ...names, pvName: job.pvName, pvc, storageClass: job.storageClass, className: job.className, disk, spec: job.spec });
      return done([
        createPersistentVolume(pv),
        pvcEvent(pvc, 'Normal', EventReasons.provisioningSucceeded, `Successfully provisioned volume ${job.pvName}`),
      ]);
    }
    case 'error':
      // A volume that failed to create (a KMS key it may not use, say) is ours and useless:
      // delete it, so that a later attempt can create a good one.
      return act({ verb: 'deleteDisk', volumeId: disk.volumeId });
    case 'deleting':
    case 'deleted': {
      const message = `volume ${disk.volumeId} of this claim is ${disk.state} (it failed to create, e.g. for a KMS key it may not use); a new one is created once it is gone`;
      return failed('VolumeCreationFailed', message, Requeue.failed, [provisioningFailed(pvc, job.className, message)]);
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
  const prepared = prepareProvision(item, scope);
  if (!('job' in prepared)) return prepared;
  const { job } = prepared;
  return converge<ProvisionObserved, ProvisionAction>({
    observe: async () => ({ disk: await scope.ec2.findDiskByName(job.pvName) }),
    decide: (observed) => decideProvision(job, observed, scope),
    perform: async (action, observed) => {
      if (action.verb === 'createDisk') return { disk: await scope.ec2.createDisk(action.request) };
      await scope.ec2.deleteDisk(action.volumeId);
      return { disk: deleting(observed.disk) };
    },
    refused: (action, error, verdict) => refusedProvision(job, action, error, verdict),
  });
}
