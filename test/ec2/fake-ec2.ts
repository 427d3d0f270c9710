import {
  AttachVolumeCommand,
  CopyVolumesCommand,
  CreateSnapshotCommand,
  CreateTagsCommand,
  CreateVolumeCommand,
  DeleteSnapshotCommand,
  DeleteVolumeCommand,
  DescribeAvailabilityZonesCommand,
  DescribeSnapshotsCommand,
  DescribeInstancesCommand,
  DescribeVolumesCommand,
  DetachVolumeCommand,
  EC2Client,
  EC2ServiceException,
  type AttachVolumeCommandInput,
  type CopyVolumesCommandInput,
  type CreateSnapshotCommandInput,
  type DescribeSnapshotsCommandInput,
  type Snapshot,
  type AvailabilityZone,
  type CreateVolumeCommandInput,
  type DescribeInstancesCommandInput,
  type DescribeVolumesCommandInput,
  type DetachVolumeCommandInput,
  type Filter,
  type Instance,
  type Volume,
  type TagSpecification,
} from '@aws-sdk/client-ec2';
import { mockClient } from 'aws-sdk-client-mock';

/** An EC2 service error as the SDK raises it. */
export function ec2Error(code: string, message = code, status = 400): EC2ServiceException {
  return new EC2ServiceException({
    name: code,
    message,
    $fault: status >= 500 ? 'server' : 'client',
    $metadata: { httpStatusCode: status },
  });
}

const VOLUME_ID = /^vol-[0-9a-f]{8,17}$/;
const INSTANCE_ID = /^i-[0-9a-f]{8,17}$/;

/**
 * A small stateful EC2 behind aws-sdk-client-mock, with the behaviours the gateway must cope
 * with: describe by ID fails as a whole on one unknown ID, ≤ 500 IDs and ≤ 200 filter values
 * per call, MaxResults/NextToken paging, ClientToken idempotency, and volumes and attachments
 * that move on (creating → available, attaching → attached, detaching → gone) after each
 * DescribeVolumes, so every state is seen once.
 */
export class FakeEc2 {
  readonly mock = mockClient(EC2Client);
  readonly volumes = new Map<string, Volume>();
  readonly instances = new Map<string, Instance>();
  /** Snapshots: `pending` when made, `completed` after the next DescribeSnapshots. */
  readonly snapshots = new Map<string, Snapshot>();
  /** The Region's zones; names map to IDs out of order, as in a real account. */
  readonly zones: AvailabilityZone[] = [
    { ZoneName: 'us-east-1a', ZoneId: 'use1-az6', State: 'available', ZoneType: 'availability-zone', RegionName: 'us-east-1' },
    { ZoneName: 'us-east-1b', ZoneId: 'use1-az1', State: 'available', ZoneType: 'availability-zone', RegionName: 'us-east-1' },
    { ZoneName: 'us-east-1c', ZoneId: 'use1-az2', State: 'available', ZoneType: 'availability-zone', RegionName: 'us-east-1' },
  ];
  private readonly tokens = new Map<string, { volumeId: string; params: string }>();
  private serial = 0;
  /** When set, CreateVolume refuses once this many volumes exist (and ignores tokens, as EC2 does). */
  volumeLimit: number | undefined;

  constructor() {
    this.mock.on(DescribeVolumesCommand).callsFake((input: DescribeVolumesCommandInput) => this.describeVolumes(input));
    this.mock.on(DescribeInstancesCommand).callsFake((input: DescribeInstancesCommandInput) => this.describeInstances(input));
    this.mock.on(CreateVolumeCommand).callsFake((input: CreateVolumeCommandInput) => this.createVolume(input));
    this.mock.on(AttachVolumeCommand).callsFake((input: AttachVolumeCommandInput) => this.attachVolume(input));
    this.mock.on(DetachVolumeCommand).callsFake((input: DetachVolumeCommandInput) => this.detachVolume(input));
    this.mock.on(DeleteVolumeCommand).callsFake(({ VolumeId }: { VolumeId: string }) => this.deleteVolume(VolumeId));
    this.mock.on(DescribeAvailabilityZonesCommand).callsFake(() => ({ AvailabilityZones: structuredClone(this.zones) }));
    // Only a VolumeAttributesClass change tags an existing volume; test/ec2/modify.test.ts scripts those.
    this.mock.on(CreateTagsCommand).rejects(new Error('CreateTags is not scripted in this fake'));
    this.mock.on(CreateSnapshotCommand).callsFake((input: CreateSnapshotCommandInput) => this.createSnapshot(input));
    this.mock.on(DescribeSnapshotsCommand).callsFake((input: DescribeSnapshotsCommandInput) => this.describeSnapshots(input));
    this.mock.on(DeleteSnapshotCommand).callsFake(({ SnapshotId }: { SnapshotId: string }) => this.deleteSnapshot(SnapshotId));
    this.mock.on(CopyVolumesCommand).callsFake((input: CopyVolumesCommandInput) => this.copyVolumes(input));
  }

