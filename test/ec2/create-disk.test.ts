import { createHash } from 'node:crypto';
import {
  CreateTagsCommand,
  CreateVolumeCommand,
  DescribeVolumesCommand,
  EC2Client,
  type Volume,
} from '@aws-sdk/client-ec2';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { clientTokenFor, createEc2Gateway, Ec2Error, type CreateDiskRequest } from '../../lib/ec2/index.js';
import { ec2Error } from './fake-ec2.js';

const ec2 = mockClient(EC2Client);
const client = new EC2Client({ region: 'us-east-1' });
const gateway = () => createEc2Gateway({ client, clusterId: 'c1', batchWindowMs: 0 });

const name = 'pvc-0b0e6a5c-55f4-4a4c-9d0c-1b7c1d1f2e3a';
const request: CreateDiskRequest = {
  name,
  zone: 'us-east-1b',
  sizeGiB: 20,
  type: 'io2',
  iops: 4000,
  encrypted: true,
  kmsKeyId: 'arn:aws:kms:us-east-1:111122223333:key/k1',
  multiAttach: true,
  tags: {
    CSIVolumeName: name,
    'ebs.csi.aws.com/cluster': 'true',
    'kubernetes.io/cluster/c1': 'owned',
    'volhook.io/cluster': 'c1',
    'kubernetes.io/created-for/pvc/name': 'data',
    'kubernetes.io/created-for/pvc/namespace': 'default',
    'kubernetes.io/created-for/pv/name': name,
    team: 'storage',
  },
};
const volume: Volume = {
  VolumeId: 'vol-0aaaaaaaaaaaaaaa1',
  AvailabilityZone: 'us-east-1b',
  Size: 20,
  VolumeType: 'io2',
  Iops: 4000,
  State: 'available',
  Encrypted: true,
  MultiAttachEnabled: true,
  Tags: Object.entries(request.tags).map(([Key, Value]) => ({ Key, Value })),
  Attachments: [],
};

beforeEach(() => ec2.reset());
afterEach(() => expect(ec2).not.toHaveReceivedCommand(CreateTagsCommand));

