import type { Instance as Ec2Instance, Snapshot as Ec2Snapshot, Tag, Volume, VolumeModification, VolumeStatusItem } from '@aws-sdk/client-ec2';
import type { AttachmentState, Disk, DiskInitialization, DiskModification, DiskState, Instance, ModificationState, Snapshot, SnapshotState } from './types.js';

/** EC2 tags as a plain record; tags without a key are dropped. */
export function tagRecord(tags: Tag[] | undefined): Record<string, string> {
  const record: Record<string, string> = {};
  for (const { Key, Value } of tags ?? []) if (Key !== undefined) record[Key] = Value ?? '';
  return record;
}

/** A tag record as EC2's list of `{ Key, Value }`, in the record's order. */
export function tagList(tags: Record<string, string>): Tag[] {
  return Object.entries(tags).map(([Key, Value]) => ({ Key, Value }));
}

/** An SDK Volume (from DescribeVolumes or CreateVolume) as volhook's Disk. */
export function toDisk(volume: Volume): Disk {
  return {
    volumeId: volume.VolumeId ?? '',
    ...(volume.SnapshotId ? { snapshotId: volume.SnapshotId } : {}),
    zone: volume.AvailabilityZone ?? '',
    sizeGiB: volume.Size ?? 0,
    state: (volume.State ?? 'creating') as DiskState,
    ...(volume.CreateTime !== undefined ? { createTime: volume.CreateTime.toISOString() } : {}),
    type: volume.VolumeType ?? '',
    ...(volume.Iops !== undefined ? { iops: volume.Iops } : {}),
    ...(volume.Throughput !== undefined ? { throughput: volume.Throughput } : {}),
    encrypted: volume.Encrypted ?? false,
    ...(volume.KmsKeyId !== undefined ? { kmsKeyId: volume.KmsKeyId } : {}),
    multiAttach: volume.MultiAttachEnabled ?? false,
    tags: tagRecord(volume.Tags),
    attachments: (volume.Attachments ?? []).map((a) => ({
      instanceId: a.InstanceId ?? '',
      device: a.Device ?? '',
      state: (a.State ?? 'attaching') as AttachmentState,
      ...(a.AttachTime !== undefined ? { attachTime: a.AttachTime.toISOString() } : {}),
    })),
    ...(volume.CreateTime !== undefined ? { createdAt: volume.CreateTime.toISOString() } : {}),
  };
}

/**
 * An SDK Instance as volhook's Instance. `devicesInUse` are the names in its block device
 * mappings, which EC2 fills as soon as an attachment starts (so in-flight ones count).
 */
export function toInstance(instance: Ec2Instance): Instance {
  return {
    instanceId: instance.InstanceId ?? '',
    zone: instance.Placement?.AvailabilityZone ?? '',
    state: instance.State?.Name ?? 'unknown',
    tags: tagRecord(instance.Tags),
    devicesInUse: (instance.BlockDeviceMappings ?? []).flatMap((m) => (m.DeviceName ? [m.DeviceName] : [])),
    ...mappedVolumes(instance),
  };
}

function mappedVolumes(instance: Ec2Instance): Pick<Instance, 'rootVolumeId' | 'mappings'> {
  const mappings = instance.BlockDeviceMappings ?? [];
  const root = mappings.find((m) => m.DeviceName && m.DeviceName === instance.RootDeviceName)?.Ebs?.VolumeId;
  return {
    ...(root ? { rootVolumeId: root } : {}),
    mappings: mappings.flatMap(({ Ebs: ebs }) =>
      ebs?.VolumeId
        ? [{ volumeId: ebs.VolumeId, state: (ebs.Status ?? 'attaching') as AttachmentState, ...(ebs.AttachTime !== undefined && { attachTime: ebs.AttachTime.toISOString() }) }]
        : [],
    ),
  };
}

/** An SDK Snapshot (from DescribeSnapshots or CreateSnapshot) as volhook's Snapshot. */
export function toSnapshot(snapshot: Ec2Snapshot): Snapshot {
  return {
    snapshotId: snapshot.SnapshotId ?? '',
    volumeId: snapshot.VolumeId ?? '',
    sizeGiB: snapshot.VolumeSize ?? 0,
    state: (snapshot.State ?? 'pending') as SnapshotState,
    startTime: (snapshot.StartTime ?? new Date(0)).toISOString(),
    ...(snapshot.Progress ? { progress: snapshot.Progress } : {}),
    ...(snapshot.StateMessage ? { stateMessage: snapshot.StateMessage } : {}),
    encrypted: snapshot.Encrypted ?? false,
    tags: tagRecord(snapshot.Tags),
  };
}

/**
 * An SDK VolumeStatusItem as the volume's initialization, undefined when it reports none (an
 * empty volume): the `initialization-state` detail, as the EBS CSI driver reads it.
 */
export function toInitialization(s: VolumeStatusItem): DiskInitialization | undefined {
  const detail = s.VolumeStatus?.Details?.find((d) => d.Name === 'initialization-state');
  if (!detail?.Status) return undefined;
  const secondsLeft = s.InitializationStatusDetails?.EstimatedTimeToCompleteInSeconds;
  return {
    volumeId: s.VolumeId ?? '',
    state: detail.Status === 'initializing' ? 'initializing' : 'completed',
    ...(secondsLeft !== undefined ? { secondsLeft } : {}),
  };
}

/** An SDK VolumeModification (ModifyVolume, DescribeVolumesModifications) as volhook's DiskModification. */
export function toModification(m: VolumeModification): DiskModification {
  return {
    volumeId: m.VolumeId ?? '',
    state: (m.ModificationState ?? 'modifying') as ModificationState,
    startTime: (m.StartTime ?? new Date(0)).toISOString(),
    target: {
      ...(m.TargetSize !== undefined ? { sizeGiB: m.TargetSize } : {}),
      ...(m.TargetVolumeType !== undefined ? { type: m.TargetVolumeType } : {}),
      ...(m.TargetIops !== undefined ? { iops: m.TargetIops } : {}),
      ...(m.TargetThroughput !== undefined ? { throughput: m.TargetThroughput } : {}),
    },
    ...(m.StatusMessage ? { statusMessage: m.StatusMessage } : {}),
  };
}
