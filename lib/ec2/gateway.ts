import {
  AttachVolumeCommand,
  CopyVolumesCommand,
  CreateSnapshotCommand,
  CreateSnapshotsCommand,
  CreateTagsCommand,
  CreateVolumeCommand,
  DeleteSnapshotCommand,
  DeleteTagsCommand,
  DeleteVolumeCommand,
  DetachVolumeCommand,
  EnableFastSnapshotRestoresCommand,
  ModifyVolumeCommand,
  type EC2Client,
  type VolumeType,
} from '@aws-sdk/client-ec2';
import DataLoader from 'dataloader';
import { identityTags, snapshotIdentityTags } from '../contract/tags.js';
import { callEc2, readRetryDelayMs, type CallOptions } from './call.js';
import {
  describeClusterVolumes,
  describeInstancesByIds,
  describeModificationsByVolumeIds,
  describeVolumesByIds,
  describeVolumesByNames,
  describeVolumeStatusByIds,
  FILTER_VALUES_PER_CALL,
  INSTANCE_IDS_PER_CALL,
  isWellFormedName,
  VOLUME_IDS_PER_CALL,
  type Ec2Context,
} from './describe.js';
import { isThrottlingCode } from './errors.js';
import { tagList, toDisk, toInitialization, toInstance, toModification, toSnapshot } from './mapping.js';
import { Pacer, type Ec2Observer, type PacingOptions } from './pacing.js';
import { describeClusterSnapshots, describeSnapshotsByIds, describeSnapshotsByNames, malformedSnapshotName } from './snapshots.js';
import { clientTokenFor } from './token.js';
import { regionSnapshots } from './snapshot-copies.js';
import {
  Ec2Error,
  isEc2Error,
  isGone,
  type CopyDiskRequest,
  type CreateDiskRequest,
  type CreateSnapshotsRequest,
  type Disk,
  type DiskChange,
  type DiskInitialization,
  type DiskModification,
  type Ec2Gateway,
  type Instance,
  type LookedUp,
  type RegionSnapshots,
  type Snapshot,
} from './types.js';
import { cachedZones, ZONES_TTL_MS } from './zones.js';

export interface Ec2GatewayOptions {
  /** Shared by all gateways of a process (see createEc2Client). */
  client: EC2Client;
  clusterId: string;
  /** Epoch ms by which every call must have settled, else it fails as `transient`. Default: none. */
  deadline?: number;
  /** How long look-ups wait for company before one describe is sent (default 5 ms). */
  batchWindowMs?: number;
  /** How long the Region's zones are cached, per EC2 client (default {@link ZONES_TTL_MS}). */
  zonesTtlMs?: number;
  /**
   * The shared rate budget: every EC2 call first takes a token of its bucket, and a call the
   * budget does not grant is not made (it fails `transient` with the budget's wait). Without
   * it calls are unpaced — only for tests and tools that talk to EC2 directly.
   */
  pacing?: PacingOptions;
  /** Told of every EC2 call and token decision (metrics). */
  observer?: Ec2Observer;
  /**
   * The cluster's EC2 client for another Region of its account (same session), for its
   * cross-Region snapshot copies; an Ec2Error when there is none. Without it every call in
   * another Region fails.
   */
  clientFor?: (region: string) => EC2Client;
}

const DEFAULT_BATCH_WINDOW_MS = 5;
/** Failed volumes replaced in one createDisk: each costs one CreateVolume that EC2 answers at once. */
const MAX_TOKEN_GENERATIONS = 4;

/**
 * The SDK-backed gateway for one incoming request. Make one per request: its batches gather
 * the look-ups of that request only, and its `deadline` is that request's.
 *
 * Look-ups made in the same batch window become one describe per 500 IDs (200 names), and
 * duplicates in a batch are asked once. Volumes and instances are not cached beyond that: a
 * reconciler that reads a volume again — to see whether it became `available`, or after
 * attaching it — must see EC2's state now, and the changes that matter are made by EC2, not by
 * this gateway, so no invalidation on our own mutations could keep a cache honest. The Region's
 * zones, which do not change, are cached per EC2 client (`cachedZones`).
 */