describe('createDisk', () => {
  it('a volume already tagged with the name -> returned, no CreateVolume', async () => {
    ec2.on(DescribeVolumesCommand).resolves({ Volumes: [volume] });
    const disk = await gateway().createDisk(request);
    expect(disk.volumeId).toBe('vol-0aaaaaaaaaaaaaaa1');
    expect(ec2).not.toHaveReceivedCommand(CreateVolumeCommand);
    expect(ec2).toHaveReceivedCommandWith(DescribeVolumesCommand, {
      Filters: [
        { Name: 'tag:CSIVolumeName', Values: [name] },
        { Name: 'tag:kubernetes.io/cluster/c1', Values: ['owned'] },
      ],
    });
  });

  it('no such volume -> one CreateVolume with the token, every parameter and every tag', async () => {
    ec2.on(DescribeVolumesCommand).resolves({ Volumes: [] });
    ec2.on(CreateVolumeCommand).resolves({ ...volume, State: 'creating' });
    const disk = await gateway().createDisk(request);

    expect(disk).toMatchObject({ volumeId: 'vol-0aaaaaaaaaaaaaaa1', state: 'creating', zone: 'us-east-1b' });
    const calls = ec2.commandCalls(CreateVolumeCommand);
    expect(calls).toHaveLength(1);
    const input = calls[0]!.args[0].input;
    const token = createHash('sha256').update(`c1/${name}`).digest('hex');
    expect(input).toEqual({
      ClientToken: token,
      AvailabilityZone: 'us-east-1b',
      Size: 20,
      VolumeType: 'io2',
      Iops: 4000,
      Encrypted: true,
      KmsKeyId: 'arn:aws:kms:us-east-1:111122223333:key/k1',
      MultiAttachEnabled: true,
      TagSpecifications: [{ ResourceType: 'volume', Tags: expect.any(Array) }],
    });
    expect(input.ClientToken).toMatch(/^[0-9a-f]{64}$/);
    const tags = input.TagSpecifications?.[0]?.Tags ?? [];
    // The request's tags, and the one the EBS CSI driver's cluster-scoped policy fences by.
    expect(Object.fromEntries(tags.map((t) => [t.Key, t.Value]))).toEqual({ ...request.tags, 'ebs.csi.aws.com/cluster-name': 'c1' });
    expect(tags).toHaveLength(Object.keys(request.tags).length + 1);
  });

  it('caller forgot the identity tags -> CreateVolume carries them anyway', async () => {
    ec2.on(DescribeVolumesCommand).resolves({ Volumes: [] });
    ec2.on(CreateVolumeCommand).resolves(volume);
    await gateway().createDisk({ ...request, tags: { team: 'storage' }, kmsKeyId: undefined, encrypted: undefined });
    const input = ec2.commandCalls(CreateVolumeCommand)[0]!.args[0].input;
    expect(input.Encrypted).toBeUndefined();
    expect(input.TagSpecifications?.[0]?.Tags).toEqual(
      expect.arrayContaining([
        { Key: 'team', Value: 'storage' },
        { Key: 'CSIVolumeName', Value: name },
        { Key: 'ebs.csi.aws.com/cluster', Value: 'true' },
        { Key: 'kubernetes.io/cluster/c1', Value: 'owned' },
        { Key: 'volhook.io/cluster', Value: 'c1' },
      ]),
    );
  });

  it('a kmsKeyId without encrypted -> Encrypted true', async () => {
    ec2.on(DescribeVolumesCommand).resolves({ Volumes: [] });
    ec2.on(CreateVolumeCommand).resolves(volume);
    await gateway().createDisk({ ...request, encrypted: undefined });
    expect(ec2).toHaveReceivedCommandWith(CreateVolumeCommand, { Encrypted: true, KmsKeyId: request.kmsKeyId });
  });

  it('IdempotentParameterMismatch -> the volume found by tag is returned', async () => {
    ec2.on(DescribeVolumesCommand).resolvesOnce({ Volumes: [] }).resolves({ Volumes: [volume] });
    ec2.on(CreateVolumeCommand).rejects(ec2Error('IdempotentParameterMismatch'));
    const disk = await gateway().createDisk(request);
    expect(disk.volumeId).toBe('vol-0aaaaaaaaaaaaaaa1');
    expect(ec2).toHaveReceivedCommandTimes(DescribeVolumesCommand, 2);
  });

  it('IdempotentParameterMismatch and no volume by tag -> idempotentMismatch error', async () => {
    ec2.on(DescribeVolumesCommand).resolves({ Volumes: [] });
    ec2.on(CreateVolumeCommand).rejects(ec2Error('IdempotentParameterMismatch'));
    await expect(gateway().createDisk(request)).rejects.toMatchObject({ kind: 'idempotentMismatch' });
  });

  it('VolumeLimitExceeded but the volume exists by tag -> returned', async () => {
    ec2.on(DescribeVolumesCommand).resolvesOnce({ Volumes: [] }).resolves({ Volumes: [volume] });
    ec2.on(CreateVolumeCommand).rejects(ec2Error('VolumeLimitExceeded', 'You have exceeded your maximum io2 storage limit'));
    expect((await gateway().createDisk(request)).volumeId).toBe('vol-0aaaaaaaaaaaaaaa1');
  });

  it('VolumeLimitExceeded and no volume by tag -> volumeLimit error', async () => {
    ec2.on(DescribeVolumesCommand).resolves({ Volumes: [] });
    ec2.on(CreateVolumeCommand).rejects(ec2Error('VolumeLimitExceeded', 'You have exceeded your maximum io2 storage limit'));
    const err = await gateway().createDisk(request).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Ec2Error);
    expect(err).toMatchObject({ kind: 'volumeLimit', code: 'VolumeLimitExceeded', action: 'CreateVolume' });
    expect(ec2).toHaveReceivedCommandTimes(DescribeVolumesCommand, 2);
  });

  it('InvalidParameterValue -> invalidParameter error without a second look-up', async () => {
    ec2.on(DescribeVolumesCommand).resolves({ Volumes: [] });
    ec2.on(CreateVolumeCommand).rejects(ec2Error('InvalidParameterValue', 'Iops is not supported for gp2'));
    await expect(gateway().createDisk(request)).rejects.toMatchObject({ kind: 'invalidParameter' });
    expect(ec2).toHaveReceivedCommandTimes(DescribeVolumesCommand, 1);
  });
});

describe('clientTokenFor', () => {
  it('cluster and name -> 64 hex chars of sha256("<cluster>/<name>"), different per cluster', () => {
    expect(clientTokenFor('c1', 'pvc-1')).toBe(createHash('sha256').update('c1/pvc-1').digest('hex'));
    expect(clientTokenFor('c1', 'pvc-1')).toMatch(/^[0-9a-f]{64}$/);
    expect(clientTokenFor('c2', 'pvc-1')).not.toBe(clientTokenFor('c1', 'pvc-1'));
  });
});

