import {
  CreateTagsCommand,
  CreateVolumeCommand,
  DeleteTagsCommand,
  DescribeAvailabilityZonesCommand,
  DescribeInstancesCommand,
  DescribeVolumesCommand,
  DescribeVolumesModificationsCommand,
  ModifyVolumeCommand,
} from '@aws-sdk/client-ec2';
import { describe, expect, it } from 'vitest';
import { expectEc2Error, simPerTest, ZONE } from './helpers.js';

const HOUR = 3600_000;
const t = simPerTest({ zones: ['us-east-1a', 'us-east-1b', 'us-east-1d'] });

async function availableVolume(size = 10): Promise<string> {
  const v = await t.ec2.send(new CreateVolumeCommand({ AvailabilityZone: ZONE, Size: size, VolumeType: 'gp3' }));
  t.clock.advance(15_000);
  return v.VolumeId!;
}
const tagsOf = async (id: string) =>
  Object.fromEntries(
    ((await t.ec2.send(new DescribeVolumesCommand({ VolumeIds: [id] }))).Volumes![0]!.Tags ?? []).map((x) => [x.Key, x.Value]),
  );

describe('CreateTags / DeleteTags', () => {
  it('CreateTags adds and overwrites; DeleteTags by key, by key+value, and all', async () => {
    const id = await availableVolume();
    await t.ec2.send(new CreateTagsCommand({ Resources: [id], Tags: [{ Key: 'a', Value: '1' }, { Key: 'b', Value: '2' }, { Key: 'c', Value: '3' }] }));
    await t.ec2.send(new CreateTagsCommand({ Resources: [id], Tags: [{ Key: 'a', Value: '9' }] }));
    expect(await tagsOf(id)).toEqual({ a: '9', b: '2', c: '3' });
    await t.ec2.send(new DeleteTagsCommand({ Resources: [id], Tags: [{ Key: 'b', Value: 'not-2' }] }));
    expect(await tagsOf(id)).toEqual({ a: '9', b: '2', c: '3' });
    await t.ec2.send(new DeleteTagsCommand({ Resources: [id], Tags: [{ Key: 'b', Value: '2' }, { Key: 'a' }] }));
    expect(await tagsOf(id)).toEqual({ c: '3' });
    await t.ec2.send(new DeleteTagsCommand({ Resources: [id] }));
    expect(await tagsOf(id)).toEqual({});
  });

  it('CreateTags on an instance -> found by a DescribeInstances tag filter', async () => {
    const node = t.sim.runInstance({ zone: ZONE });
    t.sim.runInstance({ zone: ZONE });
    await t.ec2.send(new CreateTagsCommand({ Resources: [node.id], Tags: [{ Key: 'k', Value: 'v' }] }));
    const out = await t.ec2.send(new DescribeInstancesCommand({ Filters: [{ Name: 'tag:k', Values: ['v'] }] }));
    expect(out.Reservations?.flatMap((r) => r.Instances ?? []).map((i) => i.InstanceId)).toEqual([node.id]);
  });

  it('CreateTags naming an unknown volume -> InvalidVolume.NotFound and no tag on the known one', async () => {
    const id = await availableVolume();
    await expectEc2Error(
      t.ec2.send(new CreateTagsCommand({ Resources: [id, 'vol-0123456789abcdef0'], Tags: [{ Key: 'a', Value: '1' }] })),
      'InvalidVolume.NotFound',
    );
    expect(await tagsOf(id)).toEqual({});
  });

  it('more than 50 tags on a resource -> TagLimitExceeded', async () => {
    const id = await availableVolume();
    const tags = Array.from({ length: 51 }, (_, i) => ({ Key: `k${i}`, Value: 'v' }));
    await expectEc2Error(t.ec2.send(new CreateTagsCommand({ Resources: [id], Tags: tags })), 'TagLimitExceeded');
  });
});

describe('DescribeAvailabilityZones', () => {
  it('configured zones -> listed with ids, region and state', async () => {
    const out = await t.ec2.send(new DescribeAvailabilityZonesCommand({}));
    expect(out.AvailabilityZones?.map((z) => [z.ZoneName, z.ZoneId, z.RegionName, z.State])).toEqual([
      ['us-east-1a', 'use1-az1', 'us-east-1', 'available'],
      ['us-east-1b', 'use1-az2', 'us-east-1', 'available'],
      ['us-east-1d', 'use1-az3', 'us-east-1', 'available'],
    ]);
    const one = await t.ec2.send(new DescribeAvailabilityZonesCommand({ Filters: [{ Name: 'zone-name', Values: ['*d'] }] }));
    expect(one.AvailabilityZones?.map((z) => z.ZoneName)).toEqual(['us-east-1d']);
  });

  it('unknown zone name -> InvalidParameterValue; volume in a zone not configured -> InvalidZone.NotFound', async () => {
    await expectEc2Error(t.ec2.send(new DescribeAvailabilityZonesCommand({ ZoneNames: ['us-east-1c'] })), 'InvalidParameterValue');
    await expectEc2Error(
      t.ec2.send(new CreateVolumeCommand({ AvailabilityZone: 'us-east-1c', Size: 1 })),
      'InvalidZone.NotFound',
    );
  });
});

