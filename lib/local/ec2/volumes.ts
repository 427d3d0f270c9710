import { Ec2Error, ec2Errors } from './errors.js';
import { compileFilters, type FilterTable } from './filters.js';
import type { Tag, Volume } from './model.js';
import type { QueryFilter } from './query.js';
import { resolveCreateSpec, type VolumeSpecRequest } from './volume-rules.js';
import type { World } from './world.js';

export interface CreateVolumeRequest extends VolumeSpecRequest {
  zone?: string;
  zoneId?: string;
  size?: number;
  snapshotId?: string;
  encrypted?: boolean;
  kmsKeyId?: string;
  tags: Tag[];
  clientToken?: string;
  /** Canonical form of every parameter but the token, to tell a retry from a reuse. */
  fingerprint: string;
}

/**
 * CreateVolume. A token seen before with the same parameters answers with the same volume as
 * it is now — `deleted` once it is gone, never a new one (EC2 keeps tokens for hours: "the
 * result might contain updated information, such as the current creation status"); with
 * other parameters it is refused.
 */
export function createVolume(world: World, req: CreateVolumeRequest): Volume {
  if (req.clientToken !== undefined) {
    if (req.clientToken.length > 64) {
      throw ec2Errors.invalidValue(`Value (${req.clientToken}) for parameter clientToken is invalid. Length exceeds 64.`);
    }
    const seen = world.clientTokens.get(req.clientToken);
    if (seen) {
      if (seen.fingerprint !== req.fingerprint) {
        throw new Ec2Error(
          'IdempotentParameterMismatch',
          `Client token '${req.clientToken}' was already used with different request parameters.`,
        );
      }
      return world.volumes.get(seen.volumeId) ?? { ...structuredClone(seen.original), state: 'deleted', attachments: [] };
    }
  }
  const zone = resolveZone(world, req);
  if (req.snapshotId !== undefined) {
    throw new Ec2Error('InvalidSnapshot.NotFound', `The snapshot '${req.snapshotId}' does not exist.`);
  }
  if (req.size === undefined) throw ec2Errors.missing('size');
  const spec = resolveCreateSpec({ ...req, size: req.size });
  if (req.kmsKeyId !== undefined && req.encrypted !== true) {
    throw new Ec2Error(
      'InvalidParameterDependency',
      'The parameter KmsKeyId requires the parameter Encrypted to be set.',
    );
  }
  const { accountId, region } = world.env;
  const volume: Volume = {
    id: world.newId('vol'),
    seq: world.nextSeq(),
    zone,
    ...spec,
    encrypted: req.encrypted === true,
    kmsKeyId: req.encrypted ? kmsKeyArn(req.kmsKeyId ?? 'aws/ebs', region, accountId) : undefined,
    state: 'creating',
    createTime: world.now(),
    tags: req.tags,
    attachments: [],
  };
  world.volumes.set(volume.id, volume);
  world.schedule({ kind: 'volume-created', volumeId: volume.id, outcome: createOutcome(world, req) }, world.latency('create'));
  if (req.clientToken !== undefined) {
    world.clientTokens.set(req.clientToken, {
      volumeId: volume.id,
      fingerprint: req.fingerprint,
      at: world.now(),
      original: structuredClone(volume),
    });
  }
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
function kmsKeyArn(key: string, region: string, accountId: string): string {
  if (key.startsWith('arn:')) return key;
  if (key.startsWith('alias/')) return `arn:aws:kms:${region}:${accountId}:${key}`;
  if (key === 'aws/ebs') return `arn:aws:kms:${region}:${accountId}:alias/aws/ebs`;
  return `arn:aws:kms:${region}:${accountId}:key/${key}`;
}

function createOutcome(world: World, req: CreateVolumeRequest): 'available' | 'error' | 'vanish' {
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
