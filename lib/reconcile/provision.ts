/**
 * Provisioning a claim: protect the claim with volhook's finalizer (write before act), find
 * the claim's disk by its name tag, create it if there is none, wait for it to be
 * `available`, then write its PV and drop the protection. The disk is found again on every
 * retry, so a request lost after CreateVolume, or the same item twice, never makes a second
 * disk; and a claim deleted meanwhile stays visible until its disk is dealt with.
 */
import {
  Annotations,
  claimProvisioner,
  claimReleasesDisk,
  claimTagsUnrecorded,
  claimWantsVolumeChange,
  Finalizers,
  isClaimFor,
  isProtectedClaim,
  pvNameForClaim,
  TagKeys,
  type PersistentVolumeClaimItem,
  type Write,
} from '../contract/index.js';
import { isGone, type Disk, type Ec2Error, type Snapshot } from '../ec2/types.js';
import { describeIopsAdjustment } from '../storageclass/index.js';
import { reconcileClaimRelease } from './claim-deleted.js';
import type { Scope } from './context.js';
import { converge } from './converge.js';
import type { VolumeSource } from './data-source.js';
import { deleting } from './disk-state.js';
import { reconcileClaimTags } from './claim-tags.js';
import { reconcileModify } from './modify.js';
import { EventReasons, pvcEvent } from './events.js';
import { staleRequest } from './freshness.js';
import { Requeue } from './outcomes.js';
import { act, done, failed, requeue, type Ec2Action, type Plan, type Settled, type Verdict } from './plan.js';
import { diskHasAttributes, prepareProvision, provisioningFailed, provisioningRefused, provisioningStarted, type ProvisionJob } from './provision-job.js';
import { creatingWait } from './timing.js';
import { buildPersistentVolume } from './pv-builder.js';
import { isOwnedSnapshot, snapshotNotAdoptedProblem } from './snapshot-content.js';
import { isOwnedDisk, notAdoptedProblem, notOwnedWhy } from './tags.js';
import { addFinalizer, createPersistentVolume, pvcRef, removeFinalizer, removePvcAnnotation } from './writes.js';
import { claimHoldsSource, protectSource, releaseSource, sourceProtectionOf } from './source-protection.js';

type ProvisionAction = Extract<Ec2Action, { verb: 'createDisk' | 'deleteDisk' | 'copyDisk' }>;

/** What the cloud says about the claim's disk: the volume tagged with its name, if any. */
export interface ProvisionObserved {
  disk: Disk | undefined;
  /** A restore with no live disk yet: the snapshot in EC2; null when EC2 has no such snapshot. */
  snapshot?: Snapshot | null;
  /** A clone with no live disk yet: the source volume in EC2; null when EC2 has no such volume. */
  sourceDisk?: Disk | null;
  /** This request deleted the claim's failed volume: its replacement waits for the next one. */
  deletedFailed?: boolean;
  /** When it was observed: a volume `creating` is looked at again when EC2 should be done. */
  now?: Date;
}

type Names = { provisionerName: string; driverName: string; clusterId: string; ec2TimeScale?: number };

/**
 * The one action that makes the claim's volume: CopyVolumes for a clone, CreateVolume
 * (with the snapshot for a restore) otherwise — never a blank volume for a claim with a source.
 */
function makeVolume(job: ProvisionJob): ProvisionAction {
  return job.copy ? { verb: 'copyDisk', request: job.copy } : { verb: 'createDisk', request: job.request };
}

/**
 * Pure: what the volume is made from as EC2 has it — a restore's snapshot, a clone's source
 * volume — checked before the volume is made; undefined when it will do (or there is none).
 */
export function checkSource(job: ProvisionJob, { snapshot, sourceDisk }: Pick<ProvisionObserved, 'snapshot' | 'sourceDisk'>, clusterId: string): Settled | undefined {
  switch (job.source?.kind) {
    case 'snapshot':
      return checkSnapshot(job, job.source, snapshot, clusterId);
    case 'clone':
      return checkSourceDisk(job, job.source, sourceDisk, clusterId);
    case undefined:
      return undefined;
  }
}

function refuseSource(job: ProvisionJob, reason: string, message: string): Settled {
  return failed(reason, message, Requeue.failed, provisioningRefused(job.pvc, job.className, message));
}

