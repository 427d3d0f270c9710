import {
  attachmentXml,
  fastRestoreXml,
  instanceStateXml,
  instanceTypeXml,
  instanceXml,
  modificationXml,
  reservationsXml,
  snapshotInfoXml,
  snapshotXml,
  tagSet,
  volumeStatusXml,
  volumeXml,
  zoneXml,
} from './shapes.js';
import { attachVolume, detachVolume } from './attachments.js';
import { Ec2Error, ec2Errors } from './errors.js';
import { compileFilters, type FilterTable } from './filters.js';
import { findInstances, runInstances, terminateInstances } from './instances.js';
import { findInstanceTypes } from './instance-types.js';
import { findVolumeStatuses } from './volume-status.js';
import type { Tag } from './model.js';
import { findModifications, modifyVolume } from './modifications.js';
import { paginate } from './pagination.js';
import { readFilters, readTags, type QueryParams } from './query.js';
import { checkTags, mergeTags, removeTags } from './tags.js';
import { enableFastRestores, findFastRestores } from './fast-restores.js';
import { copySnapshot, createSnapshot, createSnapshots, deleteSnapshot, findSnapshots } from './snapshots.js';
import { checkCreateVolume, copyVolume, createVolume, deleteVolume, findVolumes, type CreateVolumeRequest } from './volumes.js';
import type { World } from './world.js';
import type { XmlObject } from './xml.js';
import type { ZoneInfo } from './config.js';

/** One EC2 action: parameters in, the response body's elements out (or an Ec2Error). */
export type ActionHandler = (world: World, params: QueryParams) => XmlObject;

/** Tags of TagSpecification.N whose ResourceType is allowed for the action, by type. */
function tagSpecifications(params: QueryParams, allowed: readonly string[]): Map<string, Tag[]> {
  const byType = new Map<string, Tag[]>();
  for (const spec of params.structs('TagSpecification')) {
    const type = spec.required('ResourceType', 'TagSpecification.ResourceType');
    if (!allowed.includes(type)) {
      throw ec2Errors.invalidValue(`'${type}' is not a valid taggable resource type for this operation.`);
    }
    const tags = [...(byType.get(type) ?? []), ...readTags(spec).map((t) => ({ key: t.key, value: t.value }))];
    byType.set(type, checkTags(tags));
  }
  return byType;
}

/**
 * What a retry must repeat for its token to name the same request: every parameter but the
 * token, with the tags of TagSpecification.N as a set per resource type. EC2 compares the
 * request, not its encoding, and a client building its tags from a map (the EBS CSI driver
 * ranges over a Go map) lists the same tags in another order on each try.
 */
export function fingerprint(params: QueryParams, tags: ReadonlyMap<string, readonly Tag[]>): string {
  const plain = params.entries().filter(([k]) => !['Action', 'Version', 'ClientToken', 'DryRun'].includes(k) && !k.startsWith('TagSpecification.'));
  const byKey = (a: readonly [string, ...unknown[]], b: readonly [string, ...unknown[]]) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0);
  const tagSets = [...tags]
    .map(([type, list]) => [type, list.map((t) => [t.key, t.value] as const).sort(byKey)] as const)
    .sort(byKey);
  return JSON.stringify({ params: plain, tags: tagSets });
}

const zoneFilters: FilterTable<ZoneInfo & { region: string }> = {
  fields: {
    'zone-name': (z) => [z.name],
    'zone-id': (z) => [z.id],
    state: () => ['available'],
    'region-name': (z) => [z.region],
    'zone-type': () => ['availability-zone'],
    'group-name': (z) => [z.region],
    'opt-in-status': () => ['opt-in-not-required'],
  },
};

/** CreateVolume's parameters, as the action and its dry run read them. */
function createVolumeRequest(p: QueryParams): CreateVolumeRequest {
  const tags = tagSpecifications(p, ['volume']);
  return {
    zone: p.str('AvailabilityZone'),
    zoneId: p.str('AvailabilityZoneId'),
    size: p.int('Size'),
    type: p.str('VolumeType'),
    iops: p.int('Iops'),
    throughput: p.int('Throughput'),
    multiAttach: p.bool('MultiAttachEnabled'),
    snapshotId: p.str('SnapshotId'),
    encrypted: p.bool('Encrypted'),
    kmsKeyId: p.str('KmsKeyId'),
    volumeInitializationRate: p.int('VolumeInitializationRate'),
    tags: tags.get('volume') ?? [],
    clientToken: p.str('ClientToken'),
    fingerprint: fingerprint(p, tags),
  };
}

