/**
 * Volume tags from the claim's annotations (`tag.volhook.io/<key>: <value>`): only the keys the
 * cluster's registration lists in `claimTagKeys` become tags, at CreateVolume and, for a bound
 * claim whose annotations change, with CreateTags. Anything else the claim asks for is not
 * applied and a Warning Event says which key and why: off the list, reserved, set by the
 * StorageClass or the registration (those win: they are the administrator's), or a value EC2
 * would refuse. Once the volume has the tags, the claim's `volhook.io/claim-tags` records the
 * request handled, and the claim is not sent again until its request changes.
 *
 * A tag whose annotation is removed stays on the volume: the record says what was asked, not
 * what volhook owns, and a key the administrator or an earlier class also set would be lost.
 */
import {
  claimTagRequests,
  claimTagsRecord,
  isOurVolume,
  isReservedTagKey,
  MAX_TAG_VALUE_LENGTH,
  RESERVED_TAG_KEYS_TEXT,
  TAG_ANNOTATION_NOTE,
  VolhookAnnotations,
  type Ownership,
  type PersistentVolumeClaim,
  type PersistentVolumeClaimItem,
  type StorageClass,
  type Write,
} from '../contract/index.js';
import { volumeHandleOf } from './attachment.js';
import { isGone, type Disk, type Ec2Error } from '../ec2/types.js';
import { TAG_SPECIFICATION_PREFIX } from '../storageclass/parameters.js';
import type { Scope } from './context.js';
import { converge } from './converge.js';
import { pvcEvent } from './events.js';
import { exclusively } from './in-flight.js';
import { Requeue } from './outcomes.js';
import { act, done, failed, requeue, type Ec2Action, type Plan, type Settled, type Verdict } from './plan.js';
import { isOwnedDisk, notAdoptedProblem, notOwnedWhy } from './tags.js';
import { ensureAnnotation, pvcRef } from './writes.js';

export const ClaimTagReasons = {
  /** A Warning: tags the claim asked for that were not applied, each with why. */
  ignored: 'ClaimTagsIgnored',
  /** Normal: the volume was tagged as the claim asks. */
  tagged: 'ClaimTagsApplied',
  /** Warning: the volume could not be tagged (not ours, not adopted, EC2 or IAM refused). */
  failed: 'ClaimTagsFailed',
} as const;

export interface ClaimTagsSorted {
  /** The tags to set: asked for, allowed, not configured elsewhere. */
  tags: Record<string, string>;
  /** What is not applied, and why, in key order. */
  ignored: { key: string; why: string }[];
}

/**
 * Pure: which of the claim's requested tags apply. `allowed` is the registration's
 * `claimTagKeys`; `configuredKeys` the keys the StorageClass and the registration's `extraTags`
 * set, which a claim may not override.
 */
export function sortClaimTags(requests: Record<string, string>, allowed: readonly string[], configuredKeys: ReadonlySet<string>): ClaimTagsSorted {
  const tags: Record<string, string> = {};
  const ignored: ClaimTagsSorted['ignored'] = [];
  const allowedSet = new Set(allowed);
  for (const [key, value] of Object.entries(requests)) {
    if (isReservedTagKey(key)) ignored.push({ key, why: `reserved (${RESERVED_TAG_KEYS_TEXT})` });
    else if (!allowedSet.has(key)) ignored.push({ key, why: "not on the cluster's claimTagKeys" });
    else if (configuredKeys.has(key)) ignored.push({ key, why: "set by the StorageClass or the cluster's extraTags, which win" });
    else if ([...value].length > MAX_TAG_VALUE_LENGTH) ignored.push({ key, why: `value longer than EC2's ${MAX_TAG_VALUE_LENGTH} characters` });
    else tags[key] = value;
  }
  return { tags, ignored };
}

/** The tag keys a class's `tagSpecification*` entries set (the key is literal; only values are templates). */
export function classTagKeys(storageClass: StorageClass | null | undefined): Set<string> {
  const keys = new Set<string>();
  for (const [key, value] of Object.entries(storageClass?.parameters ?? {})) {
    if (!key.startsWith(TAG_SPECIFICATION_PREFIX)) continue;
    const separator = value.indexOf('=');
    if (separator > 0) keys.add(value.slice(0, separator));
  }
  return keys;
}

/** The Warning that names each requested tag not applied; none when all were. */
export function ignoredTagsEvent(pvc: PersistentVolumeClaim, ignored: ClaimTagsSorted['ignored']): Write[] {
  if (ignored.length === 0) return [];
  const list = ignored.map(({ key, why }) => `"${key}" (${why})`).join('; ');
  return [pvcEvent(pvc, 'Warning', ClaimTagReasons.ignored, `${TAG_ANNOTATION_NOTE} not applied to the volume: ${list}`)];
}

/** The tags of a new volume from the claim, with the keys the class and registration set. */
export function claimTagsForNewVolume(pvc: PersistentVolumeClaim, allowed: readonly string[], configured: Record<string, string>): Record<string, string> {
  return sortClaimTags(claimTagRequests(pvc), allowed, new Set(Object.keys(configured))).tags;
}

type TagAction = Extract<Ec2Action, { verb: 'tagDisk' }>;

