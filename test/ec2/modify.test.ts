/** The gateway's ModifyVolume, DescribeVolumesModifications, CreateTags and DeleteTags over aws-sdk-client-mock. */
import {
  CreateTagsCommand,
  DeleteTagsCommand,
  DescribeVolumesModificationsCommand,
  EC2Client,
  ModifyVolumeCommand,
} from '@aws-sdk/client-ec2';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { createEc2Gateway, Ec2Error } from '../../lib/ec2/index.js';
import { ec2Error } from './fake-ec2.js';

const ec2 = mockClient(EC2Client);
const gw = () => createEc2Gateway({ client: new EC2Client({ region: 'us-east-1' }), clusterId: 'c1', batchWindowMs: 1 });
const VOL = 'vol-0aaaaaaaaaaaaaaa1';
const VOL2 = 'vol-0aaaaaaaaaaaaaaa2';
const START = new Date('2026-01-01T00:00:00Z');

beforeEach(() => ec2.reset());

describe('modifyDisk', () => {
  it('a change -> ModifyVolume with only the fields given, answered as a DiskModification', async () => {
    ec2.on(ModifyVolumeCommand).resolves({ VolumeModification: { VolumeId: VOL, ModificationState: 'modifying', StartTime: START, TargetSize: 8, TargetIops: 6000 } });
    const m = await gw().modifyDisk(VOL, { sizeGiB: 8, iops: 6000 });
    expect(ec2).toHaveReceivedCommandWith(ModifyVolumeCommand, { VolumeId: VOL, Size: 8, Iops: 6000 });
    expect(ec2.commandCalls(ModifyVolumeCommand)[0]!.args[0].input).not.toHaveProperty('Throughput', expect.anything());
    expect(m).toEqual({ volumeId: VOL, state: 'modifying', startTime: START.toISOString(), target: { sizeGiB: 8, iops: 6000 } });
  });

  it('IncorrectModificationState and the latest modification is this change (an earlier answer lost) -> that modification, no error', async () => {
    ec2.on(ModifyVolumeCommand).rejects(ec2Error('IncorrectModificationState', `Volume '${VOL}' is already being modified`));
    ec2.on(DescribeVolumesModificationsCommand).resolves({ VolumesModifications: [{ VolumeId: VOL, ModificationState: 'optimizing', StartTime: START, TargetSize: 8 }] });
    const m = await gw().modifyDisk(VOL, { sizeGiB: 8 });
    expect(m.state).toBe('optimizing');
    expect(ec2.commandCalls(ModifyVolumeCommand)).toHaveLength(1);
  });

  it('VolumeModificationRateExceeded for another change -> a modificationRate error naming the code, retryAt the time its message names', async () => {
    ec2.on(ModifyVolumeCommand).rejects(
      ec2Error('VolumeModificationRateExceeded', `Volume '${VOL}' has reached the limit of four modifications in a rolling 24-hour period. You can modify it again after 2026-01-02T03:04:05.000Z.`),
    );
    ec2.on(DescribeVolumesModificationsCommand).resolves({ VolumesModifications: [{ VolumeId: VOL, ModificationState: 'completed', StartTime: START, TargetSize: 8 }] });
    const error = await gw().modifyDisk(VOL, { iops: 6000 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Ec2Error);
    expect(error).toMatchObject({ kind: 'modificationRate', code: 'VolumeModificationRateExceeded', retryAt: new Date('2026-01-02T03:04:05.000Z') });
  });

  it.each([
    ['an ISO instant with an offset', 'again after 2026-01-02T05:04+02:00.', '2026-01-02T03:04:00.000Z'],
    ['a UTC time with a space', 'next modification at 2026-01-02 03:04:05 UTC', '2026-01-02T03:04:05.000Z'],
    ['no zone', 'next modification at 2026-01-02 03:04:05', undefined],
    ['no time (the old 6-hour words)', 'Wait at least 6 hours between modifications per EBS volume.', undefined],
  ])('VolumeModificationRateExceeded naming %s -> retryAt %s', async (_name, message, at) => {
    ec2.on(ModifyVolumeCommand).rejects(ec2Error('VolumeModificationRateExceeded', message));
    ec2.on(DescribeVolumesModificationsCommand).resolves({ VolumesModifications: [] });
    const error = (await gw().modifyDisk(VOL, { iops: 6000 }).catch((e: unknown) => e)) as Ec2Error;
    expect(error.retryAt?.toISOString()).toBe(at);
  });

  it('InvalidParameterValue -> invalidParameter', async () => {
    ec2.on(ModifyVolumeCommand).rejects(ec2Error('InvalidParameterValue', 'New size cannot be smaller than existing size.'));
    await expect(gw().modifyDisk(VOL, { sizeGiB: 2 })).rejects.toMatchObject({ kind: 'invalidParameter' });
  });
});

describe('getModification', () => {
  it('two volumes looked up together -> one DescribeVolumesModifications by a volume-id filter (never refused for a volume never modified)', async () => {
    ec2.on(DescribeVolumesModificationsCommand).resolves({ VolumesModifications: [{ VolumeId: VOL, ModificationState: 'completed', StartTime: START, TargetSize: 8 }] });
    const g = gw();
    const [a, b] = await Promise.all([g.getModification(VOL), g.getModification(VOL2)]);
    expect(a).toMatchObject({ volumeId: VOL, state: 'completed', target: { sizeGiB: 8 } });
    expect(b).toBeUndefined();
    expect(ec2.commandCalls(DescribeVolumesModificationsCommand)).toHaveLength(1);
    expect(ec2).toHaveReceivedCommandWith(DescribeVolumesModificationsCommand, { Filters: [{ Name: 'volume-id', Values: [VOL, VOL2] }] });
  });

  it('several modifications listed for a volume -> the latest start wins', async () => {
    ec2.on(DescribeVolumesModificationsCommand).resolves({
      VolumesModifications: [
        { VolumeId: VOL, ModificationState: 'completed', StartTime: new Date('2025-12-31T00:00:00Z'), TargetSize: 6 },
        { VolumeId: VOL, ModificationState: 'modifying', StartTime: START, TargetSize: 8 },
      ],
    });
    expect(await gw().getModification(VOL)).toMatchObject({ state: 'modifying', target: { sizeGiB: 8 } });
  });
});

describe('tagDisk / untagDisk', () => {
  it('tags -> one CreateTags; keys -> one DeleteTags by key; nothing to do -> no call', async () => {
    ec2.on(CreateTagsCommand).resolves({});
    ec2.on(DeleteTagsCommand).resolves({});
    await gw().tagDisk(VOL, { team: 'storage' });
    await gw().untagDisk(VOL, ['old']);
    await gw().tagDisk(VOL, {});
    await gw().untagDisk(VOL, []);
    expect(ec2).toHaveReceivedCommandWith(CreateTagsCommand, { Resources: [VOL], Tags: [{ Key: 'team', Value: 'storage' }] });
    expect(ec2).toHaveReceivedCommandWith(DeleteTagsCommand, { Resources: [VOL], Tags: [{ Key: 'old' }] });
    expect(ec2.commandCalls(CreateTagsCommand)).toHaveLength(1);
    expect(ec2.commandCalls(DeleteTagsCommand)).toHaveLength(1);
  });
});