export function createEc2Gateway(options: Ec2GatewayOptions): Ec2Gateway {
  const windowMs = options.batchWindowMs ?? DEFAULT_BATCH_WINDOW_MS;
  const batchScheduleFn = (dispatch: () => void) => void setTimeout(dispatch, windowMs);
  const observer = options.observer ?? {};
  const pacer = options.pacing && new Pacer(options.pacing, batchScheduleFn, observer);
  const call = pacedCall(pacer);

  /**
   * Every EC2 call of the gateway: a token first (of the Region's budget), then the call,
   * observed; a throttle slows the bucket. A read that fails as EC2's 5xx or the network
   * sometimes do is tried again here, a token each time ({@link readRetryDelayMs}): one
   * DescribeVolumes answers for every item of the request, which would otherwise all go back
   * to the forwarder for a wait. A mutation is not: the reconcile reads before acting again.
   */
  function pacedCall(pacer: Pacer | undefined): Ec2Context['call'] {
    return async function call<T>(action: string, run: (o: CallOptions) => Promise<T>, callOptions: { unbounded?: boolean } = {}): Promise<T> {
      const deadline = callOptions.unbounded ? undefined : options.deadline;
      for (let retry = 0; ; retry++) {
        await pacer?.take(action);
        const started = performance.now();
        try {
          const out = await callEc2(action, deadline, run);
          observer.call?.(action, { ms: performance.now() - started, throttled: false });
          return out;
        } catch (error) {
          const code = error instanceof Ec2Error ? error.code : 'Unknown';
          const throttled = isThrottlingCode(code);
          observer.call?.(action, { ms: performance.now() - started, code, throttled });
          if (throttled) await pacer?.throttled(action);
          const delay = readRetryDelayMs(action, error, retry);
          if (delay === undefined || (deadline !== undefined && Date.now() + delay >= deadline)) throw error;
          await new Promise((resolve) => setTimeout(resolve, delay));
        }
      }
    };
  }
  const ctx: Ec2Context = {
    client: options.client,
    clusterId: options.clusterId,
    ...(options.deadline !== undefined ? { deadline: options.deadline } : {}),
    call,
  };

  const disksById = new DataLoader<string, Disk | undefined>(
    async (ids) => {
      const found = await describeVolumesByIds(ctx, ids);
      return ids.map((id) => mapDefined(found.get(id), toDisk));
    },
    { cache: false, maxBatchSize: VOLUME_IDS_PER_CALL, batchScheduleFn },
  );
  const disksByName = new DataLoader<string, Disk | undefined>(
    async (names) => {
      // A name EC2 could never have been given fails its own look-up only, never the batch.
      const found = await describeVolumesByNames(ctx, names.filter(isWellFormedName));
      return names.map((name) => (isWellFormedName(name) ? mapDefined(found.get(name), toDisk) : malformedName(name)));
    },
    { cache: false, maxBatchSize: FILTER_VALUES_PER_CALL, batchScheduleFn },
  );
  const instancesById = new DataLoader<string, Instance | undefined>(
    async (ids) => {
      const found = await describeInstancesByIds(ctx, ids);
      return ids.map((id) => mapDefined(found.get(id), toInstance));
    },
    { cache: false, maxBatchSize: INSTANCE_IDS_PER_CALL, batchScheduleFn },
  );

  const modificationsById = new DataLoader<string, DiskModification | undefined>(
    async (ids) => {
      const found = await describeModificationsByVolumeIds(ctx, ids);
      return ids.map((id) => mapDefined(found.get(id), toModification));
    },
    { cache: false, maxBatchSize: FILTER_VALUES_PER_CALL, batchScheduleFn },
  );

  const initializationsById = new DataLoader<string, DiskInitialization | undefined>(
    async (ids) => {
      const found = await describeVolumeStatusByIds(ctx, ids);
      return ids.map((id) => mapDefined(found.get(id), toInitialization));
    },
    { cache: false, maxBatchSize: VOLUME_IDS_PER_CALL, batchScheduleFn },
  );

  const snapshotsByName = new DataLoader<string, Snapshot[]>(
    async (names) => {
      const found = await describeSnapshotsByNames(ctx, names);
      return names.map((name) => found.get(name) ?? []);
    },
    { cache: false, maxBatchSize: FILTER_VALUES_PER_CALL, batchScheduleFn },
  );
  const snapshotsById = new DataLoader<string, Snapshot | undefined>(
    async (ids) => {
      const found = await describeSnapshotsByIds(ctx, ids);
      return ids.map((id) => found.get(id));
    },
    { cache: false, maxBatchSize: FILTER_VALUES_PER_CALL, batchScheduleFn },
  );

  const findDiskByName = (name: string) => disksByName.load(name);
  const getDisk = async (volumeId: string, name?: string) => {
    if (name !== undefined && isWellFormedName(name)) {
      const named = await disksByName.load(name);
      if (named?.volumeId === volumeId) return named;
    }
    return disksById.load(volumeId);
  };

  /**
   * One CreateVolume under `token`, with every tag in TagSpecifications — the identity tags
   * `findDiskByName` filters on always among them, whatever the caller passed.
   */
  async function createUnderToken(request: CreateDiskRequest, token: string): Promise<Disk> {
    const tags = { ...request.tags, ...identityTags(options.clusterId, request.name) };
    try {
      const out = await call('CreateVolume', (o) =>
        options.client.send(
          new CreateVolumeCommand({
            ClientToken: token,
            AvailabilityZone: request.zone,
            Size: request.sizeGiB,
            SnapshotId: request.snapshotId,
            VolumeInitializationRate: request.initializationRate,
            VolumeType: request.type as VolumeType,
            Iops: request.iops,
            Throughput: request.throughput,
            Encrypted: request.encrypted ?? (request.kmsKeyId !== undefined ? true : undefined),
            KmsKeyId: request.kmsKeyId,
            MultiAttachEnabled: request.multiAttach,
            TagSpecifications: [{ ResourceType: 'volume', Tags: tagList(tags) }],
          }),
          o,
        ),
      );
      return toDisk({ ...out, Tags: out.Tags?.length ? out.Tags : tagList(tags) });
    } catch (err) {
      // EC2 does not honour the token on these: the volume may exist all the same.
      if (isEc2Error(err, 'idempotentMismatch', 'volumeLimit')) {
        const found = await findDiskByName(request.name);
        if (found && !isGone(found)) return found;
      }
      throw err;
    }
  }

  /** One CopyVolumes under `token`, tagged like createUnderToken tags. */
  async function copyUnderToken(request: CopyDiskRequest, token: string): Promise<Disk> {
    const tags = { ...request.tags, ...identityTags(options.clusterId, request.name) };
    try {
      const out = await call('CopyVolumes', (o) =>
        options.client.send(
          new CopyVolumesCommand({
            ClientToken: token,
            SourceVolumeId: request.sourceVolumeId,
            Size: request.sizeGiB,
            VolumeType: request.type as VolumeType,
            Iops: request.iops,
            Throughput: request.throughput,
            MultiAttachEnabled: request.multiAttach,
            TagSpecifications: [{ ResourceType: 'volume', Tags: tagList(tags) }],
          }),
          o,
        ),
      );
      const volume = out.Volumes?.[0];
      if (!volume?.VolumeId) throw new Ec2Error('other', 'EmptyResponse', `EC2 CopyVolumes of ${request.sourceVolumeId} answered no volume`, 'CopyVolumes');
      return toDisk({ ...volume, Tags: volume.Tags?.length ? volume.Tags : tagList(tags) });
    } catch (err) {
      if (isEc2Error(err, 'idempotentMismatch', 'volumeLimit')) {
        const found = await findDiskByName(request.name);
        if (found && !isGone(found)) return found;
      }
      throw err;
    }
  }

  const findSnapshotsByName = (name: string) =>
    isWellFormedName(name) ? snapshotsByName.load(name) : Promise.reject(malformedSnapshotName(name));

  const inRegions = new Map<string, RegionSnapshots>();
  function snapshotsIn(region: string): RegionSnapshots {
    const known = inRegions.get(region);
    if (known) return known;
    let regional: Ec2Context | Ec2Error;
    try {
      if (!options.clientFor) throw new Ec2Error('other', 'NoRegionClient', `the backend has no EC2 client for Region ${region}`);
      const regionPacer = options.pacing && new Pacer({ ...options.pacing, region }, batchScheduleFn, observer);
      regional = { ...ctx, client: options.clientFor(region), call: pacedCall(regionPacer) };
    } catch (error) {
      if (!(error instanceof Ec2Error)) throw error;
      regional = error;
    }
    const made = regionSnapshots(region, () => options.client.config.region(), regional);
    inRegions.set(region, made);
    return made;
  }

  return {
    findDiskByName,
    getDisk,
    findSnapshotsByName,
    getSnapshot: (snapshotId) => snapshotsById.load(snapshotId),
    listClusterSnapshots: () => describeClusterSnapshots(ctx),
    snapshotsIn,

    async createSnapshot(request) {
      // No ClientToken on CreateSnapshot: the name tag is the only way back to a snapshot made.
      const [existing] = await findSnapshotsByName(request.name);
      if (existing) return existing;
      const tags = { ...request.tags, ...snapshotIdentityTags(options.clusterId, request.name) };
      const out = await call('CreateSnapshot', (o) =>
        options.client.send(
          new CreateSnapshotCommand({ VolumeId: request.volumeId, TagSpecifications: [{ ResourceType: 'snapshot', Tags: tagList(tags) }] }),
          o,
        ),
      );
      return toSnapshot({ ...out, Tags: out.Tags?.length ? out.Tags : tagList(tags) });
    },

    async createSnapshots(request: CreateSnapshotsRequest) {
      // As createSnapshot: the name tag on every snapshot of the set is the only way back to it.
      const existing = await findSnapshotsByName(request.name);
      if (existing.length > 0) return existing;
      const tags = { ...request.tags, ...snapshotIdentityTags(options.clusterId, request.name) };
      const out = await call('CreateSnapshots', (o) =>
        options.client.send(
          new CreateSnapshotsCommand({
            InstanceSpecification: {
              InstanceId: request.instanceId,
              ExcludeBootVolume: true,
              ...(request.excludeDataVolumeIds.length > 0 ? { ExcludeDataVolumeIds: request.excludeDataVolumeIds } : {}),
            },
            TagSpecifications: [{ ResourceType: 'snapshot', Tags: tagList(tags) }],
          }),
          o,
        ),
      );
      // A SnapshotInfo says `State` where a Snapshot says `State` too, and has no StateMessage.
      return (out.Snapshots ?? [])
        .map((s) => toSnapshot({ ...s, Tags: s.Tags?.length ? s.Tags : tagList(tags) }))
        .sort((a, b) => a.volumeId.localeCompare(b.volumeId));
    },

    async deleteSnapshot(snapshotId) {
      try {
        await call('DeleteSnapshot', (o) => options.client.send(new DeleteSnapshotCommand({ SnapshotId: snapshotId }), o));
      } catch (err) {
        if (!isEc2Error(err, 'notFound')) throw err;
      }
    },

    async enableFastSnapshotRestores(snapshotId, zones) {
      const out = await call('EnableFastSnapshotRestores', (o) =>
        options.client.send(new EnableFastSnapshotRestoresCommand({ SourceSnapshotIds: [snapshotId], AvailabilityZones: zones }), o),
      );
      // EC2 answers 200 with the zones it refused listed as unsuccessful.
      const refused = (out.Unsuccessful ?? []).flatMap((u) => u.FastSnapshotRestoreStateErrors ?? []);
      if (refused.length > 0) {
        const reasons = refused.map((r) => `${r.AvailabilityZone ?? '?'}: ${r.Error?.Code ?? '?'} ${r.Error?.Message ?? ''}`.trim());
        throw new Ec2Error('invalidParameter', refused[0]?.Error?.Code ?? 'InvalidParameterValue', `EC2 EnableFastSnapshotRestores of ${snapshotId} refused ${reasons.join('; ')}`, 'EnableFastSnapshotRestores');
      }
    },

    async copyDisk(request) {
      let failed = await findDiskByName(request.name);
      if (failed && !isGone(failed)) return failed;
      for (let generation = 0; generation < MAX_TOKEN_GENERATIONS; generation++) {
        const copied = await copyUnderToken(request, clientTokenFor(options.clusterId, request.name, failed?.volumeId));
        if (!isGone(copied)) return copied;
        failed = copied;
      }
      return failed as Disk;
    },

    listClusterDisks: async () => (await describeClusterVolumes(ctx)).map(toDisk),
    getInstance: (instanceId) => instancesById.load(instanceId),
    zones: () => cachedZones(ctx, options.zonesTtlMs ?? ZONES_TTL_MS),

    async createDisk(request: CreateDiskRequest, lookedUp?: LookedUp): Promise<Disk> {
      let failed = lookedUp ? lookedUp.found : await findDiskByName(request.name);
      if (failed && !isGone(failed)) return failed;
      for (let generation = 0; generation < MAX_TOKEN_GENERATIONS; generation++) {
        const created = await createUnderToken(request, clientTokenFor(options.clusterId, request.name, failed?.volumeId));
        if (!isGone(created)) return created;
        // The token belongs to a volume that failed and is gone: the next generation's.
        failed = created;
      }
      // Still a dead volume after that many: the reconciler sees it and asks again.
      return failed as Disk;
    },

    async attachDisk(volumeId, instanceId, device) {
      try {
        const out = await call('AttachVolume', (o) =>
          options.client.send(new AttachVolumeCommand({ VolumeId: volumeId, InstanceId: instanceId, Device: device }), o),
        );
        return out.State ?? 'attaching';
      } catch (err) {
        // Attached (or attaching) to this very instance already: done, whatever its device.
        if (isEc2Error(err, 'inUse')) {
          const mine = (await getDisk(volumeId))?.attachments.find(
            (a) => a.instanceId === instanceId && (a.state === 'attaching' || a.state === 'attached'),
          );
          if (mine) return mine.state;
        }
        throw err;
      }
    },

    async detachDisk(volumeId, instanceId) {
      try {
        await call('DetachVolume', (o) =>
          options.client.send(new DetachVolumeCommand({ VolumeId: volumeId, InstanceId: instanceId }), o),
        );
      } catch (err) {
        // Volume gone, instance gone, attachment gone, or the volume is `available`.
        if (!isEc2Error(err, 'notFound', 'incorrectState')) throw err;
      }
    },

    getModification: (volumeId) => modificationsById.load(volumeId),
    getInitialization: (volumeId) => initializationsById.load(volumeId),

    async modifyDisk(volumeId: string, change: DiskChange): Promise<DiskModification> {
      try {
        const out = await call('ModifyVolume', (o) =>
          options.client.send(
            new ModifyVolumeCommand({
              VolumeId: volumeId,
              Size: change.sizeGiB,
              VolumeType: change.type as VolumeType | undefined,
              Iops: change.iops,
              Throughput: change.throughput,
            }),
            o,
          ),
        );
        return toModification({ VolumeId: volumeId, ...out.VolumeModification });
      } catch (err) {
        // A retry of a call whose answer was lost: EC2 refuses it as a second modification,
        // and the first is the one we asked for.
        if (isEc2Error(err, 'incorrectState', 'modificationRate')) {
          const latest = await modificationsById.load(volumeId);
          if (latest && latest.state !== 'failed' && isModificationFor(latest, change)) return latest;
        }
        throw err;
      }
    },

    async tagDisk(volumeId, tags) {
      if (Object.keys(tags).length === 0) return;
      await call('CreateTags', (o) => options.client.send(new CreateTagsCommand({ Resources: [volumeId], Tags: tagList(tags) }), o));
    },

    async untagDisk(volumeId, keys) {
      if (keys.length === 0) return;
      await call('DeleteTags', (o) =>
        options.client.send(new DeleteTagsCommand({ Resources: [volumeId], Tags: keys.map((Key) => ({ Key })) }), o),
      );
    },

    async deleteDisk(volumeId) {
      try {
        await call('DeleteVolume', (o) => options.client.send(new DeleteVolumeCommand({ VolumeId: volumeId }), o));
      } catch (err) {
        if (!isEc2Error(err, 'notFound')) throw err;
      }
    },
  };
}

function malformedName(name: string): Ec2Error {
  return new Ec2Error('invalidParameter', 'InvalidParameterValue', `volume name ${JSON.stringify(name)} is not a valid EBS tag value`, 'DescribeVolumes');
}

/** Whether `m` moves the volume to what `change` asks (every field it names). */
function isModificationFor(m: DiskModification, change: DiskChange): boolean {
  return (
    (change.sizeGiB === undefined || m.target.sizeGiB === change.sizeGiB) &&
    (change.type === undefined || m.target.type === change.type) &&
    (change.iops === undefined || m.target.iops === change.iops) &&
    (change.throughput === undefined || m.target.throughput === change.throughput)
  );
}

function mapDefined<T, U>(value: T | undefined, map: (value: T) => U): U | undefined {
  return value === undefined ? undefined : map(value);
}