  restore(): void {
    this.mock.restore();
  }

  nextId(prefix: 'vol' | 'i' | 'snap'): string {
    return `${prefix}-${(++this.serial).toString(16).padStart(17, '0')}`;
  }

  addInstance(zone: string, extra: Partial<Instance> = {}): string {
    const id = this.nextId('i');
    this.instances.set(id, {
      InstanceId: id,
      Placement: { AvailabilityZone: zone },
      State: { Name: 'running', Code: 16 },
      BlockDeviceMappings: [{ DeviceName: '/dev/xvda', Ebs: { VolumeId: 'vol-root', Status: 'attached' } }],
      Tags: [],
      ...extra,
    });
    return id;
  }

  addVolume(volume: Partial<Volume> & { tags?: Record<string, string> }): string {
    const id = volume.VolumeId ?? this.nextId('vol');
    const { tags, ...rest } = volume;
    this.volumes.set(id, {
      VolumeId: id,
      AvailabilityZone: 'us-east-1a',
      Size: 10,
      VolumeType: 'gp3',
      State: 'available',
      Encrypted: false,
      MultiAttachEnabled: false,
      CreateTime: new Date(),
      Attachments: [],
      Tags: Object.entries(tags ?? {}).map(([Key, Value]) => ({ Key, Value })),
      ...rest,
    });
    return id;
  }

  /** Answers with the state as it is, then lets time pass. */
  private describeVolumes(input: DescribeVolumesCommandInput) {
    try {
      return this.answerDescribeVolumes(input);
    } finally {
      this.settle();
    }
  }

  private answerDescribeVolumes(input: DescribeVolumesCommandInput) {
    if (input.VolumeIds?.length) {
      if (input.MaxResults !== undefined || input.NextToken !== undefined) {
        throw ec2Error('InvalidParameterCombination', 'The parameter volumeSet cannot be used with the parameter maxResults');
      }
      if (input.VolumeIds.length > 500) throw ec2Error('InvalidParameterValue', 'Too many volume IDs');
      const malformed = input.VolumeIds.find((id) => !VOLUME_ID.test(id));
      if (malformed) throw ec2Error('InvalidVolumeID.Malformed', `Invalid id: "${malformed}" (expecting "vol-...")`);
      const missing = input.VolumeIds.filter((id) => !this.volumes.has(id));
      if (missing.length === 1) throw ec2Error('InvalidVolume.NotFound', `The volume '${missing[0]}' does not exist.`);
      if (missing.length > 1) throw ec2Error('InvalidVolume.NotFound', `The volumes '${missing.join(',')}' do not exist.`);
      return { Volumes: input.VolumeIds.map((id) => structuredClone(this.volumes.get(id)!)) };
    }
    const matching = [...this.volumes.values()].filter((v) => matchesAll(v, input.Filters ?? [])).map((v) => structuredClone(v));
    return this.page(matching, input.MaxResults, input.NextToken, (Volumes, NextToken) => ({ Volumes, NextToken }));
  }

