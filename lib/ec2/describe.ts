import {
  DescribeInstancesCommand,
  DescribeVolumesCommand,
  DescribeVolumesModificationsCommand,
  DescribeVolumeStatusCommand,
  type VolumeModification,
  type VolumeStatusItem,
  type EC2Client,
  type Filter,
  type Instance,
  type Volume,
} from '@aws-sdk/client-ec2';
import { TagKeys } from '../contract/tags.js';
import type { CallOptions } from './call.js';
import { Ec2Error, lookupRank } from './types.js';

/**
 * The EC2-specific halves of the gateway's batches: each takes the keys of one batch and
 * answers with what EC2 knows about them, in as few calls as EC2 allows.
 */

export interface Ec2Context {
  client: EC2Client;
  clusterId: string;
  /** Epoch ms by which the request's calls must have settled. */
  deadline?: number;
  /**
   * Makes one EC2 call: paced by the rate budget, observed, and bounded by `deadline` unless
   * `unbounded` (a call shared by several requests, each bounding its own wait).
   */
  call<T>(action: string, run: (options: CallOptions) => Promise<T>, options?: { unbounded?: boolean }): Promise<T>;
}

/** Volume IDs per DescribeVolumes by `VolumeIds`, as the EBS CSI driver batches them. */
export const VOLUME_IDS_PER_CALL = 500;
/** Instance IDs per DescribeInstances by `InstanceIds`. */
export const INSTANCE_IDS_PER_CALL = 500;
/**
 * Values per filter. EC2's reference caps filter values at 200 for several actions; the EBS
 * CSI driver sends up to 500 tag values to DescribeVolumes. We keep to the safe side.
 */
export const FILTER_VALUES_PER_CALL = 200;
/** Page size of filtered describes (EC2 accepts 5–1,000 here). */
export const PAGE_SIZE = 500;
/**
 * How often one batch by ID is narrowed after EC2 refuses it for naming an unknown or
 * malformed ID, before falling back to the filter route, which never refuses.
 */
const MAX_NARROWING = 2;

export const VOLUME_ID = /^vol-[0-9a-f]+$/;
export const INSTANCE_ID = /^i-[0-9a-f]+$/;

/**
 * The status of each volume (DescribeVolumeStatus by `VolumeIds`, which EC2 refuses whole for
 * one unknown ID: narrowed as DescribeVolumes is). It has no `volume-id` filter, so the last
 * resort asks for each volume alone. Volumes EC2 does not know are absent.
 */
export async function describeVolumeStatusByIds(ctx: Ec2Context, ids: readonly string[]): Promise<Map<string, VolumeStatusItem>> {
  const refusals = ['InvalidVolume.NotFound', 'InvalidVolumeID.Malformed'];
  const byIds = (VolumeIds: string[]) =>
    paginate(async (NextToken) => {
      const out = await ctx.call('DescribeVolumeStatus', (o) => ctx.client.send(new DescribeVolumeStatusCommand({ VolumeIds, NextToken }), o));
      return { items: out.VolumeStatuses ?? [], next: out.NextToken };
    });
  const statuses = await describeByIds({
    ids: wellFormed(ids, VOLUME_ID),
    refusals,
    byIds,
    byFilter: async (values) => {
      const found: VolumeStatusItem[] = [];
      for (const id of values) {
        try {
          found.push(...(await byIds([id])));
        } catch (err) {
          if (!(err instanceof Ec2Error) || !refusals.includes(err.code)) throw err;
        }
      }
      return found;
    },
  });
  return byKey(statuses, (s) => s.VolumeId);
}

/** Volumes by ID; IDs EC2 does not know (or that are malformed) are absent from the map. */
export async function describeVolumesByIds(ctx: Ec2Context, ids: readonly string[]): Promise<Map<string, Volume>> {
  const volumes = await describeByIds({
    ids: wellFormed(ids, VOLUME_ID),
    refusals: ['InvalidVolume.NotFound', 'InvalidVolumeID.Malformed'],
    byIds: async (VolumeIds) =>
      (await ctx.call('DescribeVolumes', (o) => ctx.client.send(new DescribeVolumesCommand({ VolumeIds }), o)))
        .Volumes ?? [],
    byFilter: (values) => eachChunk(values, (Values) => describeVolumesFiltered(ctx, [{ Name: 'volume-id', Values }])),
  });
  return byKey(volumes, (v) => v.VolumeId);
}

