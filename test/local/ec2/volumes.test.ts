import {
  CreateVolumeCommand,
  DeleteVolumeCommand,
  DescribeVolumesCommand,
  paginateDescribeVolumes,
  type CreateVolumeCommandInput,
} from '@aws-sdk/client-ec2';
import { describe, expect, it } from 'vitest';
import { expectEc2Error, simPerTest, ZONE } from './helpers.js';

const t = simPerTest();

const create = (input: Partial<CreateVolumeCommandInput> = {}) =>
  t.ec2.send(new CreateVolumeCommand({ AvailabilityZone: ZONE, Size: 10, VolumeType: 'gp3', ...input }));
const describeOne = async (id: string) =>
  (await t.ec2.send(new DescribeVolumesCommand({ VolumeIds: [id] }))).Volumes?.[0];

describe('CreateVolume', () => {
  it('valid gp3 request -> creating volume with defaults, tags and zone', async () => {
    const v = await create({ TagSpecifications: [{ ResourceType: 'volume', Tags: [{ Key: 'team', Value: 'a' }] }] });
    expect(v.VolumeId).toMatch(/^vol-[0-9a-f]{17}$/);
    expect(v).toMatchObject({
      State: 'creating',
      Size: 10,
      VolumeType: 'gp3',
      Iops: 3000,
      Throughput: 125,
      AvailabilityZone: ZONE,
      Encrypted: false,
      MultiAttachEnabled: false,
      Tags: [{ Key: 'team', Value: 'a' }],
    });
    expect(v.$metadata.requestId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('no VolumeType -> gp2, as EC2 defaults', async () => {
    const v = await create({ VolumeType: undefined });
    expect(v.VolumeType).toBe('gp2');
    expect(v.Iops).toBeUndefined();
  });

  it('Encrypted with a key id -> reported as key ARN', async () => {
    const v = await create({ Encrypted: true, KmsKeyId: '1234abcd-12ab-34cd-56ef-1234567890ab' });
    expect(v.Encrypted).toBe(true);
    expect(v.KmsKeyId).toBe('arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab');
  });

  it.each([
    ['gp3 too large', { Size: 65537 }, 'InvalidParameterValue'],
    ['gp3 size 0', { Size: 0 }, 'InvalidParameterValue'],
    ['gp3 iops below 3000', { Iops: 2999 }, 'InvalidParameterValue'],
    ['gp3 iops above 16000', { Size: 100, Iops: 16001 }, 'InvalidParameterValue'],
    ['gp3 iops over 500/GiB', { Size: 10, Iops: 5001 }, 'InvalidParameterValue'],
    ['gp3 throughput below 125', { Throughput: 124 }, 'InvalidParameterValue'],
    ['gp3 throughput above 1000', { Size: 100, Iops: 16000, Throughput: 1001 }, 'InvalidParameterValue'],
    ['gp3 throughput over 0.25 x iops', { Iops: 3000, Throughput: 751 }, 'InvalidParameterValue'],
    ['io1 too small', { VolumeType: 'io1', Size: 3, Iops: 100 }, 'InvalidParameterValue'],
    ['io1 too large', { VolumeType: 'io1', Size: 16385, Iops: 100 }, 'InvalidParameterValue'],
    ['io1 iops over 50/GiB', { VolumeType: 'io1', Size: 10, Iops: 501 }, 'InvalidParameterValue'],
    ['io1 iops above 64000', { VolumeType: 'io1', Size: 2000, Iops: 64001 }, 'InvalidParameterValue'],
    ['io1 without iops', { VolumeType: 'io1', Size: 10 }, 'InvalidParameterCombination'],
    ['io2 iops over 1000/GiB', { VolumeType: 'io2', Size: 4, Iops: 4001 }, 'InvalidParameterValue'],
    ['io2 iops below 100', { VolumeType: 'io2', Size: 4, Iops: 99 }, 'InvalidParameterValue'],
    ['io2 too large', { VolumeType: 'io2', Size: 65537, Iops: 100 }, 'InvalidParameterValue'],
    ['gp2 too large', { VolumeType: 'gp2', Size: 16385 }, 'InvalidParameterValue'],
    ['gp2 with iops', { VolumeType: 'gp2', Iops: 3000 }, 'InvalidParameterCombination'],
    ['io2 with throughput', { VolumeType: 'io2', Size: 10, Iops: 100, Throughput: 125 }, 'InvalidParameterCombination'],
    ['st1 too small', { VolumeType: 'st1', Size: 124 }, 'InvalidParameterValue'],
    ['sc1 too large', { VolumeType: 'sc1', Size: 16385 }, 'InvalidParameterValue'],
    ['standard too large', { VolumeType: 'standard', Size: 1025 }, 'InvalidParameterValue'],
    ['unknown type', { VolumeType: 'gp9' as 'gp3' }, 'UnknownVolumeType'],
    ['multi-attach on gp3', { MultiAttachEnabled: true }, 'InvalidParameterCombination'],
    ['zone of another region', { AvailabilityZone: 'us-west-2a' }, 'InvalidZone.NotFound'],
    ['no zone', { AvailabilityZone: undefined }, 'MissingParameter'],
    ['no size', { Size: undefined }, 'MissingParameter'],
    ['KmsKeyId without Encrypted', { KmsKeyId: 'abc' }, 'InvalidParameterDependency'],
    ['tag key starting aws:', { TagSpecifications: [{ ResourceType: 'volume', Tags: [{ Key: 'aws:x', Value: 'y' }] }] }, 'InvalidParameterValue'],
    ['tags for an instance', { TagSpecifications: [{ ResourceType: 'instance', Tags: [{ Key: 'x', Value: 'y' }] }] }, 'InvalidParameterValue'],
  ] as const)('%s -> %s', async (_name, input, code) => {
    await expectEc2Error(create(input as Partial<CreateVolumeCommandInput>), code);
    expect(t.sim.volumes()).toHaveLength(0);
  });

  it.each([
    ['gp3 1 GiB at baseline 3000 iops', { Size: 1 }],
    ['gp3 at 500 iops/GiB and 0.25 MiB/s per iops', { Size: 32, Iops: 16000, Throughput: 1000 }],
    ['io1 at 50 iops/GiB', { VolumeType: 'io1', Size: 4, Iops: 200 }],
    ['io2 at 1000 iops/GiB, multi-attach', { VolumeType: 'io2', Size: 4, Iops: 4000, MultiAttachEnabled: true }],
    ['st1 at 125 GiB', { VolumeType: 'st1', Size: 125 }],
    ['standard at 1024 GiB', { VolumeType: 'standard', Size: 1024 }],
  ] as const)('limit case %s -> accepted', async (_name, input) => {
    const v = await create(input as Partial<CreateVolumeCommandInput>);
    expect(v.State).toBe('creating');
  });

  it('same ClientToken and parameters -> the same volume, once', async () => {
    const a = await create({ ClientToken: 'token-1', Size: 20 });
    const b = await create({ ClientToken: 'token-1', Size: 20 });
    expect(b.VolumeId).toBe(a.VolumeId);
    expect(t.sim.volumes()).toHaveLength(1);
  });

  it('same ClientToken, other parameters -> IdempotentParameterMismatch', async () => {
    await create({ ClientToken: 'token-2', Size: 20 });
    await expectEc2Error(create({ ClientToken: 'token-2', Size: 21 }), 'IdempotentParameterMismatch');
    await expectEc2Error(
      create({ ClientToken: 'token-2', Size: 20, TagSpecifications: [{ ResourceType: 'volume', Tags: [{ Key: 'k', Value: 'v' }] }] }),
      'IdempotentParameterMismatch',
    );
    expect(t.sim.volumes()).toHaveLength(1);
  });

  it('retry with token after the volume became available -> current state of the same volume', async () => {
    const a = await create({ ClientToken: 'token-3' });
    t.clock.advance(60_000);
    const b = await create({ ClientToken: 'token-3' });
    expect(b.VolumeId).toBe(a.VolumeId);
    expect(b.State).toBe('available');
  });

  it('retry with token after the volume was deleted and is gone -> that same volume, state deleted; no new volume', async () => {
    const a = await create({ ClientToken: 'token-4' });
    t.clock.advance(60_000);
    await t.ec2.send(new DeleteVolumeCommand({ VolumeId: a.VolumeId }));
    t.clock.advance(60_000);
    expect(t.sim.volumes().some((v) => v.id === a.VolumeId)).toBe(false);
    const b = await create({ ClientToken: 'token-4' });
    expect(b.VolumeId).toBe(a.VolumeId);
    expect(b.State).toBe('deleted');
    expect(t.sim.volumes()).toHaveLength(0);
  });

  it('DryRun -> DryRunOperation (412) and nothing created', async () => {
    await expectEc2Error(create({ DryRun: true }), 'DryRunOperation', 412);
    expect(t.sim.volumes()).toHaveLength(0);
  });
});

describe('volume state machine', () => {
  it('creating -> available within the create latency (p99 4 s, capped)', async () => {
    const v = await create();
    expect((await describeOne(v.VolumeId!))?.State).toBe('creating');
    t.clock.advance(15_000);
    expect((await describeOne(v.VolumeId!))?.State).toBe('available');
  });

  it('create latencies -> median about 1.5 s', async () => {
    for (let i = 0; i < 60; i++) {
      const out = await t.sim.call({ Action: 'CreateVolume', AvailabilityZone: ZONE, Size: '1' });
      expect(out.status).toBe(200);
    }
    t.clock.advance(1500);
    const available = t.sim.volumes().filter((v) => v.state === 'available').length;
    expect(available).toBeGreaterThan(15);
    expect(available).toBeLessThan(45);
  });

  it('DeleteVolume -> deleting, then InvalidVolume.NotFound', async () => {
    const v = await create();
    t.clock.advance(15_000);
    const del = await t.ec2.send(new DeleteVolumeCommand({ VolumeId: v.VolumeId }));
    expect(del.$metadata.httpStatusCode).toBe(200);
    expect((await describeOne(v.VolumeId!))?.State).toBe('deleting');
    t.clock.advance(5_000);
    await expectEc2Error(describeOne(v.VolumeId!), 'InvalidVolume.NotFound');
  });

  it('DeleteVolume of an unknown volume -> InvalidVolume.NotFound', async () => {
    await expectEc2Error(t.ec2.send(new DeleteVolumeCommand({ VolumeId: 'vol-0123456789abcdef0' })), 'InvalidVolume.NotFound');
  });

  it('malformed volume id -> InvalidVolumeID.Malformed', async () => {
    await expectEc2Error(t.ec2.send(new DeleteVolumeCommand({ VolumeId: 'disk-1' })), 'InvalidVolumeID.Malformed');
  });

  it('KmsKeyId containing sim-vanish -> creating, then gone (refused key)', async () => {
    const v = await create({ Encrypted: true, KmsKeyId: 'alias/sim-vanish' });
    expect((await describeOne(v.VolumeId!))?.State).toBe('creating');
    t.clock.advance(15_000);
    await expectEc2Error(describeOne(v.VolumeId!), 'InvalidVolume.NotFound');
  });

  it('KmsKeyId containing sim-error -> error state', async () => {
    const v = await create({ Encrypted: true, KmsKeyId: 'alias/sim-error' });
    t.clock.advance(15_000);
    expect((await describeOne(v.VolumeId!))?.State).toBe('error');
  });

  it('create fault rule on a tag -> that volume ends in error, others not', async () => {
    t.sim.configure({ createFaults: [{ tag: { key: 'fail' }, outcome: 'error' }] });
    const bad = await create({ TagSpecifications: [{ ResourceType: 'volume', Tags: [{ Key: 'fail', Value: '1' }] }] });
    const good = await create();
    t.clock.advance(15_000);
    expect(t.sim.volume(bad.VolumeId!)?.state).toBe('error');
    expect(t.sim.volume(good.VolumeId!)?.state).toBe('available');
  });
});

describe('DescribeVolumes', () => {
  async function seed() {
    const tag = (k: string, v: string) => ({ TagSpecifications: [{ ResourceType: 'volume' as const, Tags: [{ Key: k, Value: v }] }] });
    const a = await create({ ...tag('cluster', 'one') });
    const b = await create({ AvailabilityZone: 'us-east-1b', ...tag('cluster', 'two') });
    t.clock.advance(15_000);
    const c = await create({ ...tag('other', 'x') });
    return { a: a.VolumeId!, b: b.VolumeId!, c: c.VolumeId! };
  }
  const ids = async (filters: { Name: string; Values: string[] }[]) =>
    ((await t.ec2.send(new DescribeVolumesCommand({ Filters: filters }))).Volumes ?? []).map((v) => v.VolumeId).sort();

  it('filters by tag:K, tag-key, zone, status, volume-id (values OR-ed, filters AND-ed, wildcards)', async () => {
    const { a, b, c } = await seed();
    expect(await ids([{ Name: 'tag:cluster', Values: ['one'] }])).toEqual([a]);
    expect(await ids([{ Name: 'tag:cluster', Values: ['one', 'two'] }])).toEqual([a, b].sort());
    expect(await ids([{ Name: 'tag:cluster', Values: ['t*'] }])).toEqual([b]);
    expect(await ids([{ Name: 'tag-key', Values: ['other'] }])).toEqual([c]);
    expect(await ids([{ Name: 'availability-zone', Values: ['us-east-1b'] }])).toEqual([b]);
    expect(await ids([{ Name: 'status', Values: ['creating'] }])).toEqual([c]);
    expect(await ids([{ Name: 'volume-id', Values: [a, c] }])).toEqual([a, c].sort());
    expect(await ids([{ Name: 'tag-key', Values: ['cluster'] }, { Name: 'availability-zone', Values: [ZONE] }])).toEqual([a]);
  });

  it('unknown filter name -> InvalidParameterValue', async () => {
    await expectEc2Error(ids([{ Name: 'colour', Values: ['red'] }]), 'InvalidParameterValue');
  });

  it('one unknown id among known ones -> InvalidVolume.NotFound', async () => {
    const { a } = await seed();
    await expectEc2Error(
      t.ec2.send(new DescribeVolumesCommand({ VolumeIds: [a, 'vol-0123456789abcdef0'] })),
      'InvalidVolume.NotFound',
    );
  });

  it('MaxResults with VolumeIds -> InvalidParameterCombination', async () => {
    const { a } = await seed();
    await expectEc2Error(t.ec2.send(new DescribeVolumesCommand({ VolumeIds: [a], MaxResults: 5 })), 'InvalidParameterCombination');
  });

  it('MaxResults below 5 -> InvalidParameterValue', async () => {
    await expectEc2Error(t.ec2.send(new DescribeVolumesCommand({ MaxResults: 4 })), 'InvalidParameterValue');
  });

  it('MaxResults/NextToken -> pages of that size that together list every volume once', async () => {
    const created: string[] = [];
    for (let i = 0; i < 12; i++) created.push((await create()).VolumeId!);
    const first = await t.ec2.send(new DescribeVolumesCommand({ MaxResults: 5 }));
    expect(first.Volumes).toHaveLength(5);
    expect(first.NextToken).toBeTruthy();
    const seen: string[] = [];
    for await (const page of paginateDescribeVolumes({ client: t.ec2, pageSize: 5 }, {})) {
      expect(page.Volumes!.length).toBeLessThanOrEqual(5);
      seen.push(...page.Volumes!.map((v) => v.VolumeId!));
    }
    expect(seen).toEqual(created);
  });

  it('bad NextToken -> InvalidParameterValue', async () => {
    await expectEc2Error(t.ec2.send(new DescribeVolumesCommand({ MaxResults: 5, NextToken: 'nonsense' })), 'InvalidParameterValue');
  });
});
