/**
 * The EC2-specific halves of the gateway's snapshot verbs: DescribeSnapshots by name tag and
 * by ID, each for a batch of names or IDs (the gateway batches the look-ups of one request, as
 * the EBS CSI driver batches its DescribeSnapshots): a request carrying many pending snapshots
 * polls them all in one call.
 */
import { DescribeSnapshotsCommand, type Filter, type Snapshot as Ec2Snapshot } from '@aws-sdk/client-ec2';
import { TagKeys } from '../contract/tags.js';
import { eachChunk, unique, type Ec2Context } from './describe.js';
import { toSnapshot } from './mapping.js';
import { Ec2Error, type Snapshot } from './types.js';

export const SNAPSHOT_ID = /^snap-[0-9a-f]+$/;
/** Page size of filtered DescribeSnapshots (EC2 accepts 5–1,000). */
const PAGE_SIZE = 1000;

/**
 * This cluster's snapshots tagged with each of `names`, each name's oldest first (then by ID):
 * filtered on the name tag and `kubernetes.io/cluster/<clusterId>=owned`, in this account
 * (`OwnerIds: self`), so another cluster's snapshot of the same name is never seen. A name with
 * none is absent.
 */
export async function describeSnapshotsByNames(ctx: Ec2Context, names: readonly string[]): Promise<Map<string, Snapshot[]>> {
  const found = await eachChunk(unique(names), (Values) =>
    describeSnapshotsFiltered(ctx, [
      { Name: `tag:${TagKeys.csiVolumeSnapshotName}`, Values },
      { Name: `tag:${TagKeys.cluster(ctx.clusterId)}`, Values: ['owned'] },
    ]),
  );
  const byName = new Map<string, Snapshot[]>();
  for (const snapshot of found.map(toSnapshot)) {
    const name = snapshot.tags[TagKeys.csiVolumeSnapshotName];
    if (name === undefined) continue;
    byName.set(name, [...(byName.get(name) ?? []), snapshot]);
  }
  for (const list of byName.values()) list.sort(oldestFirst);
  return byName;
}

/**
 * Every snapshot tagged `kubernetes.io/cluster/<clusterId>=owned` in this account
 * (`OwnerIds: self`), 1,000 a page, every page: what the audit takes the snapshot inventory from.
 */
export async function describeClusterSnapshots(ctx: Ec2Context): Promise<Snapshot[]> {
  const snapshots = await describeSnapshotsFiltered(ctx, [{ Name: `tag:${TagKeys.cluster(ctx.clusterId)}`, Values: ['owned'] }]);
  return snapshots.map(toSnapshot).sort(oldestFirst);
}

/**
 * The snapshots with these IDs in this account; IDs EC2 has none of (or malformed ones) are
 * absent. By filter rather than SnapshotIds: EC2 answers an unknown ID in SnapshotIds with an
 * error for the whole call.
 */
export async function describeSnapshotsByIds(ctx: Ec2Context, ids: readonly string[]): Promise<Map<string, Snapshot>> {
  const wanted = unique(ids).filter((id) => SNAPSHOT_ID.test(id));
  const found = await eachChunk(wanted, (Values) => describeSnapshotsFiltered(ctx, [{ Name: 'snapshot-id', Values }]));
  const byId = new Map<string, Snapshot>();
  for (const snapshot of found) if (snapshot.SnapshotId && wanted.includes(snapshot.SnapshotId)) byId.set(snapshot.SnapshotId, toSnapshot(snapshot));
  return byId;
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
