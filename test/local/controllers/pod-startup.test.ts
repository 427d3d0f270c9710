import { describe, expect, it } from 'vitest';
import { attachmentName, podStartup } from '../../../lib/local/controllers/index.js';
import type { PersistentVolume, PersistentVolumeClaim, Pod, VolumeAttachment } from '../../../lib/local/controllers/index.js';
import { attachment, boundPair, claim, pod } from './fixtures.js';

const DRIVER = 'ebs.csi.aws.com';
const NOW = '2024-03-01T12:00:00Z';

function start(p: Pod, claims: PersistentVolumeClaim[] = [], volumes: PersistentVolume[] = [], attachments: VolumeAttachment[] = []) {
  return podStartup({
    pod: p,
    claims: new Map(claims.map((c) => [`default/${c.metadata.name}`, c])),
    volumes: new Map(volumes.map((v) => [v.metadata.name, v])),
    attachments: new Map(attachments.map((a) => [a.metadata.name, a])),
    driver: DRIVER,
    now: NOW,
  });
}

describe('podStartup', () => {
  const pair = boundPair('data');
  const vaName = attachmentName(pair.volume.spec.csi!.volumeHandle!, DRIVER, 'node-a');
  const scheduled = pod('p', { claims: ['data'], nodeName: 'node-a' });

  it('scheduled pod without volumes -> Running and Ready', () => {
    const status = start(pod('p', { nodeName: 'node-a' }));
    expect(status?.phase).toBe('Running');
    expect(status?.conditions).toContainEqual(expect.objectContaining({ type: 'Ready', status: 'True' }));
    expect(status?.containerStatuses).toEqual([expect.objectContaining({ name: 'app', ready: true })]);
  });

  it('pod not scheduled yet -> stays Pending', () => {
    expect(start(pod('p'))).toBeUndefined();
  });

  it('VolumeAttachment not attached yet -> stays Pending', () => {
    const va = attachment(vaName, { nodeName: 'node-a', volumeName: pair.volume.metadata.name, attached: false });
    expect(start(scheduled, [pair.claim], [pair.volume], [va])).toBeUndefined();
  });

  it('VolumeAttachment missing -> stays Pending', () => {
    expect(start(scheduled, [pair.claim], [pair.volume])).toBeUndefined();
  });

  it('VolumeAttachment attached -> Running', () => {
    const va = attachment(vaName, { nodeName: 'node-a', volumeName: pair.volume.metadata.name, attached: true });
    expect(start(scheduled, [pair.claim], [pair.volume], [va])?.phase).toBe('Running');
  });

  it('claim not bound -> stays Pending', () => {
    expect(start(pod('p', { claims: ['c'], nodeName: 'node-a' }), [claim('c')])).toBeUndefined();
  });

  it('already Running -> nothing to change', () => {
    expect(start(pod('p', { nodeName: 'node-a', phase: 'Running' }))).toBeUndefined();
  });
});

describe('podStartup: an inline awsElasticBlockStore volume', () => {
  const VOL = 'vol-0123456789abcdef0';
  const inlinePod = pod('p', { nodeName: 'node-a' });
  inlinePod.spec!.volumes = [{ name: 'disk', awsElasticBlockStore: { volumeID: `aws://us-east-1a/${VOL}` } }];
  const va = (attached: boolean) => ({ ...attachment(attachmentName(VOL, DRIVER, 'node-a'), { nodeName: 'node-a', volumeName: 'unused', attached }), spec: { attacher: DRIVER, nodeName: 'node-a', source: {} } });

  it('its VolumeAttachment missing or not attached -> stays Pending; attached -> Running', () => {
    expect(start(inlinePod)).toBeUndefined();
    expect(start(inlinePod, [], [], [va(false)])).toBeUndefined();
    expect(start(inlinePod, [], [], [va(true)])?.phase).toBe('Running');
  });
});
