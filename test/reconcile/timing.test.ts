import { describe, expect, it } from 'vitest';
import type { Disk } from '../../lib/ec2/types.js';
import { Requeue } from '../../lib/reconcile/outcomes.js';
import { attachingWait, creatingWait } from '../../lib/reconcile/timing.js';

const NOW = new Date('2026-01-01T00:00:10.000Z');
const ago = (ms: number) => new Date(NOW.getTime() - ms).toISOString();
const creating = (createTime?: string): Disk => ({
  volumeId: 'vol-1',
  zone: 'us-east-1a',
  sizeGiB: 1,
  state: 'creating',
  type: 'gp3',
  encrypted: false,
  multiAttach: false,
  tags: {},
  attachments: [],
  ...(createTime !== undefined && { createTime }),
});

describe('requeue hints from EC2 timing', () => {
  it.each([
    ['created just now -> when EC2 usually is done (1.5 s)', ago(0), 1.5],
    ['created 1 s ago -> the rest of the 1.5 s', ago(1_000), 0.5],
    ['created 10 s ago (due) -> soon (0.25 s)', ago(10_000), 0.25],
    ['create time unknown -> the fixed creating interval', undefined, Requeue.creating],
  ])('creating: %s', (_name, createTime, seconds) => {
    expect(creatingWait(creating(createTime), NOW)).toBe(seconds);
  });

  it.each([
    ['attached just now -> 2.5 s', ago(0), 2.5],
    ['attaching for 1.5 s -> 1 s', ago(1_500), 1],
    ['attaching for 30 s -> 0.25 s', ago(30_000), 0.25],
    ['attach time unknown -> the fixed attaching interval', undefined, Requeue.attaching],
  ])('attaching: %s', (_name, attachTime, seconds) => {
    expect(attachingWait({ instanceId: 'i-1', device: '/dev/xvdaa', state: 'attaching', ...(attachTime !== undefined && { attachTime }) }, NOW)).toBe(seconds);
  });

  it.each([
    ['creating, created just now: 1.5 s at AWS speed, 0.75 s at time scale 2', () => creatingWait(creating(ago(0)), NOW, 2), 0.75],
    ['creating, due: the due-poll ÷ 2', () => creatingWait(creating(ago(10_000)), NOW, 2), 0.125],
    ['creating, create time unknown: the fixed interval ÷ 4', () => creatingWait(creating(), NOW, 4), Requeue.creating / 4],
    ['attaching for 0.5 s at time scale 2: the rest of 1.25 s', () => attachingWait({ instanceId: 'i-1', device: '/dev/xvdaa', state: 'attaching', attachTime: ago(500) }, NOW, 2), 0.75],
  ])('against a simulator faster than AWS, the waits predicting EC2 shrink with it: %s', (_name, wait, seconds) => {
    expect(wait()).toBe(seconds);
  });
});