function checkSnapshot(job: ProvisionJob, source: Extract<VolumeSource, { kind: 'snapshot' }>, snapshot: Snapshot | null | undefined, clusterId: string): Settled | undefined {
  const { snapshotId, what } = source;
  const refuse = (reason: string, message: string) => refuseSource(job, reason, message);
  if (!snapshot) return refuse('SnapshotNotFound', `snapshot ${snapshotId} of ${what} does not exist in EC2`);
  if (!isOwnedSnapshot(snapshot, clusterId)) {
    return refuse('SnapshotNotOwned', `snapshot ${snapshotId} of ${what} is not owned by cluster "${clusterId}"; volhook restores only its cluster's snapshots`);
  }
  const unadopted = snapshotNotAdoptedProblem(snapshot, clusterId, `restore claim ${job.pvc.metadata.namespace}/${job.pvc.metadata.name} from it`);
  if (unadopted) return refuse('NotAdopted', unadopted);
  if (snapshot.state !== 'completed') {
    const message = `snapshot ${snapshotId} of ${what} is ${snapshot.state}, not completed yet`;
    return requeue(Requeue.snapshotPending, message, [pvcEvent(job.pvc, 'Normal', EventReasons.snapshotNotReady, message)]);
  }
  // The size is the larger of the request and the snapshot's, as external-provisioner asks:
  // a request smaller than the snapshot is refused, never silently grown.
  if (snapshot.sizeGiB > job.request.sizeGiB) {
    return refuse('SnapshotTooLarge', `requested volume size ${job.request.sizeGiB}Gi is less than the size ${snapshot.sizeGiB}Gi of snapshot ${snapshotId} (${what})`);
  }
  return undefined;
}

/**
 * A clone copies the source into a disk the cluster owns, so the source must be the cluster's
 * own, adopted disk: a static PV can name any volume of the account, another cluster's too.
 */
function checkSourceDisk(job: ProvisionJob, source: Extract<VolumeSource, { kind: 'clone' }>, sourceDisk: Disk | null | undefined, clusterId: string): Settled | undefined {
  const { sourceVolumeId, what } = source;
  if (!sourceDisk || isGone(sourceDisk)) return refuseSource(job, 'SourceNotFound', `volume ${sourceVolumeId} of the source claim ${what} does not exist in EC2`);
  if (!isOwnedDisk(sourceDisk, clusterId)) {
    return refuseSource(
      job,
      'SourceNotOwned',
      `volume ${sourceVolumeId} of the source claim ${what} is not owned by cluster "${clusterId}" (${notOwnedWhy(sourceDisk.tags, clusterId)}); volhook clones only its cluster's disks`,
    );
  }
  const unadopted = notAdoptedProblem(sourceDisk, clusterId, `clone it for claim ${job.pvc.metadata.namespace}/${job.pvc.metadata.name}`);
  if (unadopted) return refuseSource(job, 'SourceNotOwned', `the source claim ${what}: ${unadopted}`);
  return undefined;
}

/**
 * A live disk found by the claim's name that volhook may not act on — another cluster's by its
 * `volhook.io/cluster`, or one that needs adopting (made before volumes carried that tag) —
 * refused: never taken for the claim's, and, found, never made a second time either.
 */
function refuseFound(job: ProvisionJob, disk: Disk, clusterId: string): Settled | undefined {
  const { pvc } = job;
  const claim = `${pvc.metadata.namespace}/${pvc.metadata.name}`;
  if (!isOwnedDisk(disk, clusterId)) {
    const message = `volume ${disk.volumeId} tagged ${TagKeys.csiVolumeName}=${job.pvName} is not owned by cluster "${clusterId}" (${notOwnedWhy(disk.tags, clusterId)}); not provisioning claim ${claim} with it, nor creating another`;
    return failed('NotOwned', message, Requeue.failedSlow, provisioningRefused(pvc, job.className, message));
  }
  const act = disk.state === 'error' ? 'delete it (it failed to create, state error)' : `provision claim ${claim} with it`;
  const unadopted = notAdoptedProblem(disk, clusterId, act);
  return unadopted ? failed('NotAdopted', unadopted, Requeue.failedSlow, provisioningRefused(pvc, job.className, unadopted)) : undefined;
}

