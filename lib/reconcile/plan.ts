/**
 * The shape every reconciler's pure `decide…` returns: either one EC2 action to take next
 * (after which the cloud is observed again and the reconciler decides anew), or a verdict
 * that ends the reconcile. Writes accompany both.
 */
import type { Write } from '../contract/index.js';
import type { CopyDiskRequest, CopySnapshotRequest, CreateDiskRequest, CreateSnapshotRequest, CreateSnapshotsRequest, DiskChange } from '../ec2/types.js';

/** How a reconcile ends; becomes the Result's outcome and its fields. */
export type Verdict =
  | { outcome: 'done'; message?: string; reportWithinSeconds?: number }
  | { outcome: 'requeue'; requeueAfterSeconds: number; message: string }
  | { outcome: 'failed'; reason: string; message: string; requeueAfterSeconds: number };

/** The EC2 mutations a reconciler may ask for. Reads happen in each reconciler's observe step. */
export type Ec2Action =
  | { verb: 'createDisk'; request: CreateDiskRequest }
  | { verb: 'deleteDisk'; volumeId: string }
  /** `attempt` counts the device names EC2 already refused as in use for this attach. */
  | { verb: 'attachDisk'; volumeId: string; instanceId: string; attempt: number }
  | { verb: 'detachDisk'; volumeId: string; instanceId: string }
  | { verb: 'copyDisk'; request: CopyDiskRequest }
  | { verb: 'createSnapshot'; request: CreateSnapshotRequest }
  /** A group snapshot: one crash-consistent set of an instance's volumes. */
  | { verb: 'createSnapshots'; request: CreateSnapshotsRequest }
  | { verb: 'deleteSnapshot'; snapshotId: string }
  | { verb: 'enableFastSnapshotRestores'; snapshotId: string; zones: string[] }
  /** A cross-Region copy, made in (and deleted from) `region`. */
  | { verb: 'copySnapshot'; region: string; request: CopySnapshotRequest }
  | { verb: 'deleteSnapshotIn'; region: string; snapshotId: string }
  | { verb: 'modifyDisk'; volumeId: string; change: DiskChange }
  | { verb: 'tagDisk'; volumeId: string; tags: Record<string, string> }
  | { verb: 'untagDisk'; volumeId: string; keys: string[] };

export type Ec2Verb =
  | Ec2Action['verb']
  | 'findDiskByName'
  | 'getDisk'
  | 'getInstance'
  | 'findSnapshotsByName'
  | 'getSnapshot'
  | 'getModification'
  | 'getInitialization';

/** A reconcile's end: its verdict and every write decided on the way. */
export interface Settled {
  writes: Write[];
  verdict: Verdict;
}

export type Plan<A extends Ec2Action> = { writes: Write[]; action: A } | Settled;

export const done = (writes: Write[] = []): Settled => ({ writes, verdict: { outcome: 'done' } });

export const requeue = (requeueAfterSeconds: number, message: string, writes: Write[] = []): Settled => ({
  writes,
  verdict: { outcome: 'requeue', requeueAfterSeconds, message },
});

export const failed = (
  reason: string,
  message: string,
  requeueAfterSeconds: number,
  writes: Write[] = [],
): Settled => ({ writes, verdict: { outcome: 'failed', reason, message, requeueAfterSeconds } });

export const act = <A extends Ec2Action>(action: A, writes: Write[] = []): Plan<A> => ({ writes, action });
