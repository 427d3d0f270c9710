import { Ec2Error, ec2Errors } from './errors.js';
import { compileFilters, type FilterTable } from './filters.js';
import type { Tag, Volume } from './model.js';
import type { QueryFilter } from './query.js';
import { fastRestored } from './fast-restores.js';
import { restorableSnapshot } from './snapshots.js';
import { resolveCreateSpec, type VolumeSpecRequest } from './volume-rules.js';
import type { World } from './world.js';

export interface CreateVolumeRequest extends VolumeSpecRequest {
  zone?: string;
  zoneId?: string;
  size?: number;
  snapshotId?: string;
  encrypted?: boolean;
  kmsKeyId?: string;
  /** MiB/s, 100–300, only with a snapshot. */
  volumeInitializationRate?: number;
  tags: Tag[];
  clientToken?: string;
  /** Canonical form of every parameter but the token, to tell a retry from a reuse. */
  fingerprint: string;
}

/** Answers a repeated token: the same volume as it is now, `deleted` once gone; other parameters are refused. */
function replayToken(world: World, key: string | undefined, shown: string | undefined, fingerprint: string): Volume | undefined {
  if (key === undefined || shown === undefined) return undefined;
  if (shown.length > 64) {
    throw ec2Errors.invalidValue(`Value (${shown}) for parameter clientToken is invalid. Length exceeds 64.`);
  }
  const seen = world.clientTokens.get(key);
  if (!seen) return undefined;
  if (seen.fingerprint !== fingerprint) {
    throw new Ec2Error('IdempotentParameterMismatch', `Client token '${shown}' was already used with different request parameters.`);
  }
  return world.volumes.get(seen.volumeId) ?? { ...structuredClone(seen.original), state: 'deleted', attachments: [] };
}

function rememberToken(world: World, key: string | undefined, volume: Volume, fingerprint: string): void {
  if (key === undefined) return;
  world.clientTokens.set(key, { volumeId: volume.id, fingerprint, at: world.now(), original: structuredClone(volume) });
}

/** Encryption of a new volume: an encrypted source (snapshot or volume) always gives an encrypted one. */
function encryptionOf(
  world: World,
  req: { encrypted?: boolean; kmsKeyId?: string },
  source?: { encrypted: boolean; kmsKeyId?: string },
): { encrypted: boolean; kmsKeyId?: string } {
  if (req.kmsKeyId !== undefined && req.encrypted !== true) {
    throw new Ec2Error('InvalidParameterDependency', 'The parameter KmsKeyId requires the parameter Encrypted to be set.');
  }
  const { accountId, region } = world.env;
  if (req.kmsKeyId !== undefined) return { encrypted: true, kmsKeyId: kmsKeyArn(req.kmsKeyId, region, accountId) };
  if (source?.encrypted) return { encrypted: true, kmsKeyId: source.kmsKeyId };
  if (req.encrypted) return { encrypted: true, kmsKeyId: kmsKeyArn('aws/ebs', region, accountId) };
  return { encrypted: false };
}

/** The volume a CreateVolume would make, before it has an id. */
type PlannedVolume = Pick<Volume, 'zone' | 'type' | 'size' | 'iops' | 'throughput' | 'multiAttach' | 'encrypted' | 'kmsKeyId'> & {
  snapshot?: { id: string; fastRestored: boolean; volumeInitializationRate?: number };
};

/**
 * CreateVolume's checks of its parameters, with no effect: the volume it would make, or the
 * error EC2 answers. A dry run is judged by them too (EC2 answers a dry-run CreateVolume of
 * too many IOPS with the limit, which the EBS CSI driver reads to learn the limits of a zone).
 */
