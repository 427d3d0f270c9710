/**
 * When an attachment left `attaching` is given up: detached, then attached again.
 *
 * The EBS CSI driver gives up one `attaching` for longer than 90 s after EC2's AttachTime
 * (pkg/cloud `stuckAttachingTimeout`); so does volhook. It also gives up sooner, after
 * {@link EARLY_GIVE_UP_MS}, on EC2's own evidence that the instance is not simply
 * slow: another volume's attach to it, begun after this one, has finished (both EC2's
 * AttachTimes, so no clock but EC2's orders them), or no other attach to it is in flight and
 * another volume is attached there — EC2 has nothing queued for the instance, and this one
 * was left behind, as when its device name is still held inside the instance (AWS's "volume
 * stuck attaching"). An attach takes 1–4 s (reference/ebs.md); the age is checked as the
 * driver's is, against the backend's clock. While other attaches to the instance are in
 * flight and none begun later has finished, EC2 may be working through them: the 90 s.
 * Giving up costs no data: nothing on the node uses a volume not yet attached (the
 * VolumeAttachment says `attached` only once EC2 does). It is done once per attachment of a
 * VolumeAttachment: the next attempt, whose error still says it was given up early, gets the
 * full 90 s — a volume EC2 always attaches slowly is not given up for ever.
 */
import type { DiskAttachment, Instance } from '../ec2/types.js';

/** An attachment `attaching` for longer is detached and tried again, as the EBS CSI driver does. */
export const STUCK_ATTACHING_MS = 90_000;
/** …and one `attaching` for longer while EC2 shows nothing else to wait for on its instance. */
export const EARLY_GIVE_UP_MS = 15_000;

/** {@link STUCK_ATTACHING_MS} against an EC2 that runs `ec2TimeScale` times faster than AWS (a simulator). */
export function stuckAttachingMs(ec2TimeScale = 1): number {
  return STUCK_ATTACHING_MS / ec2TimeScale;
}

/**
 * Against a simulator, an early give-up waits at least this long whatever its time scale: the
 * simulator's own event loop, busy with a test, may hold an attach past its scaled latency,
 * which EC2 would not. Inert against AWS (scale 1: 15 s).
 */
export const EARLY_GIVE_UP_FLOOR_MS = 2_000;

/** {@link EARLY_GIVE_UP_MS}, likewise scaled, never below {@link EARLY_GIVE_UP_FLOOR_MS}. */
export function earlyGiveUpMs(ec2TimeScale = 1): number {
  return Math.max(EARLY_GIVE_UP_MS / ec2TimeScale, EARLY_GIVE_UP_FLOOR_MS);
}

/** In the message of an attachment given up before the 90 s, and only there. */
const GIVEN_UP_EARLY = 'given up early';

/** Pure: whether `message` (a VolumeAttachment's attachError) says its attachment was given up before the 90 s. */
export function gaveUpEarly(message: string | undefined): boolean {
  return message?.includes(GIVEN_UP_EARLY) === true;
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
  const limit = stuckAttachingMs(ec2TimeScale);
  if (age > limit) return `${stuck} (longer than ${limit / 1000} s); detached to be attached again`;
  if (age <= earlyGiveUpMs(ec2TimeScale) || gaveUpEarly(previousError)) return undefined;
  const others = (instance.mappings ?? []).filter((m) => m.volumeId !== volumeId);
  const later = others.find((m) => m.state === 'attached' && m.attachTime !== undefined && Date.parse(m.attachTime) > began);
  if (later) return `${stuck} behind a later attach (${later.volumeId}, attaching since ${later.attachTime}, is attached); ${GIVEN_UP_EARLY}, detached to be attached again`;
  const inFlight = others.some((m) => m.state === 'attaching');
  const attached = others.find((m) => m.state === 'attached');
  if (!inFlight && attached) return `${stuck}, no other attach to it in flight (${attached.volumeId} is attached); ${GIVEN_UP_EARLY}, detached to be attached again`;
  return undefined;
}
