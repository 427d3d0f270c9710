import {
  AttachVolumeCommand,
  DeleteVolumeCommand,
  DescribeVolumesCommand,
  DetachVolumeCommand,
  EC2Client,
} from '@aws-sdk/client-ec2';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { createEc2Gateway } from '../../lib/ec2/index.js';
import { ec2Error } from './fake-ec2.js';

const ec2 = mockClient(EC2Client);
const gw = () => createEc2Gateway({ client: new EC2Client({ region: 'us-east-1' }), clusterId: 'c1' });
const VOL = 'vol-0aaaaaaaaaaaaaaa1';
const NODE = 'i-0bbbbbbbbbbbbbbb1';

beforeEach(() => ec2.reset());

describe('detachDisk', () => {
  it('EC2 detaches -> resolves, with the volume and instance named', async () => {
    ec2.on(DetachVolumeCommand).resolves({ State: 'detaching' });
    await gw().detachDisk(VOL, NODE);
    expect(ec2).toHaveReceivedCommandWith(DetachVolumeCommand, { VolumeId: VOL, InstanceId: NODE });
  });

  it.each([
    ['InvalidVolume.NotFound', 'volume gone'],
    ['InvalidInstanceID.NotFound', 'instance gone'],
    ['InvalidAttachment.NotFound', 'attachment gone'],
    ['IncorrectState', "volume 'available'"],
  ])('%s (%s) -> resolves: already detached', async (code) => {
    ec2.on(DetachVolumeCommand).rejects(ec2Error(code));
    await expect(gw().detachDisk(VOL, NODE)).resolves.toBeUndefined();
  });

  it('throttled -> rejects transient', async () => {
    ec2.on(DetachVolumeCommand).rejects(ec2Error('RequestLimitExceeded', 'Request limit exceeded.', 503));
    await expect(gw().detachDisk(VOL, NODE)).rejects.toMatchObject({ kind: 'transient', action: 'DetachVolume' });
  });
});

describe('deleteDisk', () => {
  it('EC2 deletes -> resolves', async () => {
    ec2.on(DeleteVolumeCommand).resolves({});
    await gw().deleteDisk(VOL);
    expect(ec2).toHaveReceivedCommandWith(DeleteVolumeCommand, { VolumeId: VOL });
  });

  it('InvalidVolume.NotFound -> resolves: already deleted', async () => {
    ec2.on(DeleteVolumeCommand).rejects(ec2Error('InvalidVolume.NotFound', `The volume '${VOL}' does not exist.`));
    await expect(gw().deleteDisk(VOL)).resolves.toBeUndefined();
  });

  it.each([
    ['VolumeInUse', 'inUse'],
    ['IncorrectState', 'incorrectState'],
  ])('%s -> rejects %s', async (code, kind) => {
    ec2.on(DeleteVolumeCommand).rejects(ec2Error(code));
    await expect(gw().deleteDisk(VOL)).rejects.toMatchObject({ kind });
  });
});

describe('attachDisk', () => {
  it('EC2 starts attaching -> resolves attaching, with volume, instance and device named', async () => {
    ec2.on(AttachVolumeCommand).resolves({ State: 'attaching', Device: '/dev/xvdaa' });
    expect(await gw().attachDisk(VOL, NODE, '/dev/xvdaa')).toBe('attaching');
    expect(ec2).toHaveReceivedCommandWith(AttachVolumeCommand, { VolumeId: VOL, InstanceId: NODE, Device: '/dev/xvdaa' });
  });

  it('VolumeInUse but attached to this instance -> resolves with its state', async () => {
    ec2.on(AttachVolumeCommand).rejects(ec2Error('VolumeInUse', `${VOL} is already attached to an instance`));
    ec2.on(DescribeVolumesCommand).resolves({
      Volumes: [{ VolumeId: VOL, State: 'in-use', Attachments: [{ InstanceId: NODE, Device: '/dev/xvdab', State: 'attached' }] }],
    });
    expect(await gw().attachDisk(VOL, NODE, '/dev/xvdaa')).toBe('attached');
  });

  it('VolumeInUse by another instance -> rejects inUse', async () => {
    ec2.on(AttachVolumeCommand).rejects(ec2Error('VolumeInUse', `${VOL} is already attached to an instance`));
    ec2.on(DescribeVolumesCommand).resolves({
      Volumes: [{ VolumeId: VOL, State: 'in-use', Attachments: [{ InstanceId: 'i-0ccccccccccccccc1', Device: '/dev/xvdaa', State: 'attached' }] }],
    });
    await expect(gw().attachDisk(VOL, NODE, '/dev/xvdaa')).rejects.toMatchObject({ kind: 'inUse' });
  });

  it.each([
    ['InvalidParameterValue', 'Attachment point /dev/xvdaa is already in use', 'deviceInUse'],
    ['InvalidVolume.ZoneMismatch', 'The volume is not in the same availability zone as the instance', 'zoneMismatch'],
    ['AttachmentLimitExceeded', 'The instance has reached its attachment limit', 'attachmentLimit'],
    ['InvalidVolume.NotFound', `The volume '${VOL}' does not exist.`, 'notFound'],
    ['IncorrectState', `vol '${VOL}' is not 'available'.`, 'incorrectState'],
  ])('%s -> rejects %s', async (code, message, kind) => {
    ec2.on(AttachVolumeCommand).rejects(ec2Error(code, message));
    await expect(gw().attachDisk(VOL, NODE, '/dev/xvdaa')).rejects.toMatchObject({ kind: kind, action: 'AttachVolume' });
  });
});