export function checkCreateVolume(world: World, req: CreateVolumeRequest): PlannedVolume {
  const zone = resolveZone(world, req);
  const snapshot = req.snapshotId === undefined ? undefined : restorableSnapshot(world, req.snapshotId);
  if (req.volumeInitializationRate !== undefined) {
    if (!snapshot) {
      throw ec2Errors.combination('The parameter VolumeInitializationRate is supported only for volumes created from snapshots.');
    }
    if (req.volumeInitializationRate < 100 || req.volumeInitializationRate > 300) {
      throw ec2Errors.invalidValue(`Value (${req.volumeInitializationRate}) for parameter VolumeInitializationRate is invalid. Valid range: 100 - 300 MiB/s.`);
    }
  }
  const size = req.size ?? snapshot?.volumeSize;
  if (size === undefined) throw ec2Errors.missing('size');
  if (snapshot && size < snapshot.volumeSize) {
    throw ec2Errors.invalidValue(
      `Volume of size ${size}GB is smaller than snapshot '${snapshot.id}', expect size >= ${snapshot.volumeSize}GB`,
    );
  }
  const spec = resolveCreateSpec({ ...req, size });
  return {
    zone,
    ...spec,
    ...encryptionOf(world, req, snapshot),
    ...(snapshot
      ? {
          snapshot: {
            id: snapshot.id,
            fastRestored: req.volumeInitializationRate === undefined && fastRestored(world, snapshot.id, zone),
            volumeInitializationRate: req.volumeInitializationRate,
          },
        }
      : {}),
  };
}

/**
 * CreateVolume. A token seen before with the same parameters answers with the same volume as
 * it is now — `deleted` once it is gone, never a new one (EC2 keeps tokens for hours: "the
 * result might contain updated information, such as the current creation status"); with
 * other parameters it is refused.
 */
export function createVolume(world: World, req: CreateVolumeRequest): Volume {
  const replay = replayToken(world, req.clientToken, req.clientToken, req.fingerprint);
  if (replay) return replay;
  const { snapshot, ...planned } = checkCreateVolume(world, req);
  const volume: Volume = {
    id: world.newId('vol'),
    seq: world.nextSeq(),
    ...planned,
    state: 'creating',
    createTime: world.now(),
    tags: req.tags,
    attachments: [],
    ...(snapshot
      ? {
          snapshotId: snapshot.id,
          fastRestored: snapshot.fastRestored,
          volumeInitializationRate: snapshot.volumeInitializationRate,
        }
      : {}),
  };
  world.volumes.set(volume.id, volume);
  world.schedule({ kind: 'volume-created', volumeId: volume.id, outcome: createOutcome(world, req) }, world.latency('create'));
  rememberToken(world, req.clientToken, volume, req.fingerprint);
  world.changed();
  return volume;
}

export interface CopyVolumeRequest extends VolumeSpecRequest {
  sourceVolumeId: string;
  encrypted?: boolean;
  kmsKeyId?: string;
  tags: Tag[];
  clientToken?: string;
  fingerprint: string;
}

/**
 * CopyVolumes: a new volume in the source's zone, `creating` then `available` like
 * CreateVolume, with its own tags (none are copied), `sourceVolumeId` set, size at least the
 * source's (the default), type gp2 unless given, encrypted whenever the source is. The source
 * must be `available` or `in-use`. Tokens are kept apart from CreateVolume's.
 */
export function copyVolume(world: World, req: CopyVolumeRequest): Volume {
  const tokenKey = req.clientToken === undefined ? undefined : `CopyVolumes ${req.clientToken}`;
  const replay = replayToken(world, tokenKey, req.clientToken, req.fingerprint);
  if (replay) return replay;
  const source = world.getVolume(req.sourceVolumeId);
  if (source.state !== 'available' && source.state !== 'in-use') {
    throw ec2Errors.incorrectState(`The volume '${source.id}' is not in a valid state for this operation: ${source.state}.`);
  }
  const size = req.size ?? source.size;
  if (size < source.size) {
    throw ec2Errors.invalidValue(`The size of the volume copy (${size}GiB) must be equal to or greater than the size of the source volume (${source.size}GiB).`);
  }
  const spec = resolveCreateSpec({ ...req, size });
  const volume: Volume = {
    id: world.newId('vol'),
    seq: world.nextSeq(),
    zone: source.zone,
    ...spec,
    ...encryptionOf(world, req, source),
    state: 'creating',
    createTime: world.now(),
    tags: req.tags,
    attachments: [],
    sourceVolumeId: source.id,
  };
  world.volumes.set(volume.id, volume);
  world.schedule({ kind: 'volume-created', volumeId: volume.id, outcome: createOutcome(world, req) }, world.latency('create'));
  rememberToken(world, tokenKey, volume, req.fingerprint);
  world.changed();
  return volume;
}

