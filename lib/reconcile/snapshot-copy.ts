/**
 * A snapshot's cross-Region copy (a VolumeSnapshotClass's `copyToRegion`), made once the
 * content's snapshot is completed, and recorded on the content (lib/contract/snapshot-copy.ts):
 *
 * - Write before act: the annotation says `copying` (and is seen applied) before CopySnapshot is
 *   sent. CopySnapshot takes no ClientToken: the copy carries the source's identity tags
 *   (`CSIVolumeSnapshotName` = the content's name, the cluster's ownership tags) and the class's
 *   and registration's tags, and is looked up by its name in the destination Region before
 *   copying and on every retry, so a lost answer never makes a second one; a younger duplicate
 *   that two requests made at once is deleted by the request that made it.
 * - The copy's ID and state are recorded as EC2 reports them, until `completed`.
 * - A refused copy (IAM, a Region the account cannot use, a bad key) records `failed` with the
 *   reason and a Warning `SnapshotCopyFailed` on the VolumeSnapshot, and is not tried again;
 *   the source snapshot was recorded ready before and stays usable.
 * - Deletion (snapshot-content.ts): under Delete the copy goes with the snapshot, found by its
 *   recorded ID and by its name, each checked to be the cluster's at the resource; under Retain
 *   it stays.
 */
import {
  snapshotCopyOf,
  snapshotCopyText,
  SNAPSHOT_COPY_ANNOTATION,
  type SnapshotCopyRecord,
  type VolumeSnapshotContent,
  type Write,
} from '../contract/index.js';
import type { CopySnapshotRequest, Ec2Error, Snapshot } from '../ec2/types.js';
import { EventReasons, volumeSnapshotEvent } from './events.js';
import { Requeue } from './outcomes.js';
import { act, done, requeue, type Ec2Action, type Plan, type Settled, type Verdict } from './plan.js';
import { notOwnedWhy } from './tags.js';
import { contentRef, ensureAnnotation } from './writes.js';
import { isOwnedSnapshot } from './snapshot-ownership.js';

export type CopyAction = Extract<Ec2Action, { verb: 'copySnapshot' | 'deleteSnapshotIn' }>;

/** What the class asks: the destination Region and, optionally, its KMS key. */
export interface CopyWanted {
  region: string;
  kmsKeyId?: string;
}

export interface CopyObserved {
  /** The content's snapshot, completed. */
  source: Snapshot;
  /** The cluster's snapshots in the destination Region tagged with the content's name, oldest first. */
  copies: Snapshot[];
  /** A copy this request made (so never recorded anywhere yet). */
  created?: string;
  /** Why EC2 refused to show the destination Region's snapshots (IAM, a Region the account cannot use). */
  refused?: string;
}

interface Names {
  clusterId: string;
  /** The cluster's own Region: a copy into it is refused. */
  region: string;
}

/** The annotation write for `record`, nothing when the content already says so. */
export function recordCopy(content: VolumeSnapshotContent, record: SnapshotCopyRecord): Write[] {
  return ensureAnnotation(content, contentRef(content), SNAPSHOT_COPY_ANNOTATION, snapshotCopyText(record));
}

/** Pure: the copy failed for good: recorded with the reason, a Warning on the VolumeSnapshot; not tried again. */
export function copyFailed(content: VolumeSnapshotContent, region: string, message: string): Settled {
  // The reason last: an Event's message is cut at 1 KiB, and EC2's IAM answers are long.
  const full = `the copy of snapshot ${content.status?.snapshotHandle ?? '?'} to Region ${region} failed (the snapshot itself is ready to use): ${message}`;
  return done([...recordCopy(content, { region, state: 'failed', message }), volumeSnapshotEvent(content, 'Warning', EventReasons.snapshotCopyFailed, full)]);
}

/**
 * Pure: the copy before the snapshot exists: `waiting`, written with the being-created mark, so
 * that a ready content is not settled (and no longer sent) before its copy is done.
 */
