/**
 * The EC2-specific halves of the gateway's snapshot verbs: DescribeSnapshots by name tag and
 * by ID. Snapshots are looked up one content at a time (a content is reconciled rarely, and a
 * snapshot takes minutes), so they are not batched like volumes.
 */
import { DescribeSnapshotsCommand, type Filter, type Snapshot as Ec2Snapshot } from '@aws-sdk/client-ec2';
import { TagKeys } from '../contract/tags.js';
import type { Ec2Context } from './describe.js';
import { toSnapshot } from './mapping.js';
import { Ec2Error, type Snapshot } from './types.js';

export const SNAPSHOT_ID = /^snap-[0-9a-f]+$/;
/** Page size of filtered DescribeSnapshots (EC2 accepts 5–1,000). */
const PAGE_SIZE = 1000;

/**
 * This cluster's snapshots tagged with `name`, oldest first (then by ID): filtered on the name
 * tag and `kubernetes.io/cluster/<clusterId>=owned`, in this account (`OwnerIds: self`), so
 * another cluster's snapshot of the same name is never seen.
 */
export async function describeSnapshotsByName(ctx: Ec2Context, name: string): Promise<Snapshot[]> {
  const snapshots = await describeSnapshotsFiltered(ctx, [
    { Name: `tag:${TagKeys.csiVolumeSnapshotName}`, Values: [name] },
    { Name: `tag:${TagKeys.cluster(ctx.clusterId)}`, Values: ['owned'] },
  ]);
  return snapshots.map(toSnapshot).sort(oldestFirst);
}

/**
 * Every snapshot tagged `kubernetes.io/cluster/<clusterId>=owned` in this account
 * (`OwnerIds: self`), 1,000 a page, every page: what the audit takes the snapshot inventory from.
 */
export async function describeClusterSnapshots(ctx: Ec2Context): Promise<Snapshot[]> {
  const snapshots = await describeSnapshotsFiltered(ctx, [{ Name: `tag:${TagKeys.cluster(ctx.clusterId)}`, Values: ['owned'] }]);
  return snapshots.map(toSnapshot).sort(oldestFirst);
}

/** The snapshot with this ID in this account; undefined when EC2 has none (or the ID is malformed). */
export async function describeSnapshotById(ctx: Ec2Context, snapshotId: string): Promise<Snapshot | undefined> {
  if (!SNAPSHOT_ID.test(snapshotId)) return undefined;
  // By filter rather than SnapshotIds: EC2 answers an unknown ID in SnapshotIds with an error.
  const found = await describeSnapshotsFiltered(ctx, [{ Name: 'snapshot-id', Values: [snapshotId] }]);
  const snapshot = found.find((s) => s.SnapshotId === snapshotId);
  return snapshot && toSnapshot(snapshot);
}

async function describeSnapshotsFiltered(ctx: Ec2Context, filters: Filter[]): Promise<Ec2Snapshot[]> {
  const items: Ec2Snapshot[] = [];
  let next: string | undefined;
  do {
    const out = await ctx.call('DescribeSnapshots', (o) =>
      ctx.client.send(new DescribeSnapshotsCommand({ OwnerIds: ['self'], Filters: filters, MaxResults: PAGE_SIZE, NextToken: next }), o),
    );
    items.push(...(out.Snapshots ?? []));
    next = out.NextToken || undefined;
  } while (next);
  return items;
}

export function oldestFirst(a: Snapshot, b: Snapshot): number {
  const age = Date.parse(a.startTime) - Date.parse(b.startTime);
  if (age !== 0) return age;
  return a.snapshotId < b.snapshotId ? -1 : a.snapshotId > b.snapshotId ? 1 : 0;
}

/** A snapshot name EC2 could never have as a tag value fails its own look-up. */
export function malformedSnapshotName(name: string): Ec2Error {
  return new Ec2Error('invalidParameter', 'InvalidParameterValue', `snapshot name ${JSON.stringify(name)} is not a valid EBS tag value`, 'DescribeSnapshots');
}