/**
 * This cluster's volumes by their `CSIVolumeName` tag, one filtered (and paginated) describe
 * for up to {@link FILTER_VALUES_PER_CALL} names. The filter on
 * `kubernetes.io/cluster/<clusterId>=owned` keeps other clusters' volumes out.
 *
 * Two live volumes with one name should never exist (the ClientToken and the look-up before
 * create prevent it); a failed one and its replacement do. A live volume wins over a failed
 * one, a failed one over one being deleted, then the oldest, so repeated look-ups keep
 * answering the same volume.
 */
export async function describeVolumesByNames(ctx: Ec2Context, names: readonly string[]): Promise<Map<string, Volume>> {
  const volumes = await eachChunk(unique(names), (Values) =>
    describeVolumesFiltered(ctx, [
      { Name: `tag:${TagKeys.csiVolumeName}`, Values },
      { Name: `tag:${TagKeys.cluster(ctx.clusterId)}`, Values: ['owned'] },
    ]),
  );
  const found = new Map<string, Volume>();
  for (const volume of volumes) {
    const name = volume.Tags?.find((t) => t.Key === TagKeys.csiVolumeName)?.Value;
    if (name === undefined) continue;
    const current = found.get(name);
    if (!current || preferVolume(volume, current)) found.set(name, volume);
  }
  return found;
}

/**
 * Every volume of the cluster: DescribeVolumes filtered by `kubernetes.io/cluster/<id>=owned`,
 * {@link PAGE_SIZE} a page — 10,000 volumes are 20 calls.
 */
export async function describeClusterVolumes(ctx: Ec2Context): Promise<Volume[]> {
  return describeVolumesFiltered(ctx, [{ Name: `tag:${TagKeys.cluster(ctx.clusterId)}`, Values: ['owned'] }]);
}

/** Instances by ID; unknown, malformed and terminated ones are absent from the map. */
export async function describeInstancesByIds(ctx: Ec2Context, ids: readonly string[]): Promise<Map<string, Instance>> {
  const instances = await describeByIds({
    ids: wellFormed(ids, INSTANCE_ID),
    refusals: ['InvalidInstanceID.NotFound', 'InvalidInstanceID.Malformed'],
    byIds: async (InstanceIds) => {
      const out = await ctx.call('DescribeInstances', (o) =>
        ctx.client.send(new DescribeInstancesCommand({ InstanceIds }), o),
      );
      return (out.Reservations ?? []).flatMap((r) => r.Instances ?? []);
    },
    byFilter: (values) => eachChunk(values, (Values) => describeInstancesFiltered(ctx, [{ Name: 'instance-id', Values }])),
  });
  return byKey(
    instances.filter((i) => i.State?.Name !== 'terminated'),
    (i) => i.InstanceId,
  );
}

/**
 * The latest modification of each volume, by a `volume-id` filter: by `VolumeIds`, EC2 refuses
 * the whole batch when one volume was never modified (InvalidVolumeModification.NotFound); a
 * filter leaves such volumes out. EC2 answers the most recent modification of each volume; should
 * it list more, the latest start wins.
 */
export async function describeModificationsByVolumeIds(ctx: Ec2Context, ids: readonly string[]): Promise<Map<string, VolumeModification>> {
  const modifications = await eachChunk(wellFormed(ids, VOLUME_ID), (Values) =>
    paginate(async (NextToken) => {
      const out = await ctx.call('DescribeVolumesModifications', (o) =>
        ctx.client.send(
          new DescribeVolumesModificationsCommand({ Filters: [{ Name: 'volume-id', Values }], MaxResults: PAGE_SIZE, NextToken }),
          o,
        ),
      );
      return { items: out.VolumesModifications ?? [], next: out.NextToken };
    }),
  );
  const latest = new Map<string, VolumeModification>();
  for (const m of modifications) {
    if (!m.VolumeId) continue;
    const current = latest.get(m.VolumeId);
    if (!current || (m.StartTime?.getTime() ?? 0) >= (current.StartTime?.getTime() ?? 0)) latest.set(m.VolumeId, m);
  }
  return latest;
}

/**
 * Describe by ID, which EC2 refuses as a whole when a single ID is unknown or malformed. The
 * refusal names the IDs ("The volumes 'vol-1, vol-2' do not exist."), so they are dropped and
 * the rest asked again. If the message names none of ours, or keeps refusing, the rest go
 * through the filter route, which simply leaves unknown IDs out.
 */