export function copyIntent(content: VolumeSnapshotContent, wanted: CopyWanted | undefined): Write[] {
  if (!wanted || snapshotCopyOf(content)) return [];
  return recordCopy(content, { region: wanted.region, state: 'waiting' });
}

/** Pure: the next step for the copy of a content whose snapshot is completed. */
export function decideCopy(content: VolumeSnapshotContent, wanted: CopyWanted, observed: CopyObserved, names: Names): Plan<CopyAction> {
  const record = snapshotCopyOf(content);
  const region = record?.region ?? wanted.region;
  if (record?.state === 'completed' || record?.state === 'failed') return done();
  if (region === names.region) return copyFailed(content, region, `${region} is the cluster's own Region; copyToRegion names another`);
  if (!record || record.state === 'waiting') {
    // Write before act: no CopySnapshot until the content says one may be under way.
    return requeue(Requeue.recorded, `recording the copy of ${observed.source.snapshotId} to ${region} before making it`, recordCopy(content, { region, state: 'copying' }));
  }
  if (observed.refused) return copyFailed(content, region, observed.refused);
  const [winner] = observed.copies;
  if (!winner) {
    if (record.snapshotId) return copyFailed(content, region, `the copy ${record.snapshotId} is gone from ${region}`);
    const request: CopySnapshotRequest = {
      name: content.metadata.name,
      sourceSnapshotId: observed.source.snapshotId,
      tags: copyTags(observed.source),
      ...(wanted.kmsKeyId !== undefined && { kmsKeyId: wanted.kmsKeyId }),
    };
    return act({ verb: 'copySnapshot', region, request });
  }
  if (observed.created && observed.created !== winner.snapshotId) return act({ verb: 'deleteSnapshotIn', region, snapshotId: observed.created });
  if (!isOwnedSnapshot(winner, names.clusterId)) {
    return copyFailed(content, region, `snapshot ${winner.snapshotId} named ${content.metadata.name} in ${region} is not owned by cluster "${names.clusterId}" (${notOwnedWhy(winner.tags, names.clusterId)})`);
  }
  switch (winner.state) {
    case 'completed':
      return done([
        ...recordCopy(content, { region, state: 'completed', snapshotId: winner.snapshotId }),
        volumeSnapshotEvent(content, 'Normal', EventReasons.snapshotCopied, `snapshot ${observed.source.snapshotId} copied to Region ${region} as ${winner.snapshotId}`),
      ]);
    case 'error':
      return copyFailed(content, region, `EC2 reports the copy ${winner.snapshotId} failed${winner.stateMessage ? `: ${winner.stateMessage}` : ''}`);
    default:
      return requeue(
        Requeue.snapshotPending,
        `the copy ${winner.snapshotId} in ${region} is ${winner.state}${winner.progress ? ` (${winner.progress})` : ''}`,
        recordCopy(content, { region, state: 'pending', snapshotId: winner.snapshotId }),
      );
  }
}

/** Pure: EC2 refused the copy (a transient error never gets here: it is a requeue). */
export function refusedCopy(content: VolumeSnapshotContent, action: CopyAction, _error: Ec2Error, verdict: Verdict): Plan<CopyAction> {
  if (action.verb === 'deleteSnapshotIn' || verdict.outcome === 'done') return { writes: [], verdict };
  if (verdict.outcome === 'requeue') return { writes: [], verdict };
  return copyFailed(content, action.region, verdict.message);
}

/** The source's tags the copy carries besides the identity tags (which the gateway adds): the class's and the registration's. */
function copyTags(source: Snapshot): Record<string, string> {
  return Object.fromEntries(Object.entries(source.tags).filter(([key]) => !/^aws:/i.test(key)));
}

/** The copy's ownership for a deletion: what is the cluster's, and one that is not (never deleted). */
export function splitCopies(found: readonly Snapshot[], clusterId: string): { owned: Snapshot[]; foreign: Snapshot | undefined } {
  return { owned: found.filter((s) => isOwnedSnapshot(s, clusterId)), foreign: found.find((s) => !isOwnedSnapshot(s, clusterId)) };
}