  private describeInstances(input: DescribeInstancesCommandInput) {
    let found: Instance[];
    if (input.InstanceIds?.length) {
      if (input.InstanceIds.length > 1000) throw ec2Error('InvalidParameterValue', 'Too many instance IDs');
      const malformed = input.InstanceIds.find((id) => !INSTANCE_ID.test(id));
      if (malformed) throw ec2Error('InvalidInstanceID.Malformed', `Invalid id: "${malformed}"`);
      const missing = input.InstanceIds.filter((id) => !this.instances.has(id));
      if (missing.length === 1) throw ec2Error('InvalidInstanceID.NotFound', `The instance ID '${missing[0]}' does not exist`);
      if (missing.length > 1) throw ec2Error('InvalidInstanceID.NotFound', `The instance IDs '${missing.join(', ')}' do not exist`);
      found = input.InstanceIds.map((id) => this.instances.get(id)!);
    } else {
      found = [...this.instances.values()].filter((i) =>
        (input.Filters ?? []).every((f) => f.Name !== 'instance-id' || f.Values?.includes(i.InstanceId ?? '')),
      );
    }
    const withDevices = found.map((i) => ({ ...structuredClone(i), BlockDeviceMappings: this.deviceMappings(i) }));
    return this.page(withDevices, input.MaxResults, input.NextToken, (instances, NextToken) => ({
      Reservations: [{ Instances: instances }],
      NextToken,
    }));
  }

  private createVolume(input: CreateVolumeCommandInput): Volume {
    const { ClientToken, ...params } = input;
    if (this.volumeLimit !== undefined && this.volumes.size >= this.volumeLimit) {
      throw ec2Error('VolumeLimitExceeded', 'You have exceeded your maximum gp3 storage limit');
    }
    const key = JSON.stringify(params);
    const earlier = ClientToken ? this.tokens.get(ClientToken) : undefined;
    if (earlier) {
      if (earlier.params !== key) throw ec2Error('IdempotentParameterMismatch', 'The client token is already in use');
      const volume = this.volumes.get(earlier.volumeId);
      if (volume) return structuredClone(volume);
    }
    const id = this.nextId('vol');
    this.addVolume({
      VolumeId: id,
      AvailabilityZone: input.AvailabilityZone,
      Size: input.Size,
      VolumeType: input.VolumeType,
      Iops: input.Iops,
      Throughput: input.Throughput,
      Encrypted: input.Encrypted ?? false,
      KmsKeyId: input.KmsKeyId,
      MultiAttachEnabled: input.MultiAttachEnabled ?? false,
      State: 'creating',
      Tags: input.TagSpecifications?.flatMap((s) => s.Tags ?? []) ?? [],
      ...(input.SnapshotId !== undefined && { SnapshotId: this.restorable(input.SnapshotId, input.Size).SnapshotId }),
    });
    if (ClientToken) this.tokens.set(ClientToken, { volumeId: id, params: key });
    return structuredClone(this.volumes.get(id)!);
  }

  /** The snapshot a volume may be created from: it exists, is completed and not larger. */
  private restorable(snapshotId: string, size: number | undefined): Snapshot {
    const snapshot = this.snapshots.get(snapshotId);
    if (!snapshot) throw ec2Error('InvalidSnapshot.NotFound', `The snapshot '${snapshotId}' does not exist.`);
    if (snapshot.State !== 'completed') throw ec2Error('IncorrectState', `Snapshot is in invalid state - pending`);
    if (size !== undefined && size < (snapshot.VolumeSize ?? 0)) throw ec2Error('InvalidParameterValue', `size ${size} is smaller than the snapshot`);
    return snapshot;
  }

  private createSnapshot(input: CreateSnapshotCommandInput): Snapshot {
    const volume = this.volumes.get(input.VolumeId ?? '');
    if (!volume) throw ec2Error('InvalidVolume.NotFound', `The volume '${input.VolumeId}' does not exist.`);
    const id = this.nextId('snap');
    const snapshot: Snapshot = {
      SnapshotId: id,
      VolumeId: volume.VolumeId,
      VolumeSize: volume.Size,
      State: 'pending',
      Progress: '0%',
      StartTime: new Date(),
      Encrypted: volume.Encrypted ?? false,
      Tags: input.TagSpecifications?.flatMap((s) => s.Tags ?? []) ?? [],
    };
    this.snapshots.set(id, snapshot);
    return structuredClone(snapshot);
  }

