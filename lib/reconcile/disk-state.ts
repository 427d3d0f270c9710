/**
 * A Disk as EC2 reports it right after one of our actions, so the reconciler can decide again
 * without another Describe call.
 */
import type { Disk, DiskAttachment } from '../ec2/types.js';

/** After DeleteVolume succeeded. */
export function deleting(disk: Disk | undefined): Disk | undefined {
  return disk && { ...disk, state: 'deleting' };
}

/** `disk` with its attachment to `attachment.instanceId` replaced by `attachment`. */
export function withAttachment(disk: Disk, attachment: DiskAttachment): Disk {
  const others = disk.attachments.filter((a) => a.instanceId !== attachment.instanceId);
  return { ...disk, attachments: [...others, attachment] };
}