async function describeByIds<T>(batch: {
  ids: string[];
  refusals: string[];
  byIds: (ids: string[]) => Promise<T[]>;
  byFilter: (ids: string[]) => Promise<T[]>;
}): Promise<T[]> {
  let remaining = batch.ids;
  for (let narrowed = 0; remaining.length > 0; narrowed++) {
    if (narrowed > MAX_NARROWING) return batch.byFilter(remaining);
    try {
      return await batch.byIds(remaining);
    } catch (err) {
      if (!(err instanceof Ec2Error) || !batch.refusals.includes(err.code)) throw err;
      const refused = idsNamedIn(err.message, remaining);
      if (refused.size === 0) return batch.byFilter(remaining);
      remaining = remaining.filter((id) => !refused.has(id));
    }
  }
  return [];
}

async function describeVolumesFiltered(ctx: Ec2Context, filters: Filter[]): Promise<Volume[]> {
  return paginate(async (NextToken) => {
    const out = await ctx.call('DescribeVolumes', (o) =>
      ctx.client.send(new DescribeVolumesCommand({ Filters: filters, MaxResults: PAGE_SIZE, NextToken }), o),
    );
    return { items: out.Volumes ?? [], next: out.NextToken };
  });
}

async function describeInstancesFiltered(ctx: Ec2Context, filters: Filter[]): Promise<Instance[]> {
  return paginate(async (NextToken) => {
    const out = await ctx.call('DescribeInstances', (o) =>
      ctx.client.send(new DescribeInstancesCommand({ Filters: filters, MaxResults: PAGE_SIZE, NextToken }), o),
    );
    return { items: (out.Reservations ?? []).flatMap((r) => r.Instances ?? []), next: out.NextToken };
  });
}

/** Runs a filtered describe per {@link FILTER_VALUES_PER_CALL} values, one after the other. */
export async function eachChunk<T>(values: string[], describe: (chunk: string[]) => Promise<T[]>): Promise<T[]> {
  const items: T[] = [];
  for (const chunk of chunks(values, FILTER_VALUES_PER_CALL)) items.push(...(await describe(chunk)));
  return items;
}

/** Follows NextToken to the end. */
async function paginate<T>(
  page: (nextToken: string | undefined) => Promise<{ items: T[]; next: string | undefined }>,
): Promise<T[]> {
  const items: T[] = [];
  let next: string | undefined;
  do {
    const answer = await page(next);
    items.push(...answer.items);
    next = answer.next || undefined;
  } while (next);
  return items;
}

/** A live volume beats a failed one, which beats one being deleted; then the older, then the smaller ID. */
function preferVolume(candidate: Volume, current: Volume): boolean {
  const [a, b] = [lookupRank(candidate.State), lookupRank(current.State)];
  if (a !== b) return a < b;
  const age = (candidate.CreateTime?.getTime() ?? 0) - (current.CreateTime?.getTime() ?? 0);
  if (age !== 0) return age < 0;
  return (candidate.VolumeId ?? '') < (current.VolumeId ?? '');
}

/** The IDs among `candidates` that an EC2 error message names. */
function idsNamedIn(message: string, candidates: readonly string[]): Set<string> {
  const wanted = new Set(candidates);
  return new Set((message.match(/\b(?:vol|i)-[0-9a-f]+\b/g) ?? []).filter((id) => wanted.has(id)));
}

function wellFormed(ids: readonly string[], pattern: RegExp): string[] {
  return unique(ids).filter((id) => pattern.test(id));
}

export function unique(values: readonly string[]): string[] {
  return [...new Set(values)];
}

function chunks<T>(values: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < values.length; i += size) out.push(values.slice(i, i + size));
  return out;
}

function byKey<T>(items: T[], key: (item: T) => string | undefined): Map<string, T> {
  const map = new Map<string, T>();
  for (const item of items) {
    const k = key(item);
    if (k !== undefined) map.set(k, item);
  }
  return map;
}

/** A tag value EC2 accepts: well-formed Unicode (no lone surrogates), at most 256 characters. */
export function isWellFormedName(name: string): boolean {
  return name.length > 0 && name.length <= 256 && !/\p{Cs}/u.test(name);
}
