/**
 * Growing a bound claim's volume and moving it to another VolumeAttributesClass — the roles
 * of external-resizer's resize and modify controllers and of the EBS CSI driver's
 * ControllerExpandVolume / ControllerModifyVolume — in one level-triggered reconcile.
 *
 * EC2 is the truth: the volume's size and performance and its latest modification
 * (DescribeVolumesModifications) are read before anything is decided, so a change EC2 already
 * has or is making is never asked for again — a replayed request, or one whose ModifyVolume
 * answer was lost, converges with exactly one modification. Everything the claim wants in
 * size, type, IOPS and throughput goes in one ModifyVolume; tags go with CreateTags /
 * DeleteTags. EC2 starts a modification only once the last is `completed` (or `failed`), and
 * at most four in a rolling 24 hours: a change that comes while one is under way waits for it;
 * a fifth is refused by EC2, whose message (it names when the next may start) is recorded on
 * the claim (status and Event), and the claim is looked at again then, with one call for the
 * whole desired state.
 *
 * One reconcile per volume at a time in a process (in-flight.ts): EC2 refuses a second
 * ModifyVolume while one is under way, but not a second CreateTags, and two copies of a
 * claim's item arriving together would each find the class's tags missing and each send them.
 * Across processes such a second CreateTags writes the same tags again: nothing is made twice.
 */
import type { PersistentVolumeClaimItem, Write } from '../contract/index.js';
import { isGone, isModificationUnderWay, type Disk, type DiskChange, type DiskModification, type Ec2Error } from '../ec2/types.js';
import { capIops, DRIVER_TAG_KEYS, infeasibility, isVolumeType, VOLUME_TYPE_LIMITS } from '../storageclass/index.js';
import { volumeNameOf } from './attachment.js';
import { claimStatusWrites, type ModifyPhase, type ResizePhase } from './claim-status.js';
import type { Scope } from './context.js';
import { converge } from './converge.js';
import { EventReasons, pvcEvent } from './events.js';
import { exclusively } from './in-flight.js';
import { gibOf, prepareModify, type ModifyJob } from './modify-job.js';
import { Requeue } from './outcomes.js';
import { act, done, failed, requeue, type Ec2Action, type Plan, type Settled, type Verdict } from './plan.js';
import { isOwnedDisk, notAdoptedProblem, notOwnedWhy } from './tags.js';

type ModifyAction = Extract<Ec2Action, { verb: 'modifyDisk' | 'tagDisk' | 'untagDisk' }>;

export interface ModifyObserved {
  disk: Disk | undefined;
  modification: DiskModification | undefined;
  /** This request sent ModifyVolume: the claim is looked at again once EC2 has moved on. */
  modified?: boolean;
}

export interface ModifyContext {
  clusterId: string;
  now: Date;
}