/** Pure: the next step for a claim's disk. */
export function decideProvision(job: ProvisionJob, { disk, deletedFailed, snapshot, sourceDisk, now }: ProvisionObserved, names: Names): Plan<ProvisionAction> {
  const { pvc } = job;
  if (!disk) {
    const refused = checkSource(job, { snapshot, sourceDisk }, names.clusterId);
    if (refused) return refused;
    return act(makeVolume(job), [provisioningStarted(pvc)]);
  }
  const notOurs = isGone(disk) ? undefined : refuseFound(job, disk, names.clusterId);
  if (notOurs) return notOurs;
  switch (disk.state) {
    case 'creating':
      return requeue(creatingWait(disk, now, names.ec2TimeScale), `volume ${disk.volumeId} is being created`);
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
        ...(job.volumeAttributes && diskHasAttributes(disk, job.volumeAttributes.attributes) && { volumeAttributesClassName: job.volumeAttributes.className }),
      });
      // The PV is written first: once it exists, its reclaim policy owns the disk and the
      // claim's protection has done its job.
      return done([
        createPersistentVolume(pv),
        // The volume exists: its source is let go, unless another claim may still need it;
        // before the claim's protection, which would end these items.
        ...releaseSource(job.sourceProtection, false),
        removeFinalizer(pvcRef(pvc), Finalizers.claimProtection),
        pvcEvent(pvc, 'Normal', EventReasons.provisioningSucceeded, `Successfully provisioned volume ${job.pvName}`),
        // Nothing adjusted silently: the class asked for IOPS the type does not allow at this size.
        ...(job.spec.iopsAdjustment ? [pvcEvent(pvc, 'Normal', EventReasons.iopsAdjusted, `volume ${job.pvName}: ${describeIopsAdjustment(job.spec.iopsAdjustment)}`)] : []),
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
      return checkSource(job, { snapshot, sourceDisk }, names.clusterId) ?? act(makeVolume(job));
    }
  }
}

/** Pure: what a refused CreateVolume or DeleteVolume means for the claim. */
export function refusedProvision(job: ProvisionJob, action: ProvisionAction, error: Ec2Error, verdict: Verdict): Settled {
  if (verdict.outcome !== 'failed') return { writes: [], verdict };
  const message =
    action.verb !== 'deleteDisk' && error.kind === 'notFound' && job.source
      ? `the source of ${job.source.what} (or the new volume) does not exist: ${verdict.message}`
      : action.verb === 'createDisk' && error.kind === 'notFound'
        ? `the volume vanished right after it was created (e.g. a KMS key it may not use): ${verdict.message}`
        : verdict.message;
  // Out of capacity in the selected node's zone: let the scheduler try a node elsewhere.
  const reschedule = error.kind === 'capacity' && job.waitForFirstConsumer;
  return failed(verdict.reason, message, verdict.requeueAfterSeconds, [
    provisioningFailed(job.pvc, job.className, message),
    ...(reschedule ? [removePvcAnnotation(job.pvc, Annotations.selectedNode)] : []),
  ]);
}

/**
 * Pure: a claim of another provisioner reached the backend — a forwarder whose `provisioner` is
 * not the one the cluster is registered with. Nothing is done nor written on the claim (it is
 * another provisioner's to serve), and the answer says so, slowly retried: never a silent `done`.
 */
export function otherProvisioner(pvc: PersistentVolumeClaimItem['pvc'], scope: Pick<Scope, 'provisionerName' | 'clusterId'>): Settled {
  const theirs = claimProvisioner(pvc) ?? pvc.metadata.annotations?.[Annotations.migratedTo] ?? 'none';
  return failed(
    'OtherProvisioner',
    `claim ${pvc.metadata.namespace}/${pvc.metadata.name} is for provisioner "${theirs}", but cluster "${scope.clusterId}" is registered for "${scope.provisionerName}": nothing done; the forwarder's provisioner (the chart's value) and the registration's must name the same`,
    Requeue.failedSlow,
  );
}

/** `settled` with `writes` applied before its own. */
function after(writes: Write[], settled: Settled): Settled {
  return writes.length ? { ...settled, writes: [...writes, ...settled.writes] } : settled;
}

