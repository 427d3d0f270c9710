import { Ec2Error, ec2Errors } from './errors.js';
import { compileFilters, type FilterTable } from './filters.js';
import type { Snapshot, Tag, Volume } from './model.js';
import type { QueryFilter } from './query.js';
import type { World } from './world.js';
import { kmsKeyArn } from './volumes.js';

/** Pending snapshots one volume may have: five, one for st1 and sc1 (EBS user guide). */
const CONCURRENT_LIMIT: Readonly<Record<string, number>> = { st1: 1, sc1: 1 };
const DEFAULT_CONCURRENT_LIMIT = 5;
/** "Wait at least 15 seconds between concurrent volume snapshots." */
const PER_VOLUME_INTERVAL_MS = 15_000;
const MAX_DESCRIPTION = 255;

export interface CreateSnapshotRequest {
  volumeId: string;
  description?: string;
  tags: Tag[];
}

/**
 * CreateSnapshot: `pending` at once, `completed` after the `snapshot` latency (or `error`,
 * when a snapshot fault rule matches). It has no ClientToken: every call makes a new snapshot.
 * The snapshot carries the volume's size and encryption.
 */
export function createSnapshot(world: World, req: CreateSnapshotRequest): Snapshot {
  const volume = world.getVolume(req.volumeId);
  checkDescription(req.description);
  checkSnapshotable(world, volume);
  return startSnapshot(world, volume, req.description ?? '', req.tags);
}

function checkDescription(description: string | undefined): void {
  if ((description ?? '').length > MAX_DESCRIPTION) {
    throw ec2Errors.invalidValue(`Value for parameter description is invalid. Length exceeds ${MAX_DESCRIPTION}.`);
  }
}

/** The volume may be snapshotted now: its state, and the per-volume limits on pending snapshots. */
function checkSnapshotable(world: World, volume: Volume): void {
  if (volume.state !== 'available' && volume.state !== 'in-use') {
    throw ec2Errors.incorrectState(`The volume '${volume.id}' is not in a valid state for this operation: ${volume.state}.`);
  }
  const now = world.now();
  const pending = [...world.snapshots.values()].filter((s) => s.volumeId === volume.id && s.state === 'pending');
  if (pending.length >= (CONCURRENT_LIMIT[volume.type] ?? DEFAULT_CONCURRENT_LIMIT)) {
    throw new Ec2Error(
      'ConcurrentSnapshotLimitExceeded',
      `Maximum allowed in-progress snapshots for a single volume exceeded (volume '${volume.id}').`,
    );
  }
  if (pending.some((s) => now - s.startTime < world.wall(PER_VOLUME_INTERVAL_MS))) {
    throw new Ec2Error(
      'SnapshotCreationPerVolumeRateExceeded',
      'The rate limit for creating concurrent snapshots of an EBS volume has been exceeded. Wait at least 15 seconds between concurrent volume snapshots.',
    );
  }
}

function startSnapshot(world: World, volume: Volume, description: string, tags: Tag[]): Snapshot {
  const now = world.now();
  const delay = world.latency('snapshot');
  const snapshot: Snapshot = {
    id: world.newId('snap'),
    seq: world.nextSeq(),
    volumeId: volume.id,
    volumeSize: volume.size,
    state: 'pending',
    startTime: now,
    dueTime: now + delay,
    description,
    encrypted: volume.encrypted,
    kmsKeyId: volume.kmsKeyId,
    tags,
  };
  world.snapshots.set(snapshot.id, snapshot);
  world.schedule({ kind: 'snapshot-completed', snapshotId: snapshot.id, outcome: snapshotOutcome(world, volume, tags) }, delay);
  world.changed();
  return snapshot;
}

/** "You can specify up to 40 volume IDs per request" (InstanceSpecification.ExcludeDataVolumeIds). */
const MAX_EXCLUDED_VOLUMES = 40;

export interface CreateSnapshotsRequest {
  instanceId: string;
  excludeBootVolume: boolean;
  excludeDataVolumeIds: readonly string[];
  description?: string;
  /** TagSpecification.N of type snapshot, on every snapshot. */
  tags: Tag[];
  /** CopyTagsFromSource=volume: each snapshot also gets its volume's tags (those of the request win). */
  copyTagsFromSource: boolean;
}