/**
 * What a dry run judges after IAM, per action: its parameters, as the action would, with no
 * effect. EC2 answers a dry-run call whose parameters it refuses with that refusal, not
 * DryRunOperation; an action not listed is judged by IAM alone.
 */
export const DRY_RUN_CHECKS: Readonly<Record<string, (world: World, params: QueryParams) => void>> = {
  CreateVolume(world, p) {
    checkCreateVolume(world, createVolumeRequest(p));
  },
};

export const ACTIONS: Readonly<Record<string, ActionHandler>> = {
  CreateVolume(world, p) {
    const volume = createVolume(world, createVolumeRequest(p));
    return volumeXml(volume);
  },

  CopyVolumes(world, p) {
    const tags = tagSpecifications(p, ['volume']);
    const volume = copyVolume(world, {
      sourceVolumeId: p.required('SourceVolumeId'),
      size: p.int('Size'),
      type: p.str('VolumeType'),
      iops: p.int('Iops'),
      throughput: p.int('Throughput'),
      multiAttach: p.bool('MultiAttachEnabled'),
      encrypted: p.bool('Encrypted'),
      kmsKeyId: p.str('KmsKeyId'),
      tags: tags.get('volume') ?? [],
      clientToken: p.str('ClientToken'),
      fingerprint: fingerprint(p, tags),
    });
    return { volumeSet: [volumeXml(volume)] };
  },

  CreateSnapshot(world, p) {
    for (const name of ['OutpostArn', 'Location']) {
      if (p.has(name)) throw ec2Errors.invalidValue(`The parameter ${name} is not supported by this simulator (no Outposts or Local Zones).`);
    }
    const snapshot = createSnapshot(world, {
      volumeId: p.required('VolumeId'),
      description: p.str('Description'),
      tags: tagSpecifications(p, ['snapshot']).get('snapshot') ?? [],
    });
    return snapshotXml(snapshot, world.now(), world.env.accountId);
  },

  CreateSnapshots(world, p) {
    for (const name of ['OutpostArn', 'Location']) {
      if (p.has(name)) throw ec2Errors.invalidValue(`The parameter ${name} is not supported by this simulator (no Outposts or Local Zones).`);
    }
    const copy = p.str('CopyTagsFromSource');
    if (copy !== undefined && copy !== 'volume') throw ec2Errors.invalidValue(`Invalid value '${copy}' for CopyTagsFromSource (expected: volume)`);
    const spec = p.scope('InstanceSpecification');
    const snapshots = createSnapshots(world, {
      instanceId: spec.required('InstanceId', 'InstanceSpecification.InstanceId'),
      excludeBootVolume: spec.bool('ExcludeBootVolume') ?? false,
      excludeDataVolumeIds: spec.list('ExcludeDataVolumeId'),
      description: p.str('Description'),
      tags: tagSpecifications(p, ['snapshot']).get('snapshot') ?? [],
      copyTagsFromSource: copy === 'volume',
    });
    return { snapshotSet: snapshots.map((s) => snapshotInfoXml(s, world)) };
  },

  CopySnapshot(world, p) {
    if (p.has('DestinationOutpostArn')) throw ec2Errors.invalidValue('The parameter DestinationOutpostArn is not supported by this simulator (no Outposts).');
    for (const name of ['CompletionDurationMinutes', 'DestinationAvailabilityZone']) {
      if (p.has(name)) throw ec2Errors.invalidValue(`The parameter ${name} is not supported by this simulator (no time-based copies, no Local Zones).`);
    }
    // The SDK fills DestinationRegion (with a PresignedUrl for the source Region) itself; the
    // simulator does not check the presigned URL, but a DestinationRegion other than the Region
    // the call is served in is refused.
    const destination = p.str('DestinationRegion');
    if (destination !== undefined && destination !== world.env.region) {
      throw ec2Errors.invalidValue(`Value (${destination}) for parameter DestinationRegion is invalid: this request is served in ${world.env.region}.`);
    }
    const copy = copySnapshot(world, {
      sourceRegion: p.required('SourceRegion'),
      sourceSnapshotId: p.required('SourceSnapshotId'),
      description: p.str('Description'),
      encrypted: p.bool('Encrypted'),
      kmsKeyId: p.str('KmsKeyId'),
      tags: tagSpecifications(p, ['snapshot']).get('snapshot') ?? [],
    });
    return { snapshotId: copy.id, tagSet: copy.tags.length > 0 ? tagSet(copy.tags) : undefined };
  },

  DeleteSnapshot(world, p) {
    deleteSnapshot(world, p.required('SnapshotId'));
    return { return: true };
  },

  DescribeSnapshots(world, p) {
    if (p.list('RestorableBy').length > 0) {
      throw ec2Errors.invalidValue('The parameter RestorableBy is not supported by this simulator (snapshots are never shared).');
    }
    const ids = p.list('SnapshotId');
    const all = findSnapshots(world, ids, p.list('Owner'), readFilters(p));
    const { page, nextToken } = paginate(all, {
      ids,
      idsParameter: 'snapshotSet',
      maxResults: p.int('MaxResults'),
      nextToken: p.str('NextToken'),
      min: 5,
      max: 1000,
    });
    const now = world.now();
    return { snapshotSet: page.map((s) => snapshotXml(s, now, world.env.accountId)), nextToken };
  },

  EnableFastSnapshotRestores(world, p) {
    const { successful, unsuccessful } = enableFastRestores(world, p.list('SourceSnapshotId'), p.list('AvailabilityZone'), p.list('AvailabilityZoneId'));
    const zoneId = (name: string) => world.zone(name)?.id;
    return {
      successful: successful.map((f) => fastRestoreXml(f, zoneId(f.zone), world.env.accountId)),
      unsuccessful: unsuccessful.map((u) => ({
        snapshotId: u.snapshotId,
        fastSnapshotRestoreStateErrorSet: u.errors.map((e) => ({ availabilityZone: e.zone, error: { code: e.code, message: e.message } })),
      })),
    };
  },

  DescribeFastSnapshotRestores(world, p) {
    const all = findFastRestores(world, readFilters(p));
    const { page, nextToken } = paginate(all, {
      ids: [],
      idsParameter: 'fastSnapshotRestoreSet',
      maxResults: p.int('MaxResults'),
      nextToken: p.str('NextToken'),
      min: 1,
      max: 200,
    });
    return { fastSnapshotRestoreSet: page.map((f) => fastRestoreXml(f, world.zone(f.zone)?.id, world.env.accountId)), nextToken };
  },

  DeleteVolume(world, p) {
    deleteVolume(world, p.required('VolumeId'));
    return { return: true };
  },

  DescribeVolumes(world, p) {
    const ids = p.list('VolumeId');
    const all = findVolumes(world, ids, readFilters(p));
    const { page, nextToken } = paginate(all, {
      ids,
      idsParameter: 'volumeSet',
      maxResults: p.int('MaxResults'),
      nextToken: p.str('NextToken'),
      min: 5,
      max: 500,
    });
    return { volumeSet: page.map(volumeXml), nextToken };
  },

  DescribeVolumeStatus(world, p) {
    if (p.has('IncludeManagedResources')) {
      throw ec2Errors.invalidValue('The parameter IncludeManagedResources is not supported by this simulator (no managed resources).');
    }
    const ids = p.list('VolumeId');
    const all = findVolumeStatuses(world, ids, readFilters(p));
    const { page, nextToken } = paginate(all, {
      ids,
      idsParameter: 'volumeSet',
      maxResults: p.int('MaxResults'),
      nextToken: p.str('NextToken'),
      min: 5,
      max: 1000,
    });
    return { volumeStatusSet: page.map((s) => volumeStatusXml(s, world.zone(s.volume.zone)?.id)), nextToken };
  },

  AttachVolume(world, p) {
    const { volume, attachment } = attachVolume(world, p.required('VolumeId'), p.required('InstanceId'), p.required('Device'));
    return attachmentXml(volume.id, attachment, false);
  },

  DetachVolume(world, p) {
    const { volume, attachment } = detachVolume(world, {
      volumeId: p.required('VolumeId'),
      instanceId: p.str('InstanceId'),
      device: p.str('Device'),
      force: p.bool('Force'),
    });
    return attachmentXml(volume.id, attachment, false);
  },

  ModifyVolume(world, p) {
    const m = modifyVolume(world, p.required('VolumeId'), {
      size: p.int('Size'),
      type: p.str('VolumeType'),
      iops: p.int('Iops'),
      throughput: p.int('Throughput'),
      multiAttach: p.bool('MultiAttachEnabled'),
    });
    return { volumeModification: modificationXml(m) };
  },

  DescribeVolumesModifications(world, p) {
    const ids = p.list('VolumeId');
    const all = findModifications(world, ids, readFilters(p));
    const { page, nextToken } = paginate(all, {
      ids: [],
      idsParameter: 'volumeSet',
      maxResults: p.int('MaxResults'),
      nextToken: p.str('NextToken'),
      min: 1,
      max: 500,
    });
    return { volumeModificationSet: page.map(modificationXml), nextToken };
  },

  RunInstances(world, p) {
    const min = Number(p.required('MinCount'));
    const max = Number(p.required('MaxCount'));
    if (!Number.isInteger(min) || !Number.isInteger(max) || min < 1 || max < min) {
      throw ec2Errors.invalidValue(`Invalid value for MinCount/MaxCount: ${min}/${max}`);
    }
    const tags = tagSpecifications(p, ['instance', 'volume']);
    const instances = runInstances(world, {
      imageId: p.required('ImageId'),
      instanceType: p.str('InstanceType'),
      zone: p.str('Placement.AvailabilityZone'),
      count: max,
      instanceTags: tags.get('instance'),
      volumeTags: tags.get('volume'),
      clientToken: p.str('ClientToken'),
    });
    const first = instances[0] as (typeof instances)[number];
    return {
      reservationId: first.reservationId,
      ownerId: world.env.accountId,
      groupSet: [],
      instancesSet: instances.map((i, n) => instanceXml(world, i, n)),
    };
  },

  TerminateInstances(world, p) {
    const changes = terminateInstances(world, p.list('InstanceId'));
    return {
      instancesSet: changes.map(({ instance, previous }) => ({
        instanceId: instance.id,
        currentState: instanceStateXml(instance.state),
        previousState: instanceStateXml(previous),
      })),
    };
  },

  DescribeInstances(world, p) {
    const ids = p.list('InstanceId');
    const all = findInstances(world, ids, readFilters(p));
    const { page, nextToken } = paginate(all, {
      ids,
      idsParameter: 'instancesSet',
      maxResults: p.int('MaxResults'),
      nextToken: p.str('NextToken'),
      min: 5,
      max: 1000,
    });
    return { reservationSet: reservationsXml(world, page), nextToken };
  },

  DescribeInstanceTypes(_world, p) {
    const all = findInstanceTypes(p.list('InstanceType'), readFilters(p));
    const { page, nextToken } = paginate(all, {
      // EC2's reference documents no refusal of MaxResults together with InstanceType.N.
      ids: [],
      idsParameter: 'instanceTypeSet',
      maxResults: p.int('MaxResults'),
      nextToken: p.str('NextToken'),
      min: 5,
      max: 100,
    });
    return { instanceTypeSet: page.map(({ seq: _seq, ...t }) => instanceTypeXml(t)), nextToken };
  },

  CreateTags(world, p) {
    const resources = p.list('ResourceId');
    if (resources.length === 0) throw ec2Errors.missing('resourceIdSet');
    const tags = checkTags(readTags(p));
    if (tags.length === 0) throw ec2Errors.missing('tagSet');
    const targets = resources.map((id) => taggable(world, id));
    const updated = targets.map((t) => mergeTags(t.tags, tags));
    targets.forEach((t, n) => (t.tags = updated[n] as Tag[]));
    world.changed();
    return { return: true };
  },

  DeleteTags(world, p) {
    const resources = p.list('ResourceId');
    if (resources.length === 0) throw ec2Errors.missing('resourceIdSet');
    const remove = readTags(p);
    for (const target of resources.map((id) => taggable(world, id))) target.tags = removeTags(target.tags, remove);
    world.changed();
    return { return: true };
  },

  DescribeAvailabilityZones(world, p) {
    const { region, zones } = world.env;
    const names = p.list('ZoneName');
    const ids = p.list('ZoneId');
    for (const n of names) {
      if (!zones.some((z) => z.name === n)) throw ec2Errors.invalidValue(`Invalid availability zone: [${n}]`);
    }
    for (const n of ids) {
      if (!zones.some((z) => z.id === n)) throw ec2Errors.invalidValue(`Invalid availability zone: [${n}]`);
    }
    const keep = compileFilters(readFilters(p), zoneFilters);
    const list = zones
      .filter((z) => (names.length === 0 || names.includes(z.name)) && (ids.length === 0 || ids.includes(z.id)))
      .filter((z) => keep({ ...z, region }));
    return { availabilityZoneInfo: list.map((z) => zoneXml(region, z)) };
  },
};

function taggable(world: World, id: string): { tags: Tag[] } {
  if (id.startsWith('vol-')) return world.getVolume(id);
  if (id.startsWith('snap-')) return world.getSnapshot(id);
  if (id.startsWith('i-')) return world.getInstance(id);
  throw new Ec2Error('InvalidID', `The ID '${id}' is not valid`);
}