export interface ClaimTagsJob {
  pvc: PersistentVolumeClaim;
  volumeId: string;
  sorted: ClaimTagsSorted;
  record: string;
}

/** Pure: from the volume as EC2 has it, the CreateTags still needed, or the record and Events. */
export function decideClaimTags(job: ClaimTagsJob, disk: Disk | undefined, clusterId: string, tagged: boolean): Plan<TagAction> {
  const { pvc, volumeId } = job;
  const fail = (reason: string, message: string) => failed(reason, message, Requeue.failedSlow, [pvcEvent(pvc, 'Warning', ClaimTagReasons.failed, message)]);
  if (!disk || isGone(disk)) return fail('VolumeNotFound', `EBS volume ${volumeId} of the claim does not exist: its tags cannot be set`);
  if (!isOwnedDisk(disk, clusterId)) {
    return fail('NotOwned', `EBS volume ${volumeId} is not owned by cluster "${clusterId}" (${notOwnedWhy(disk.tags, clusterId)}): its tags are not changed`);
  }
  const missing = Object.fromEntries(Object.entries(job.sorted.tags).filter(([key, value]) => disk.tags[key] !== value));
  if (Object.keys(missing).length > 0) {
    const unadopted = notAdoptedProblem(disk, clusterId, 'tag it');
    if (unadopted) return fail('NotAdopted', unadopted);
    return act({ verb: 'tagDisk', volumeId, tags: missing });
  }
  const applied = Object.entries(job.sorted.tags).map(([key, value]) => `${key}=${value}`);
  return done([
    ...(tagged ? [pvcEvent(pvc, 'Normal', ClaimTagReasons.tagged, `tagged volume ${volumeId} with ${applied.join(', ')}`)] : []),
    ...ignoredTagsEvent(pvc, job.sorted.ignored),
    ...ensureAnnotation(pvc, pvcRef(pvc), VolhookAnnotations.claimTags, job.record),
  ]);
}

/** Pure: EC2 (or IAM) refusing CreateTags: a Warning on the claim; no record, so it is tried again. */
export function refusedClaimTags(job: ClaimTagsJob, verdict: Verdict): Settled {
  if (verdict.outcome !== 'failed') return { writes: [], verdict };
  const message = `CreateTags of ${job.volumeId} refused: ${verdict.message}`;
  return failed(verdict.reason, message, verdict.requeueAfterSeconds, [pvcEvent(job.pvc, 'Warning', ClaimTagReasons.failed, message)]);
}


/** Pure: the job for a bound claim whose tag request is unrecorded, or the end of it. */
export function prepareClaimTags(item: PersistentVolumeClaimItem, scope: Pick<Scope, 'registration' | 'driverName' | 'provisionerName'>): Settled | { job: ClaimTagsJob } {
  const { pvc, pv } = item;
  const requests = claimTagRequests(pvc);
  const record = claimTagsRecord(requests);
  if (!pv) return requeue(Requeue.waitForCluster, `PersistentVolume "${pvc.spec.volumeName}" of the claim is not known (yet)`);
  const ownership: Ownership = { provisioner: scope.provisionerName, driver: scope.driverName };
  const volumeId = pv.spec.claimRef?.uid === pvc.metadata.uid && isOurVolume(pv, ownership) ? volumeHandleOf(pv, scope.driverName) : undefined;
  if (!volumeId) {
    const message = `claim is bound to PersistentVolume "${pv.metadata.name}", which is not an EBS volume of ${scope.driverName} bound to this claim: ${TAG_ANNOTATION_NOTE} not applied`;
    return done([pvcEvent(pvc, 'Warning', ClaimTagReasons.ignored, message), ...ensureAnnotation(pvc, pvcRef(pvc), VolhookAnnotations.claimTags, record)]);
  }
  const configured = new Set([...Object.keys(scope.registration.extraTags), ...classTagKeys(item.storageClass)]);
  return { job: { pvc, volumeId, sorted: sortClaimTags(requests, scope.registration.claimTagKeys, configured), record } };
}

/** Tags a bound claim's volume as its annotations ask, then records the request. */
export async function reconcileClaimTags(item: PersistentVolumeClaimItem, scope: Scope): Promise<Settled> {
  const prepared = prepareClaimTags(item, scope);
  if (!('job' in prepared)) return prepared;
  const { job } = prepared;
  interface Observed {
    disk: Disk | undefined;
    tagged: boolean;
  }
  const busy = () => requeue(Requeue.inTransition, `volume ${job.volumeId} is being reconciled by another request; looking again shortly`);
  return exclusively(`${scope.clusterId}/modify/${job.volumeId}`, () =>
    converge<Observed, TagAction>({
      observe: async () => ({ disk: await scope.ec2.getDisk(job.volumeId), tagged: false }),
      decide: (observed) => decideClaimTags(job, observed.disk, scope.clusterId, observed.tagged),
      perform: async (action, observed) => {
        await scope.ec2.tagDisk(action.volumeId, action.tags);
        const disk = observed.disk && { ...observed.disk, tags: { ...observed.disk.tags, ...action.tags } };
        return { disk, tagged: true };
      },
      refused: (_action, _error: Ec2Error, verdict) => refusedClaimTags(job, verdict),
    }), busy);
}