/**
 * CreateSnapshots: one crash-consistent set, a snapshot of each volume attached to the instance
 * at one point in time, less the root volume (ExcludeBootVolume) and the data volumes named in
 * ExcludeDataVolumeId.N. All or nothing: every volume is checked before any snapshot starts.
 * Naming the root volume among the excluded data volumes fails, as EC2 documents; so does
 * naming a volume not attached to the instance, or leaving nothing to snapshot (the simulator's
 * reading: EC2 documents neither case's error).
 */
export function createSnapshots(world: World, req: CreateSnapshotsRequest): Snapshot[] {
  const instance = world.getInstance(req.instanceId);
  checkDescription(req.description);
  if (instance.state === 'terminated' || instance.state === 'shutting-down' || instance.state === 'pending') {
    throw new Ec2Error('IncorrectInstanceState', `The instance '${instance.id}' is not in a state from which it can be snapshotted: ${instance.state}.`);
  }
  if (req.excludeDataVolumeIds.length > MAX_EXCLUDED_VOLUMES) {
    throw ec2Errors.invalidValue(`InstanceSpecification.ExcludeDataVolumeIds: at most ${MAX_EXCLUDED_VOLUMES} volume IDs may be given.`);
  }
  const attached = [...world.volumes.values()]
    .filter((v) => v.attachments.some((a) => a.instanceId === instance.id && (a.state === 'attached' || a.state === 'attaching')))
    .sort((a, b) => a.seq - b.seq);
  const isRoot = (v: Volume) => v.attachments.some((a) => a.instanceId === instance.id && a.device === instance.rootDeviceName);
  for (const id of req.excludeDataVolumeIds) {
    const volume = attached.find((v) => v.id === id);
    if (!volume) throw ec2Errors.invalidValue(`The volume '${id}' in ExcludeDataVolumeIds is not attached to instance '${instance.id}'.`);
    if (isRoot(volume)) {
      throw ec2Errors.invalidValue(`The volume '${id}' is the root volume of instance '${instance.id}': exclude it with ExcludeBootVolume, not ExcludeDataVolumeIds.`);
    }
  }
  const chosen = attached.filter((v) => !(req.excludeBootVolume && isRoot(v)) && !req.excludeDataVolumeIds.includes(v.id));
  if (chosen.length === 0) throw ec2Errors.invalidValue(`The instance '${instance.id}' has no volumes to snapshot after the exclusions.`);
  for (const volume of chosen) checkSnapshotable(world, volume);
  const requested = new Set(req.tags.map((t) => t.key));
  return chosen.map((volume) => {
    const copied = req.copyTagsFromSource ? volume.tags.filter((t) => !requested.has(t.key) && !t.key.toLowerCase().startsWith('aws:')) : [];
    return startSnapshot(world, volume, req.description ?? '', [...copied, ...req.tags]);
  });
}

function hasTag(tags: readonly Tag[], rule: { key: string; value?: string } | undefined): boolean {
  return !rule || tags.some((t) => t.key === rule.key && (rule.value === undefined || t.value === rule.value));
}

function snapshotOutcome(world: World, volume: Volume, tags: readonly Tag[]): 'completed' | 'error' {
  for (const rule of world.env.snapshotFaults) {
    if (!hasTag(volume.tags, rule.volumeTag) || !hasTag(tags, rule.tag)) continue;
    if (rule.rate === undefined || world.env.rng.next() < rule.rate) return rule.outcome;
  }
  return 'completed';
}

/**
 * DeleteSnapshot. A finished snapshot goes at once; a pending one may be deleted too, but
 * "the snapshot must complete before the deletion takes effect" (EBS user guide), so it
 * stays listed as `pending` until then, and a repeated delete succeeds again. A snapshot
 * that is gone answers InvalidSnapshot.NotFound. (No AMIs or snapshot locks here, so no
 * InvalidSnapshot.InUse.)
 */
export function deleteSnapshot(world: World, snapshotId: string): void {
  const snap = world.getSnapshot(snapshotId);
  if (snap.state === 'pending') snap.deleteRequested = true;
  else world.dropSnapshot(snap.id);
  world.changed();
}

/** `NN%`, as EC2 reports it: from the time elapsed, 100% once finished. */
export function snapshotProgress(snap: Snapshot, now: number): string {
  if (snap.state !== 'pending') return snap.state === 'completed' ? '100%' : '0%';
  const span = snap.dueTime - snap.startTime;
  const done = span <= 0 ? 99 : Math.floor(((now - snap.startTime) / span) * 100);
  return `${Math.max(0, Math.min(99, done))}%`;
}

