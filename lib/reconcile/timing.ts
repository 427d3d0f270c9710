/**
 * When to look again at a volume in transition, from EC2's own timing (reference/ebs.md,
 * "Observed latencies") and the time EC2 says the transition began: a volume created a
 * moment ago is not polled at once, one that is due is polled soon.
 */
import type { Disk, DiskAttachment, DiskInitialization } from '../ec2/types.js';
import { Requeue } from './outcomes.js';

export const Ec2Timing = {
  /** CreateVolume to `available`: median about 1.5 s. */
  createMedianMs: 1_500,
  /** AttachVolume to `attached`: 1–4 s; the first look at its middle, as for creates. */
  attachFirstLookMs: 2_500,
  /**
   * Once a transition is due, look again this often. Cheap for a few items; a busy request's
   * requeues go on the coarser grid of cadence.ts anyway.
   */
  pollWhenDueMs: 250,
} as const;

/**
 * Seconds from `now` until `expectedMs` after `since`, at least one due-poll interval. Against
 * a simulator `ec2TimeScale` times faster than AWS (ReconcileContext), EC2's durations — and so
 * the waits that predict them — are that much shorter.
 */
function untilDue(since: string | undefined, expectedMs: number, now: Date, fallbackSeconds: number, ec2TimeScale: number): number {
  const started = since === undefined ? NaN : Date.parse(since);
  if (Number.isNaN(started)) return fallbackSeconds / ec2TimeScale;
  const left = started + expectedMs / ec2TimeScale - now.getTime();
  return Math.max(left, Ec2Timing.pollWhenDueMs / ec2TimeScale) / 1000;
}

/** A volume `creating`: look when EC2 usually has it `available`. */
export function creatingWait(disk: Disk, now: Date | undefined, ec2TimeScale = 1): number {
  if (!now) return Requeue.creating / ec2TimeScale;
  return untilDue(disk.createTime, Ec2Timing.createMedianMs, now, Requeue.creating, ec2TimeScale);
}

/** An attachment `attaching`: look when EC2 may have it `attached`. */
export function attachingWait(attachment: DiskAttachment, now: Date, ec2TimeScale = 1): number {
  return untilDue(attachment.attachTime, Ec2Timing.attachFirstLookMs, now, Requeue.attaching, ec2TimeScale);
}

/**
 * A volume still initializing: look again when EC2's estimate says it ends (given for a
 * volume created with a VolumeInitializationRate), at least every 5 minutes; without an
 * estimate, every {@link Requeue.initializing} seconds. The EBS CSI driver waits out the
 * estimate too, and polls a volume without one in a slow batch.
 */
export function initializingWait(initialization: DiskInitialization): number {
  if (initialization.secondsLeft === undefined) return Requeue.initializing;
  return Math.min(Math.max(initialization.secondsLeft, 1), 300);
}