describe('createDisk after a volume failed: ClientToken generations', () => {
  const dead = (id: string, state: 'deleting' | 'deleted' = 'deleted'): Volume => ({ ...volume, VolumeId: id, State: state });
  const tokenAfter = (id: string) => createHash('sha256').update(`c1/${name}/after/${id}`).digest('hex');

  it('only a deleted volume of that name -> CreateVolume under the next token, derived from the dead volume', async () => {
    ec2.on(DescribeVolumesCommand).resolves({ Volumes: [dead('vol-0dead0000000000a1', 'deleting')] });
    ec2.on(CreateVolumeCommand).resolves({ ...volume, VolumeId: 'vol-0bbbbbbbbbbbbbbb2', State: 'creating' });
    const disk = await gateway().createDisk(request);
    expect(disk).toMatchObject({ volumeId: 'vol-0bbbbbbbbbbbbbbb2', state: 'creating' });
    expect(ec2.commandCalls(CreateVolumeCommand).map((c) => c.args[0].input.ClientToken)).toEqual([tokenAfter('vol-0dead0000000000a1')]);
    expect(tokenAfter('vol-0dead0000000000a1')).toBe(clientTokenFor('c1', name, 'vol-0dead0000000000a1'));
  });

  it('EC2 answers the token with its dead volume (gone from describe) -> the next generation, once, and that volume is returned', async () => {
    ec2.on(DescribeVolumesCommand).resolves({ Volumes: [] });
    ec2
      .on(CreateVolumeCommand)
      .resolvesOnce(dead('vol-0dead0000000000a1'))
      .resolvesOnce({ ...volume, VolumeId: 'vol-0bbbbbbbbbbbbbbb2', State: 'creating' });
    const disk = await gateway().createDisk(request);
    expect(disk.volumeId).toBe('vol-0bbbbbbbbbbbbbbb2');
    expect(ec2.commandCalls(CreateVolumeCommand).map((c) => c.args[0].input.ClientToken)).toEqual([
      createHash('sha256').update(`c1/${name}`).digest('hex'),
      tokenAfter('vol-0dead0000000000a1'),
    ]);
  });

  it('a volume in state error -> returned as it is for the reconciler to delete, no CreateVolume', async () => {
    ec2.on(DescribeVolumesCommand).resolves({ Volumes: [{ ...volume, State: 'error' }] });
    expect(await gateway().createDisk(request)).toMatchObject({ state: 'error' });
    expect(ec2).not.toHaveReceivedCommand(CreateVolumeCommand);
  });

  it('a live replacement and its dead predecessor both tagged -> the live one, no CreateVolume (a replayed request finds it by tag)', async () => {
    ec2.on(DescribeVolumesCommand).resolves({ Volumes: [dead('vol-0dead0000000000a1'), { ...volume, State: 'creating' }] });
    expect((await gateway().createDisk(request)).volumeId).toBe('vol-0aaaaaaaaaaaaaaa1');
    expect(ec2).not.toHaveReceivedCommand(CreateVolumeCommand);
  });
});

describe('findDiskByName: one malformed name never fails its batch', () => {
  it('a name with a lone UTF-16 surrogate among good ones -> that look-up alone is refused; the rest answered from one DescribeVolumes', async () => {
    ec2.on(DescribeVolumesCommand).resolves({ Volumes: [volume] });
    const gw = createEc2Gateway({ client, clusterId: 'c1', batchWindowMs: 5 });
    const bad = 'pvc-\ud800-broken';
    const [good, broken, missing] = await Promise.allSettled([
      gw.findDiskByName(name),
      gw.findDiskByName(bad),
      gw.findDiskByName('pvc-11111111-2222-4333-8444-555555555555'),
    ]);
    expect(good).toMatchObject({ status: 'fulfilled', value: { volumeId: 'vol-0aaaaaaaaaaaaaaa1' } });
    expect(missing).toEqual({ status: 'fulfilled', value: undefined });
    expect(broken.status).toBe('rejected');
    expect(broken.status === 'rejected' && broken.reason).toBeInstanceOf(Ec2Error);
    const calls = ec2.commandCalls(DescribeVolumesCommand);
    expect(calls).toHaveLength(1);
    expect(calls[0]!.args[0].input.Filters?.[0]?.Values).toEqual([name, 'pvc-11111111-2222-4333-8444-555555555555']);
  });
});
