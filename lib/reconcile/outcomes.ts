/**
 * Timings of requeues, and the one place where a gateway error becomes an outcome.
 */
import type { Result, Write } from '../contract/index.js';
import { isThrottlingCode } from '../ec2/errors.js';
import { Ec2Error } from '../ec2/types.js';
import type { Ec2Verb, Verdict } from './plan.js';

/** Seconds until the forwarder sends the item again. */
export const Requeue = {
  /** Writes that must be seen applied before acting (write before act): as soon as they are. */
  recorded: 0,
  /** EC2 throttled (RequestLimitExceeded and the like): the budget's rate steps down meanwhile. */
  transient: 5,
  /**
   * EC2 answered a mutation with a 5xx, the answer was lost, or a read still failed after its
   * retries in the request (lib/ec2/call.ts): tried again after 1 s, as external-provisioner
   * and external-attacher retry a failed call (`--retry-interval-start`). The next try reads
   * EC2 before it acts, and takes a budget token like any other call.
   */
  unavailable: 1,
  /** CreateVolume to `available` takes ~1.5 s (p99 ~4 s). */
  creating: 2,
  /** Attach and detach take 1–4 s. */
  attaching: 1,
  detaching: 2,
  /** IncorrectState and the like: the volume is between states, which EC2 finishes in 1–4 s. */
  inTransition: 2,
  /** A snapshot is `pending` for minutes (EC2 copies the changed blocks to S3). */
  snapshotPending: 15,
  /** A modification's `modifying` phase takes seconds to minutes. */
  modifying: 5,
  /** Its `optimizing` phase takes minutes to hours; another change waits for its end. */
  optimizing: 30,
  /** A restored volume initializes for minutes to hours (EC2 updates the figure within 5 min). */
  initializing: 30,
  /** Waiting on Kubernetes (a StorageClass, a VolumeAttachment to go away). */
  waitForCluster: 10,
  /** Anything unexpected: a bug or an outage, not the object's fault. */
  unexpected: 10,
  /** A failure that may clear by itself (capacity, attachment slots, quota). */
  failed: 60,
  /** A failure that needs a person (a bad StorageClass, ownership, IAM). */
  failedSlow: 300,
} as const;

/** The EC2 API behind each gateway verb, to name the permission an `unauthorized` error lacks. */
const EC2_ACTION: Record<Ec2Verb, string> = {
  createDisk: 'CreateVolume',
  deleteDisk: 'DeleteVolume',
  attachDisk: 'AttachVolume',
  detachDisk: 'DetachVolume',
  findDiskByName: 'DescribeVolumes',
  getDisk: 'DescribeVolumes',
  getInstance: 'DescribeInstances',
  copyDisk: 'CopyVolumes',
  createSnapshot: 'CreateSnapshot',
  createSnapshots: 'CreateSnapshots',
  deleteSnapshot: 'DeleteSnapshot',
  enableFastSnapshotRestores: 'EnableFastSnapshotRestores',
  copySnapshot: 'CopySnapshot',
  deleteSnapshotIn: 'DeleteSnapshot',
  findSnapshotsByName: 'DescribeSnapshots',
  getSnapshot: 'DescribeSnapshots',
  modifyDisk: 'ModifyVolume',
  getModification: 'DescribeVolumesModifications',
  getInitialization: 'DescribeVolumeStatus',
  tagDisk: 'CreateTags',
  untagDisk: 'DeleteTags',
};

/**
 * What a gateway error means for the item, whichever reconciler met it. `transient` is always
 * a requeue, never a failure of the object; states in transition are requeues too; the rest
 * fail and are retried slowly. Reconcilers add their writes (events, VolumeAttachment status)
 * to failed verdicts, and refine the few meanings that depend on what they were doing
 * (`deviceInUse` → try the next name; `notFound` right after CreateVolume → the volume vanished).
 */
export function verdictForEc2Error(error: Ec2Error, verb?: Ec2Verb): Verdict {
  const { message } = error;
  const permission = `ec2:${verb ? EC2_ACTION[verb] : (error.action ?? '?')}`;
  const fail = (reason: string, requeueAfterSeconds: number = Requeue.failed): Verdict => ({
    outcome: 'failed',
    reason,
    message,
    requeueAfterSeconds,
  });
  switch (error.kind) {
    case 'transient':
      // The rate budget's refusal knows when this item's token is there.
      return { outcome: 'requeue', requeueAfterSeconds: error.retryAfterSeconds ?? (isThrottlingCode(error.code) ? Requeue.transient : Requeue.unavailable), message };
    case 'incorrectState':
    case 'deviceInUse':
      return { outcome: 'requeue', requeueAfterSeconds: Requeue.inTransition, message };
    case 'inUse':
      // VolumeInUse: for DeleteVolume the volume is still attached (wait); for AttachVolume it
      // is attached to another instance, which waiting alone will not change.
      return verb === 'attachDisk'
        ? fail('VolumeInUse')
        : { outcome: 'requeue', requeueAfterSeconds: Requeue.waitForCluster, message };
    case 'invalidParameter':
      return fail('InvalidParameter', Requeue.failedSlow);
    case 'unauthorized':
      return {
        outcome: 'failed',
        reason: 'UnauthorizedOperation',
        // The gateway's message names the permission already; make sure, in any case.
        message: message.includes(permission) ? message : `${permission} is not allowed: ${message}`,
        requeueAfterSeconds: Requeue.failedSlow,
      };
    case 'sessionDenied':
      // The message names the role, the cluster and the fix; the code says which refusal.
      return fail(error.code, Requeue.failedSlow);
    case 'notFound':
      return fail('NotFound');
    case 'capacity':
      return fail('InsufficientVolumeCapacity');
    case 'attachmentLimit':
      return fail('AttachmentLimitExceeded');
    case 'zoneMismatch':
      return fail('ZoneMismatch', Requeue.failedSlow);
    case 'idempotentMismatch':
      return fail('IdempotentParameterMismatch');
    case 'volumeLimit':
      return fail('VolumeLimitExceeded');
    case 'modificationRate':
      // The reconciler that modifies requeues for the time EC2's message names.
      return fail('VolumeModificationRateExceeded');
    case 'other':
      return fail(error.code || 'Ec2Error');
  }
}

/** Any error that escaped a reconciler: gateway errors as classified, the rest a requeue. */
export function verdictForError(error: unknown): Verdict {
  if (error instanceof Ec2Error) return verdictForEc2Error(error);
  const message = error instanceof Error ? error.message : String(error);
  return { outcome: 'requeue', requeueAfterSeconds: Requeue.unexpected, message: `unexpected error: ${message}` };
}

/** The contract's Result for an item. */
export function toResult(key: string, verdict: Verdict, writes: Write[]): Result {
  switch (verdict.outcome) {
    case 'done':
      return {
        key,
        outcome: 'done',
        ...(verdict.message !== undefined && { message: verdict.message }),
        ...(verdict.reportWithinSeconds !== undefined && { reportWithinSeconds: verdict.reportWithinSeconds }),
        writes,
      };
    case 'requeue':
      return { key, outcome: 'requeue', requeueAfterSeconds: verdict.requeueAfterSeconds, message: verdict.message, writes };
    case 'failed':
      return {
        key,
        outcome: 'failed',
        reason: verdict.reason,
        message: verdict.message,
        requeueAfterSeconds: verdict.requeueAfterSeconds,
        writes,
      };
  }
}