/** The snapshot CreateVolume may restore: finished, and not on its way out. */
export function restorableSnapshot(world: World, snapshotId: string): Snapshot {
  const snap = world.getSnapshot(snapshotId);
  if (snap.state !== 'completed') throw ec2Errors.incorrectState(`Snapshot is in invalid state - ${snap.state}`);
  return snap;
}

function snapshotFilters(world: World): FilterTable<Snapshot> {
  const { accountId } = world.env;
  return {
    fields: {
      description: (s) => [s.description],
      encrypted: (s) => [String(s.encrypted)],
      'owner-alias': () => [],
      'owner-id': () => [accountId],
      progress: (s) => [snapshotProgress(s, world.now())],
      'snapshot-id': (s) => [s.id],
      'start-time': (s) => [new Date(s.startTime).toISOString()],
      status: (s) => [s.state],
      'storage-tier': () => ['standard'],
      'transfer-type': () => [],
      'volume-id': (s) => [s.volumeId],
      'volume-size': (s) => [String(s.volumeSize)],
    },
    tags: (s) => s.tags,
  };
}

/**
 * The snapshots DescribeSnapshots would list, in creation order, before pagination. Every
 * snapshot here belongs to the simulated account: `Owner` `self` or its ID keeps them, any
 * other owner (`amazon`, another account) has none.
 */
export function findSnapshots(
  world: World,
  ids: readonly string[],
  owners: readonly string[],
  filters: readonly QueryFilter[],
): Snapshot[] {
  const keep = compileFilters(filters, snapshotFilters(world));
  const base = ids.length > 0 ? ids.map((id) => world.getSnapshot(id)) : [...world.snapshots.values()];
  const ours = owners.length === 0 || owners.some((o) => o === 'self' || o === world.env.accountId);
  if (!ours) return [];
  return [...new Set(base)].sort((a, b) => a.seq - b.seq).filter(keep);
}

export interface CopySnapshotRequest {
  sourceRegion: string;
  sourceSnapshotId: string;
  description?: string;
  encrypted?: boolean;
  kmsKeyId?: string;
  /** TagSpecification.N of type snapshot: the copy's only tags (CopySnapshot copies none of the source's). */
  tags: Tag[];
}

/** "Snapshot copies have an arbitrary source volume ID" (EC2 API reference): the one EC2 shows. */
export const COPY_VOLUME_ID = 'vol-ffffffff';

/**
 * CopySnapshot, served in the destination Region (`world`): a new `pending` snapshot of the
 * source's size, `completed` after the `snapshot` latency. The source must be `completed`, in
 * `sourceRegion` of the same account. A copy of an encrypted source is encrypted; a key named
 * is one of the destination Region (the source's cannot be used there), and KmsKeyId needs
 * Encrypted, as for CreateVolume. CopySnapshot has no ClientToken: every call makes a new copy.
 */
export function copySnapshot(world: World, req: CopySnapshotRequest): Snapshot {
  checkDescription(req.description);
  const sourceWorld = world.inRegion(req.sourceRegion);
  if (!sourceWorld) throw ec2Errors.invalidValue(`Value (${req.sourceRegion}) for parameter SourceRegion is invalid: the simulator holds no such Region.`);
  const source = sourceWorld.getSnapshot(req.sourceSnapshotId);
  if (source.state !== 'completed') throw ec2Errors.incorrectState(`Snapshot is in invalid state - ${source.state}`);
  if (req.kmsKeyId !== undefined && req.encrypted !== true) {
    throw new Ec2Error('InvalidParameterDependency', 'The parameter KmsKeyId requires the parameter Encrypted to be set.');
  }
  const { region, accountId } = world.env;
  const encrypted = source.encrypted || req.encrypted === true;
  const kmsKeyId = !encrypted ? undefined : kmsKeyArn(req.kmsKeyId ?? 'aws/ebs', region, accountId);
  const now = world.now();
  const delay = world.latency('snapshot');
  const copy: Snapshot = {
    id: world.newId('snap'),
    seq: world.nextSeq(),
    volumeId: COPY_VOLUME_ID,
    volumeSize: source.volumeSize,
    state: 'pending',
    startTime: now,
    dueTime: now + delay,
    description: req.description ?? `[Copied ${source.id} from ${req.sourceRegion}]`,
    encrypted,
    ...(kmsKeyId !== undefined && { kmsKeyId }),
    tags: req.tags,
    copiedFrom: { region: req.sourceRegion, snapshotId: source.id },
  };
  world.snapshots.set(copy.id, copy);
  world.schedule({ kind: 'snapshot-completed', snapshotId: copy.id, outcome: 'completed' }, delay);
  world.changed();
  return copy;
}