function resolveZone(world: World, req: CreateVolumeRequest): string {
  if (req.zone !== undefined && req.zoneId !== undefined) {
    throw ec2Errors.combination('Only one of AvailabilityZone or AvailabilityZoneId can be specified.');
  }
  if (req.zoneId !== undefined) {
    const z = world.env.zones.find((x) => x.id === req.zoneId);
    if (!z) throw new Ec2Error('InvalidZone.NotFound', `The zone '${req.zoneId}' does not exist.`);
    return z.name;
  }
  if (req.zone === undefined || req.zone === '') throw ec2Errors.missing('zone');
  if (!world.zone(req.zone)) throw new Ec2Error('InvalidZone.NotFound', `The zone '${req.zone}' does not exist.`);
  return req.zone;
}

/** Key IDs become key ARNs, aliases alias ARNs, as DescribeVolumes reports them. */
export function kmsKeyArn(key: string, region: string, accountId: string): string {
  if (key.startsWith('arn:')) return key;
  if (key.startsWith('alias/')) return `arn:aws:kms:${region}:${accountId}:${key}`;
  if (key === 'aws/ebs') return `arn:aws:kms:${region}:${accountId}:alias/aws/ebs`;
  return `arn:aws:kms:${region}:${accountId}:key/${key}`;
}

function createOutcome(world: World, req: { kmsKeyId?: string; tags: Tag[] }): 'available' | 'error' | 'vanish' {
  for (const rule of world.env.createFaults) {
    if (rule.kmsKeyIdContains !== undefined && !(req.kmsKeyId ?? '').includes(rule.kmsKeyIdContains)) continue;
    if (rule.tag && !req.tags.some((t) => t.key === rule.tag?.key && (rule.tag.value === undefined || t.value === rule.tag.value))) {
      continue;
    }
    if (rule.rate === undefined || world.env.rng.next() < rule.rate) return rule.outcome;
  }
  return 'available';
}

/** DeleteVolume: refused while attached; a volume already deleting stays so. */
export function deleteVolume(world: World, volumeId: string): void {
  const v = world.getVolume(volumeId);
  const attachment = v.attachments[0];
  if (attachment) {
    throw new Ec2Error('VolumeInUse', `Volume ${v.id} is currently attached to ${attachment.instanceId}`);
  }
  if (v.state === 'deleting') return;
  v.state = 'deleting';
  world.schedule({ kind: 'volume-deleted', volumeId: v.id }, world.latency('delete'));
  world.changed();
}

const volumeFilters: FilterTable<Volume> = {
  fields: {
    'volume-id': (v) => [v.id],
    'availability-zone': (v) => [v.zone],
    status: (v) => [v.state],
    'volume-type': (v) => [v.type],
    size: (v) => [String(v.size)],
    encrypted: (v) => [String(v.encrypted)],
    'multi-attach-enabled': (v) => [String(v.multiAttach)],
    'create-time': (v) => [new Date(v.createTime).toISOString()],
    'attachment.instance-id': (v) => v.attachments.map((a) => a.instanceId),
    'attachment.status': (v) => v.attachments.map((a) => a.state),
    'attachment.device': (v) => v.attachments.map((a) => a.device),
    'attachment.delete-on-termination': (v) => v.attachments.map((a) => String(a.deleteOnTermination)),
    'attachment.attach-time': (v) => v.attachments.map((a) => new Date(a.attachTime).toISOString()),
    'snapshot-id': (v) => (v.snapshotId ? [v.snapshotId] : []),
    'fast-restored': (v) => [String(v.fastRestored ?? false)],
  },
  tags: (v) => v.tags,
};

/** The volumes DescribeVolumes would list, in creation order, before pagination. */
export function findVolumes(world: World, ids: readonly string[], filters: readonly QueryFilter[]): Volume[] {
  const keep = compileFilters(filters, volumeFilters);
  const base = ids.length > 0 ? ids.map((id) => world.getVolume(id)) : [...world.volumes.values()];
  const unique = [...new Set(base)].sort((a, b) => a.seq - b.seq);
  return unique.filter(keep);
}
