/**
 * When an attachment left `attaching` is given up: detached, then attached again.
 *
 * The EBS CSI driver gives up one `attaching` for longer than 90 s after EC2's AttachTime
 * (pkg/cloud `stuckAttachingTimeout`); so does volhook. It also gives up sooner on EC2's own
 * evidence: another volume's attach to the same instance, begun after this one, has finished.
 * EC2 is completing attaches to that instance, and this one was left behind — as when its
 * device name is still held inside the instance (AWS's "volume stuck attaching"). Both times
 * are EC2's AttachTimes, so no clock but EC2's orders them; the age is checked as the
 * driver's is, against the backend's clock. An attach takes 1–4 s (reference/ebs.md), so
 * before {@link STUCK_BEHIND_LATER_ATTACH_MS} a slow one is only slower than the next, and is
 * waited for. Giving up costs no data: nothing on the node uses a volume not yet attached
 * (the VolumeAttachment says `attached` only once EC2 does). It is done once per attachment
 * of a VolumeAttachment: the next attempt, whose error still says it was given up behind a
 * later attach, gets the full 90 s — a volume EC2 always attaches slower than its neighbours
 * is not given up for ever.
 */
import type { DiskAttachment, Instance } from '../ec2/types.js';

/** An attachment `attaching` for longer is detached and tried again, as the EBS CSI driver does. */
export const STUCK_ATTACHING_MS = 90_000;
/** …and one `attaching` for longer while a later attach to its instance has finished. */
export const STUCK_BEHIND_LATER_ATTACH_MS = 15_000;

/** {@link STUCK_ATTACHING_MS} against an EC2 that runs `ec2TimeScale` times faster than AWS (a simulator). */
export function stuckAttachingMs(ec2TimeScale = 1): number {
  return STUCK_ATTACHING_MS / ec2TimeScale;
}

/** {@link STUCK_BEHIND_LATER_ATTACH_MS}, likewise scaled. */
export function stuckBehindLaterAttachMs(ec2TimeScale = 1): number {
  return STUCK_BEHIND_LATER_ATTACH_MS / ec2TimeScale;
}

/** In the message of an attachment given up behind a later attach, and only there. */
const BEHIND_LATER_ATTACH = 'behind a later attach';

/** Pure: whether `message` (a VolumeAttachment's attachError) says its attachment was given up behind a later attach. */
export function gaveUpBehindLaterAttach(message: string | undefined): boolean {
  return message?.includes(BEHIND_LATER_ATTACH) === true;
}

/**
 * Pure: why `attachment` (of `volumeId`, `attaching` to `instance`) is stuck and is to be
 * given up, or undefined while it is to be waited for. `previousError` is the
 * VolumeAttachment's attachError message, if any.
 */
export function stuckAttachment(volumeId: string, attachment: DiskAttachment, instance: Instance, now: Date, ec2TimeScale = 1, previousError?: string): string | undefined {
  const began = attachment.attachTime === undefined ? NaN : Date.parse(attachment.attachTime);
  if (Number.isNaN(began)) return undefined;
  const age = now.getTime() - began;
  const seconds = `${Math.round(age / 1000)} s`;
  const stuck = `volume ${volumeId} stuck attaching to instance ${attachment.instanceId} as ${attachment.device} for ${seconds}`;
  if (age > stuckAttachingMs(ec2TimeScale)) return `${stuck} (longer than ${STUCK_ATTACHING_MS / 1000 / ec2TimeScale} s); detached to be attached again`;
  if (age <= stuckBehindLaterAttachMs(ec2TimeScale) || gaveUpBehindLaterAttach(previousError)) return undefined;
  const later = (instance.mappings ?? []).find(
    (m) => m.volumeId !== volumeId && m.state === 'attached' && m.attachTime !== undefined && Date.parse(m.attachTime) > began,
  );
  if (!later) return undefined;
  return `${stuck}, ${BEHIND_LATER_ATTACH} (${later.volumeId}, attaching since ${later.attachTime}, is attached); detached to be attached again`;
}
