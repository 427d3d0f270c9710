import { DescribeAvailabilityZonesCommand, EC2Client } from '@aws-sdk/client-ec2';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createEc2Gateway, Ec2Error } from '../../lib/ec2/index.js';
import { ec2Error, FakeEc2 } from './fake-ec2.js';

describe('SDK gateway: the Region zones, cached per EC2 client', () => {
  let ec2: FakeEc2;
  beforeEach(() => {
    ec2 = new FakeEc2();
  });
  afterEach(() => ec2.restore());

  const describes = () => ec2.mock.commandCalls(DescribeAvailabilityZonesCommand).length;
  const clientOf = () => new EC2Client({ region: 'us-east-1' });

  it('many requests of one process, at once and later -> one DescribeAvailabilityZones; each zone with its ID', async () => {
    const client = clientOf();
    const gateway = () => createEc2Gateway({ client, clusterId: 'c1', deadline: Date.now() + 5_000 });
    const [first, second] = await Promise.all([gateway().zones(), gateway().zones()]);
    const later = await createEc2Gateway({ client, clusterId: 'other' }).zones();
    expect(first).toEqual([
      { name: 'us-east-1a', id: 'use1-az6' },
      { name: 'us-east-1b', id: 'use1-az1' },
      { name: 'us-east-1c', id: 'use1-az2' },
    ]);
    expect(second).toEqual(first);
    expect(later).toEqual(first);
    expect(describes()).toBe(1);
  });

  it('another client (another Region or process) -> asked again', async () => {
    await createEc2Gateway({ client: clientOf(), clusterId: 'c1' }).zones();
    await createEc2Gateway({ client: clientOf(), clusterId: 'c1' }).zones();
    expect(describes()).toBe(2);
  });

  it('the cache outlived (zonesTtlMs) -> asked again', async () => {
    const client = clientOf();
    await createEc2Gateway({ client, clusterId: 'c1', zonesTtlMs: 0 }).zones();
    await createEc2Gateway({ client, clusterId: 'c1', zonesTtlMs: 0 }).zones();
    expect(describes()).toBe(2);
  });

  it('a refused describe -> that call fails, classified and naming the permission; it is not cached', async () => {
    const client = clientOf();
    ec2.mock
      .on(DescribeAvailabilityZonesCommand)
      .rejectsOnce(ec2Error('UnauthorizedOperation', 'You are not authorized to perform this operation.', 403))
      .resolves({ AvailabilityZones: ec2.zones });
    const err = await createEc2Gateway({ client, clusterId: 'c1' }).zones().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Ec2Error);
    expect(err).toMatchObject({ kind: 'unauthorized', message: expect.stringContaining('ec2:DescribeAvailabilityZones') });
    expect(await createEc2Gateway({ client, clusterId: 'c1' }).zones()).toHaveLength(3);
    expect(describes()).toBe(2);
  });

  it('zones without a name or ID in the answer -> left out', async () => {
    ec2.mock.on(DescribeAvailabilityZonesCommand).resolves({ AvailabilityZones: [{ ZoneName: 'us-east-1a' }, { ZoneId: 'use1-az9' }, ...ec2.zones.slice(1, 2)] });
    expect(await createEc2Gateway({ client: clientOf(), clusterId: 'c1' }).zones()).toEqual([{ name: 'us-east-1b', id: 'use1-az1' }]);
  });
});