  private describeSnapshots(input: DescribeSnapshotsCommandInput) {
    const matching = [...this.snapshots.values()]
      .filter((snap) =>
        (input.Filters ?? []).every((f) => {
          if (f.Name === 'snapshot-id') return f.Values?.includes(snap.SnapshotId ?? '') ?? false;
          if (f.Name?.startsWith('tag:')) return (snap.Tags ?? []).some((t) => t.Key === f.Name!.slice(4) && (f.Values ?? []).includes(t.Value ?? ''));
          throw ec2Error('InvalidParameterValue', `The filter '${f.Name}' is invalid`);
        }),
      )
      .map((snap) => structuredClone(snap));
    for (const snap of this.snapshots.values()) Object.assign(snap, { State: 'completed', Progress: '100%' });
    return this.page(matching, input.MaxResults, input.NextToken, (Snapshots, NextToken) => ({ Snapshots, NextToken }));
  }

  private deleteSnapshot(snapshotId: string) {
    if (!this.snapshots.delete(snapshotId)) throw ec2Error('InvalidSnapshot.NotFound', `The snapshot '${snapshotId}' does not exist.`);
    return {};
  }

  private copyVolumes(input: CopyVolumesCommandInput) {
    const { ClientToken, ...params } = input;
    const key = JSON.stringify(params);
    const earlier = ClientToken ? this.tokens.get(ClientToken) : undefined;
    if (earlier) {
      if (earlier.params !== key) throw ec2Error('IdempotentParameterMismatch', 'The client token is already in use');
      const volume = this.volumes.get(earlier.volumeId);
      if (volume) return { Volumes: [structuredClone(volume)] };
    }
    const source = this.volumes.get(input.SourceVolumeId ?? '');
    if (!source) throw ec2Error('InvalidVolume.NotFound', `The volume '${input.SourceVolumeId}' does not exist.`);
    const id = this.addVolume({
      AvailabilityZone: source.AvailabilityZone,
      Size: input.Size ?? source.Size,
      VolumeType: input.VolumeType ?? source.VolumeType,
      Encrypted: source.Encrypted ?? false,
      State: 'creating',
      Tags: input.TagSpecifications?.flatMap((s) => s.Tags ?? []) ?? [],
    });
    if (ClientToken) this.tokens.set(ClientToken, { volumeId: id, params: key });
    return { Volumes: [structuredClone(this.volumes.get(id)!)] };
  }

  private attachVolume({ VolumeId, InstanceId, Device }: AttachVolumeCommandInput) {
    const volume = this.volumes.get(VolumeId ?? '');
    if (!volume) throw ec2Error('InvalidVolume.NotFound', `The volume '${VolumeId}' does not exist.`);
    const instance = this.instances.get(InstanceId ?? '');
    if (!instance) throw ec2Error('InvalidInstanceID.NotFound', `The instance ID '${InstanceId}' does not exist`);
    if (volume.AvailabilityZone !== instance.Placement?.AvailabilityZone) {
      throw ec2Error('InvalidVolume.ZoneMismatch', 'The volume is not in the same availability zone as the instance');
    }
    if (volume.State === 'creating') throw ec2Error('IncorrectState', `vol '${VolumeId}' is not 'available'.`);
    if ((volume.Attachments ?? []).length > 0 && !volume.MultiAttachEnabled) {
      throw ec2Error('VolumeInUse', `${VolumeId} is already attached to an instance`);
    }
    if (this.deviceMappings(instance).some((m) => m.DeviceName === Device)) {
      throw ec2Error('InvalidParameterValue', `Invalid value '${Device}' for unixDevice. Attachment point ${Device} is already in use`);
    }
    const attachment = { VolumeId, InstanceId, Device, State: 'attaching' as const, AttachTime: new Date() };
    volume.Attachments = [...(volume.Attachments ?? []), attachment];
    volume.State = 'in-use';
    return { ...attachment };
  }