/** Pure: the next step for a bound claim's volume. */
export function decideModify(job: ModifyJob, observed: ModifyObserved, ctx: ModifyContext): Plan<ModifyAction> {
  const { pvc } = job;
  const { disk, modification } = observed;
  const modifyTarget = job.modify?.className;
  const status = (resize: ResizePhase, modify: ModifyPhase) => claimStatusWrites(pvc, resize, modify, ctx.now);
  const events = (type: 'Normal' | 'Warning', resizeReason: string, modifyReason: string, message: string): Write[] => [
    ...(job.resize ? [pvcEvent(pvc, type, resizeReason, message)] : []),
    ...(job.modify ? [pvcEvent(pvc, type, modifyReason, message)] : []),
  ];

  if (observed.modified) {
    return requeue(Requeue.modifying, `ModifyVolume of ${job.volumeId} sent (${modification?.state ?? 'modifying'}); waiting for EC2 to apply it`);
  }
  if (!disk || isGone(disk)) {
    const message = `EBS volume ${job.volumeId} of PersistentVolume ${job.pv.metadata.name} does not exist`;
    return failed('VolumeNotFound', message, Requeue.failed, events('Warning', EventReasons.volumeResizeFailed, EventReasons.volumeModifyFailed, message));
  }
  if (!isOwnedDisk(disk, ctx.clusterId)) {
    const message = `EBS volume ${job.volumeId} is not owned by cluster "${ctx.clusterId}" (${notOwnedWhy(disk.tags, ctx.clusterId)}): this cluster may not modify it`;
    return failed('NotOwned', message, Requeue.failedSlow, events('Warning', EventReasons.volumeResizeFailed, EventReasons.volumeModifyFailed, message));
  }
  // What is left to write once EC2 has the change needs no adoption; any EC2 call does.
  const unadopted = notAdoptedProblem(disk, ctx.clusterId, job.resize ? 'resize it' : 'change its VolumeAttributesClass');
  const mutate = (action: ModifyAction, writes: Write[] = []): Plan<ModifyAction> =>
    unadopted
      ? failed('NotAdopted', unadopted, Requeue.failedSlow, events('Warning', EventReasons.volumeResizeFailed, EventReasons.volumeModifyFailed, unadopted))
      : act(action, writes);

  const target = desiredPerformance(job, disk);
  const problem = infeasibility({
    type: target.type,
    sizeGiB: target.sizeGiB,
    ...(target.iops !== undefined && { iops: target.iops }),
    ...(target.throughput !== undefined && { throughput: target.throughput }),
  });
  const change = changeFor(target, disk);
  if (problem && Object.keys(change).length > 0) {
    const message = `cannot modify volume ${job.volumeId} to ${describeChange(change)}: ${problem}`;
    return failed('Infeasible', message, Requeue.failedSlow, [
      ...status(
        job.resize ? { kind: 'infeasible', allocated: job.resize.allocated, message } : { kind: 'none' },
        modifyTarget ? { kind: 'infeasible', target: modifyTarget, reason: 'InvalidArgument', message } : { kind: 'none' },
      ),
      ...events('Warning', EventReasons.volumeResizeFailed, EventReasons.volumeModifyFailed, message),
    ]);
  }

  const inProgress = (): Write[] =>
    status(
      job.resize ? { kind: 'inProgress', allocated: job.resize.allocated } : { kind: 'none' },
      modifyTarget ? { kind: 'inProgress', target: modifyTarget } : { kind: 'none' },
    );

  if (modification?.state === 'modifying') {
    return requeue(Requeue.modifying, `volume ${job.volumeId} is being modified (modifying)`, inProgress());
  }

  if (Object.keys(change).length > 0) {
    // `optimizing`: the last change is usable, but EC2 starts no other until it is completed.
    if (modification && isModificationUnderWay(modification.state)) {
      return requeue(
        Requeue.optimizing,
        `volume ${job.volumeId} is still optimizing its last modification; ${describeChange(change)} waits until it is completed`,
        inProgress(),
      );
    }
    const started: Write[] = [
      ...inProgress(),
      ...(job.resize ? [pvcEvent(pvc, 'Normal', EventReasons.resizing, `External resizer is resizing volume ${job.pv.metadata.name}`)] : []),
      ...(job.modify ? [pvcEvent(pvc, 'Normal', EventReasons.volumeModify, `external resizer is modifying volume ${pvc.metadata.name} with vac ${job.modify.className}`)] : []),
    ];
    return mutate({ verb: 'modifyDisk', volumeId: job.volumeId, change }, started);
  }

  // Size and performance are there: tags, then what the claim and the PV should say.
  if (job.modify) {
    const add = Object.fromEntries(Object.entries(job.modify.attributes.tagsToAdd).filter(([key, value]) => disk.tags[key] !== value));
    if (Object.keys(add).length > 0) return mutate({ verb: 'tagDisk', volumeId: job.volumeId, tags: add });
    const remove = job.modify.attributes.tagsToDelete.filter((key) => key in disk.tags);
    if (remove.length > 0) return mutate({ verb: 'untagDisk', volumeId: job.volumeId, keys: remove });
  }
  return completed(job, disk, ctx);
}

/** What the claim wants the volume to be: at least its size, and the class's performance. */
function desiredPerformance(job: ModifyJob, disk: Disk): { sizeGiB: number; type: string; iops?: number; throughput?: number } {
  const attributes = job.modify?.attributes;
  const sizeGiB = Math.max(disk.sizeGiB, job.resize?.sizeGiB ?? 0);
  const type = attributes?.type ?? disk.type;
  const sameType = type === disk.type;
  let iops = attributes?.iops ?? (sameType ? disk.iops : undefined);
  // The driver's allowAutoIOPSIncreaseOnModify: a resize keeps IOPS per GiB (its tags say so).
  if (attributes?.iops === undefined && sizeGiB > disk.sizeGiB && disk.tags[DRIVER_TAG_KEYS.allowAutoIOPSIncreaseOnModify] === 'true') {
    const perGiB = Number(disk.tags[DRIVER_TAG_KEYS.iopsPerGB] ?? 0);
    const limits = isVolumeType(type) ? VOLUME_TYPE_LIMITS[type].iops : undefined;
    if (perGiB > 0 && limits) iops = capIops(perGiB * sizeGiB, sizeGiB, limits, true) ?? iops;
  }
  const throughput = attributes?.throughput ?? (sameType ? disk.throughput : undefined);
  return { sizeGiB, type, ...(iops !== undefined && { iops }), ...(throughput !== undefined && { throughput }) };
}

