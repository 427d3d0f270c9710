import type { Instance as Ec2Instance, Tag, Volume } from '@aws-sdk/client-ec2';
import type { AttachmentState, Disk, DiskState, Instance } from './types.js';

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
  };
}