export async function reconcileProvision(item: PersistentVolumeClaimItem, scope: Scope): Promise<Settled> {
  const { pvc } = item;
  if (!isClaimFor(pvc, scope.provisionerName)) return otherProvisioner(pvc, scope);
  // A claim that will make no volume from its source (any more) lets the source go, unless
  // another claim may still: the #1507 case is a claim deleted before its volume was made.
  const letGo = claimHoldsSource(item) ? [] : releaseSource(sourceProtectionOf(item), false);
  if (claimReleasesDisk(pvc)) return after(letGo, await reconcileClaimRelease(item, scope));
  const isProtected = isProtectedClaim(pvc);
  if (pvc.metadata.deletionTimestamp) return done(letGo);
  if (pvc.spec.volumeName) {
    const wantsChange = claimWantsVolumeChange(pvc, item.pv?.spec.capacity.storage) || claimTagsUnrecorded(pvc);
    // The protection's job is done; it goes first, alone: the claim's status writes of a
    // resize are guarded by the claim's resourceVersion, which this write changes.
    if (isProtected) {
      const drop = [...letGo, removeFinalizer(pvcRef(pvc), Finalizers.claimProtection)];
      return wantsChange ? requeue(Requeue.recorded, 'claim is bound: dropping its provisioning protection before changing its volume', drop) : done(drop);
    }
    if (letGo.length) return wantsChange ? requeue(Requeue.recorded, 'claim is bound: letting its source go before changing its volume', letGo) : done(letGo);
    // Tags asked for by annotations go once the volume is as the claim wants it (./claim-tags.ts).
    if (claimTagsUnrecorded(pvc) && !claimWantsVolumeChange(pvc, item.pv?.spec.capacity.storage)) return reconcileClaimTags(item, scope);
    return reconcileModify(item, scope);
  }
  if (item.pvExists) {
    return done([...letGo, ...(isProtected ? [removeFinalizer(pvcRef(pvc), Finalizers.claimProtection)] : [])]);
  }
  const first = prepareProvision(item, scope);
  // The zone depends on zone IDs: with the Region's zones (cached by the gateway), decide again.
  const prepared = 'needsZones' in first ? prepareProvision(item, scope, await scope.ec2.zones()) : first;
  if (!('job' in prepared)) return after(letGo, prepared);
  const { job } = prepared;
  if (!isProtected) {
    // Write before act: no CreateVolume until the claim cannot vanish unseen. Its source's
    // protection comes after (next): the claim's own keeps it visible until the source is let go.
    return requeue(Requeue.recorded, `protecting claim ${pvc.metadata.namespace}/${pvc.metadata.name} before creating its volume ${pvNameForClaim(pvc.metadata.uid)}`, [
      ...letGo,
      addFinalizer(pvcRef(pvc), Finalizers.claimProtection),
    ]);
  }
  const protectWrites = protectSource(job.sourceProtection);
  if (protectWrites.length) {
    // Write before act: the source cannot go while its volume is being made.
    return requeue(Requeue.recorded, `protecting ${job.source?.what ?? 'the source'} before making volume ${job.pvName} from it`, protectWrites);
  }
  // The claim may have been deleted since this item was built: a late create could leak.
  const stale = staleRequest(scope, 'a volume is created');
  if (stale) return stale;
  return converge<ProvisionObserved, ProvisionAction>({
    observe: async () => {
      const disk = await scope.ec2.findDiskByName(job.pvName);
      // The source is read live before the volume is made from it, every time it is made.
      if ((disk && !isGone(disk)) || !job.source) return { disk, now: scope.now() };
      if (job.source.kind === 'snapshot') return { disk, snapshot: (await scope.ec2.getSnapshot(job.source.snapshotId)) ?? null, now: scope.now() };
      return { disk, sourceDisk: (await scope.ec2.getDisk(job.source.sourceVolumeId)) ?? null, now: scope.now() };
    },
    decide: (observed) => decideProvision(job, observed, scope),
    perform: async (action, observed) => {
      // The reconciler just looked the name up in this request: the gateway need not again.
      // The source as read stays what the next decision checks, should EC2 answer a dead volume.
      if (action.verb === 'createDisk') return { ...observed, disk: await scope.ec2.createDisk(action.request, { found: observed.disk }), now: scope.now() };
      if (action.verb === 'copyDisk') return { ...observed, disk: await scope.ec2.copyDisk(action.request), now: scope.now() };
      await scope.ec2.deleteDisk(action.volumeId);
      return { disk: deleting(observed.disk), deletedFailed: true, now: scope.now() };
    },
    refused: (action, error, verdict) => refusedProvision(job, action, error, verdict),
  });
}