/** The fields of ModifyVolume that move the disk to `target`: only those that differ. */
function changeFor(target: ReturnType<typeof desiredPerformance>, disk: Disk): DiskChange {
  return {
    ...(target.sizeGiB > disk.sizeGiB && { sizeGiB: target.sizeGiB }),
    ...(target.type !== disk.type && { type: target.type }),
    ...(target.iops !== undefined && target.iops !== disk.iops && { iops: target.iops }),
    ...(target.throughput !== undefined && target.throughput !== disk.throughput && { throughput: target.throughput }),
  };
}

function describeChange(change: DiskChange): string {
  const parts = [
    change.sizeGiB !== undefined && `${change.sizeGiB} GiB`,
    change.type !== undefined && `type ${change.type}`,
    change.iops !== undefined && `${change.iops} IOPS`,
    change.throughput !== undefined && `${change.throughput} MiB/s`,
  ].filter(Boolean);
  return parts.join(', ');
}

/**
 * EC2 refused a fifth modification in its rolling 24 hours: its words on the claim (status and
 * a Warning; they name when the next may start and stay the same until then, so repeated
 * Events aggregate), and the claim looked at again at that time.
 */
function rateLimited(job: ModifyJob, change: DiskChange, error: Ec2Error, ctx: ModifyContext): Settled {
  const { pvc } = job;
  const seconds = error.retryAt ? Math.max(1, Math.ceil((error.retryAt.getTime() - ctx.now.getTime()) / 1000)) : Requeue.failedSlow;
  const message = `ModifyVolume of ${job.volumeId} to ${describeChange(change)} refused: ${error.message}`;
  return requeue(seconds, message, [
    ...claimStatusWrites(
      pvc,
      job.resize ? { kind: 'waiting', allocated: job.resize.allocated, message } : { kind: 'none' },
      job.modify ? { kind: 'waiting', target: job.modify.className, reason: 'VolumeModificationRateExceeded', message } : { kind: 'none' },
      ctx.now,
    ),
    ...(job.resize ? [pvcEvent(pvc, 'Warning', EventReasons.volumeResizeFailed, message)] : []),
    ...(job.modify ? [pvcEvent(pvc, 'Warning', EventReasons.volumeModifyFailed, message)] : []),
  ]);
}

/** The volume is as the claim wants it: record it on the PV and the claim, as external-resizer does. */
function completed(job: ModifyJob, disk: Disk, ctx: ModifyContext): Settled {
  const { pvc, pv } = job;
  const capacity = `${disk.sizeGiB}Gi`;
  const grew = (gibOf(pv.spec.capacity.storage) ?? 0) < disk.sizeGiB;
  const resized = job.resize !== undefined || job.resizeRecorded === true;
  const pvPatch: Write[] =
    grew || (job.modify && pv.spec.volumeAttributesClassName !== job.modify.className)
      ? [
          {
            op: 'patchPersistentVolume',
            name: pv.metadata.name,
            uid: pv.metadata.uid,
            ...(grew && { capacity }),
            ...(job.modify && { volumeAttributesClassName: job.modify.className }),
          },
        ]
      : [];
  let resize: ResizePhase = { kind: 'none' };
  const writes: Write[] = [];
  if (resized) {
    // A Block volume needs nothing from the node (the driver's ControllerExpandVolume says
    // NodeExpansionRequired only with a filesystem); a filesystem is grown by the node plugin.
    resize = job.volumeMode === 'Block' ? { kind: 'finished', capacity } : { kind: 'nodePending' };
    writes.push(
      job.volumeMode === 'Block'
        ? pvcEvent(pvc, 'Normal', EventReasons.volumeResizeSuccessful, 'Resize volume succeeded')
        : pvcEvent(pvc, 'Normal', EventReasons.fileSystemResizeRequired, 'Require file system resize of volume on node'),
    );
  }
  const modify: ModifyPhase = job.modify ? { kind: 'completed', target: job.modify.className } : { kind: 'none' };
  if (job.modify) {
    writes.push(
      pvcEvent(pvc, 'Normal', EventReasons.volumeModifySuccessful, `external resizer modified volume ${pvc.metadata.name} with vac ${job.modify.className} successfully`),
    );
  }
  // The Events before the claim's status: once the status says NodeResizePending, the node
  // may finish at once, and its Event must not come before ours.
  return done([...pvPatch, ...writes, ...claimStatusWrites(pvc, resize, modify, ctx.now)]);
}