describe('ModifyVolume / DescribeVolumesModifications', () => {
  const modification = async (id: string) =>
    (await t.ec2.send(new DescribeVolumesModificationsCommand({ VolumeIds: [id] }))).VolumesModifications![0]!;

  it('grow a gp3 -> modifying, optimizing (new size visible), completed', async () => {
    const id = await availableVolume(10);
    const out = await t.ec2.send(new ModifyVolumeCommand({ VolumeId: id, Size: 20, Iops: 4000 }));
    expect(out.VolumeModification).toMatchObject({
      VolumeId: id,
      ModificationState: 'modifying',
      OriginalSize: 10,
      TargetSize: 20,
      OriginalIops: 3000,
      TargetIops: 4000,
      TargetVolumeType: 'gp3',
    });
    t.clock.advance(5_000);
    expect((await modification(id)).ModificationState).toBe('optimizing');
    expect((await t.ec2.send(new DescribeVolumesCommand({ VolumeIds: [id] }))).Volumes![0]).toMatchObject({ Size: 20, Iops: 4000 });
    t.clock.advance(30_000);
    const done = await modification(id);
    expect(done.ModificationState).toBe('completed');
    expect(done.Progress).toBe(100);
    expect(done.EndTime).toBeInstanceOf(Date);
  });

  it('second change while modifying or optimizing -> IncorrectModificationState; once completed -> accepted at once (no 6-hour wait)', async () => {
    const id = await availableVolume(10);
    await t.ec2.send(new ModifyVolumeCommand({ VolumeId: id, Size: 20 }));
    await expectEc2Error(t.ec2.send(new ModifyVolumeCommand({ VolumeId: id, Size: 30 })), 'IncorrectModificationState');
    t.clock.advance(5_000);
    expect((await modification(id)).ModificationState).toBe('optimizing');
    await expectEc2Error(t.ec2.send(new ModifyVolumeCommand({ VolumeId: id, Size: 30 })), 'IncorrectModificationState');
    t.clock.advance(30_000);
    expect((await modification(id)).ModificationState).toBe('completed');
    const out = await t.ec2.send(new ModifyVolumeCommand({ VolumeId: id, Size: 30 }));
    expect(out.VolumeModification?.OriginalSize).toBe(20);
  });

  it('four modifications within 24 h -> the fifth VolumeModificationRateExceeded naming when the next may start; at that time -> accepted', async () => {
    const id = await availableVolume(10);
    const firstAt = t.clock.now();
    for (const size of [11, 12, 13, 14]) {
      await t.ec2.send(new ModifyVolumeCommand({ VolumeId: id, Size: size }));
      t.clock.advance(10 * 60_000);
      expect((await modification(id)).ModificationState).toBe('completed');
    }
    const refused = await t.ec2.send(new ModifyVolumeCommand({ VolumeId: id, Size: 15 })).catch((e: unknown) => e as { name: string; message: string });
    expect(refused).toMatchObject({
      name: 'VolumeModificationRateExceeded',
      message: `Volume '${id}' has reached the limit of four modifications in a rolling 24-hour period. You can modify it again after ${new Date(firstAt + 24 * HOUR).toISOString()}.`,
    });
    t.clock.advance(firstAt + 24 * HOUR - 1 - t.clock.now());
    await expectEc2Error(t.ec2.send(new ModifyVolumeCommand({ VolumeId: id, Size: 15 })), 'VolumeModificationRateExceeded');
    t.clock.advance(1);
    const out = await t.ec2.send(new ModifyVolumeCommand({ VolumeId: id, Size: 15 }));
    expect(out.VolumeModification?.OriginalSize).toBe(14);
  });

  it.each([
    ['shrink', { Size: 5 }, 'InvalidParameterValue'],
    ['iops on gp2', { VolumeType: 'gp2', Iops: 3000 }, 'InvalidParameterCombination'],
    ['unknown type', { VolumeType: 'gp9' }, 'UnknownVolumeType'],
    ['nothing changes', { Size: 10 }, 'InvalidParameterValue'],
    ['io2 over 1000 iops/GiB', { VolumeType: 'io2', Iops: 10001 }, 'InvalidParameterValue'],
  ] as const)('%s -> %s', async (_name, input, code) => {
    const id = await availableVolume(10);
    await expectEc2Error(t.ec2.send(new ModifyVolumeCommand({ VolumeId: id, ...(input as object) })), code);
  });

  it('gp3 -> io2 without iops -> target 3000 iops, throughput dropped', async () => {
    const id = await availableVolume(10);
    const out = await t.ec2.send(new ModifyVolumeCommand({ VolumeId: id, VolumeType: 'io2' }));
    expect(out.VolumeModification).toMatchObject({ TargetVolumeType: 'io2', TargetIops: 3000 });
    expect(out.VolumeModification?.TargetThroughput).toBeUndefined();
  });

  it('volume never modified -> InvalidVolumeModification.NotFound; filter by state', async () => {
    const a = await availableVolume();
    const b = await availableVolume();
    await expectEc2Error(t.ec2.send(new DescribeVolumesModificationsCommand({ VolumeIds: [a] })), 'InvalidVolumeModification.NotFound');
    await t.ec2.send(new ModifyVolumeCommand({ VolumeId: b, Size: 11 }));
    const out = await t.ec2.send(
      new DescribeVolumesModificationsCommand({ Filters: [{ Name: 'modification-state', Values: ['modifying'] }] }),
    );
    expect(out.VolumesModifications?.map((m) => m.VolumeId)).toEqual([b]);
  });
});