  private detachVolume({ VolumeId, InstanceId }: DetachVolumeCommandInput) {
    const volume = this.volumes.get(VolumeId ?? '');
    if (!volume) throw ec2Error('InvalidVolume.NotFound', `The volume '${VolumeId}' does not exist.`);
    const attachment = volume.Attachments?.find((a) => a.InstanceId === InstanceId);
    if (!attachment) {
      if (volume.State === 'available') throw ec2Error('IncorrectState', `Volume '${VolumeId}' is in the 'available' state.`);
      throw ec2Error('InvalidAttachment.NotFound', `The volume ${VolumeId} is not attached to ${InstanceId}`);
    }
    attachment.State = 'detaching';
    return { ...attachment };
  }

  private deleteVolume(volumeId: string) {
    const volume = this.volumes.get(volumeId);
    if (!volume) throw ec2Error('InvalidVolume.NotFound', `The volume '${volumeId}' does not exist.`);
    if ((volume.Attachments ?? []).length > 0) throw ec2Error('VolumeInUse', `Volume ${volumeId} is currently attached`);
    this.volumes.delete(volumeId);
    return {};
  }

  /** Moves every volume and attachment one step on, as time passing in EC2 would. */
  private settle(): void {
    for (const volume of this.volumes.values()) {
      if (volume.State === 'creating') volume.State = 'available';
      volume.Attachments = (volume.Attachments ?? []).flatMap((a) =>
        a.State === 'detaching' ? [] : [{ ...a, State: a.State === 'attaching' ? 'attached' : a.State }],
      );
      if (volume.State === 'in-use' && volume.Attachments.length === 0) volume.State = 'available';
    }
  }

  private deviceMappings(instance: Instance) {
    const attached = [...this.volumes.values()].flatMap((v) =>
      (v.Attachments ?? [])
        .filter((a) => a.InstanceId === instance.InstanceId)
        .map((a) => ({ DeviceName: a.Device, Ebs: { VolumeId: v.VolumeId, Status: a.State } })),
    );
    return [...(instance.BlockDeviceMappings ?? []), ...attached];
  }

  private page<T, R>(items: T[], maxResults: number | undefined, token: string | undefined, wrap: (items: T[], next?: string) => R): R {
    if (maxResults !== undefined && (maxResults < 5 || maxResults > 1000)) throw ec2Error('InvalidParameterValue', 'MaxResults');
    const start = token ? Number(token) : 0;
    const end = maxResults ? start + maxResults : items.length;
    return wrap(items.slice(start, end), end < items.length ? String(end) : undefined);
  }
}

function matchesAll(volume: Volume, filters: Filter[]): boolean {
  return filters.every((filter) => {
    const values = filter.Values ?? [];
    if (values.length > 200) throw ec2Error('InvalidParameterValue', 'The filter values limit of 200 was exceeded');
    if (filter.Name === 'volume-id') return values.includes(volume.VolumeId ?? '');
    if (filter.Name?.startsWith('tag:')) {
      const key = filter.Name.slice(4);
      return (volume.Tags ?? []).some((t) => t.Key === key && values.includes(t.Value ?? ''));
    }
    throw ec2Error('InvalidParameterValue', `The filter '${filter.Name}' is invalid`);
  });
}

/**
 * The TagSpecifications a snapshot (or a copy, or a group's set) of cluster `c1` named `name` is
 * created with, the caller's `team: shop` tag first: what every snapshot test expects sent.
 */
export function snapshotTagSpecifications(name: string): TagSpecification[] {
  return [
    {
      ResourceType: 'snapshot',
      Tags: [
        { Key: 'team', Value: 'shop' },
        { Key: 'CSIVolumeSnapshotName', Value: name },
        { Key: 'ebs.csi.aws.com/cluster', Value: 'true' },
        { Key: 'kubernetes.io/cluster/c1', Value: 'owned' },
        { Key: 'volhook.io/cluster', Value: 'c1' },
        { Key: 'ebs.csi.aws.com/cluster-name', Value: 'c1' },
      ],
    },
  ];
}

/** The DescribeSnapshots that looks a snapshot up by `name`: cluster `c1`'s, in this account only. */
export function snapshotLookupByName(name: string) {
  return {
    OwnerIds: ['self'],
    Filters: [
      { Name: 'tag:CSIVolumeSnapshotName', Values: [name] },
      { Name: 'tag:kubernetes.io/cluster/c1', Values: ['owned'] },
    ],
  };
}