/** Pure: what EC2 refusing ModifyVolume, CreateTags or DeleteTags means for the claim. */
export function refusedModify(job: ModifyJob, action: ModifyAction, error: Ec2Error, verdict: Verdict, observed: ModifyObserved, ctx: ModifyContext): Settled {
  if (error.kind === 'modificationRate' && action.verb === 'modifyDisk') return rateLimited(job, action.change, error, ctx);
  if (verdict.outcome !== 'failed') return { writes: [], verdict };
  const { pvc } = job;
  const message = `${action.verb === 'modifyDisk' ? 'ModifyVolume' : action.verb === 'tagDisk' ? 'CreateTags' : 'DeleteTags'} of ${job.volumeId} refused: ${verdict.message}`;
  const infeasible = error.kind === 'invalidParameter';
  const writes: Write[] = [
    ...(infeasible
      ? claimStatusWrites(
          pvc,
          job.resize ? { kind: 'infeasible', allocated: job.resize.allocated, message } : { kind: 'none' },
          job.modify ? { kind: 'infeasible', target: job.modify.className, reason: 'InvalidArgument', message } : { kind: 'none' },
          ctx.now,
        )
      : []),
    ...(job.resize ? [pvcEvent(pvc, 'Warning', EventReasons.volumeResizeFailed, message)] : []),
    ...(job.modify ? [pvcEvent(pvc, 'Warning', EventReasons.volumeModifyFailed, message)] : []),
  ];
  return failed(verdict.reason, message, verdict.requeueAfterSeconds, writes);
}

/** Changes a bound claim's volume as it asks. `writes` are decided before this and kept. */
export async function reconcileModify(item: PersistentVolumeClaimItem, scope: Scope, writes: Write[] = []): Promise<Settled> {
  const prepared = prepareModify(item, scope);
  if (!('job' in prepared)) return { writes: [...writes, ...prepared.writes], verdict: prepared.verdict };
  const { job } = prepared;
  const ctx = (): ModifyContext => ({ clusterId: scope.clusterId, now: scope.now() });
  const busy = () => requeue(Requeue.inTransition, `volume ${job.volumeId} is being reconciled by another request; looking again shortly`, writes);
  return exclusively(`${scope.clusterId}/modify/${job.volumeId}`, () => converge<ModifyObserved, ModifyAction>(
    {
      observe: async () => {
        const [disk, modification] = await Promise.all([scope.ec2.getDisk(job.volumeId, volumeNameOf(job.pv, scope.provisionerName)), scope.ec2.getModification(job.volumeId)]);
        return { disk, modification };
      },
      decide: (observed) => decideModify(job, observed, ctx()),
      perform: async (action, observed) => {
        switch (action.verb) {
          case 'modifyDisk':
            return { ...observed, modification: await scope.ec2.modifyDisk(action.volumeId, action.change), modified: true };
          case 'tagDisk': {
            await scope.ec2.tagDisk(action.volumeId, action.tags);
            const disk = observed.disk && { ...observed.disk, tags: { ...observed.disk.tags, ...action.tags } };
            return { ...observed, disk };
          }
          case 'untagDisk': {
            await scope.ec2.untagDisk(action.volumeId, action.keys);
            const disk = observed.disk && { ...observed.disk, tags: Object.fromEntries(Object.entries(observed.disk.tags).filter(([key]) => !action.keys.includes(key))) };
            return { ...observed, disk };
          }
        }
      },
      refused: (action, error, verdict, observed) => refusedModify(job, action, error, verdict, observed, ctx()),
    },
    writes,
  ), busy);
}
