import { DescribeInstancesCommand, DescribeVolumesCommand, EC2Client } from '@aws-sdk/client-ec2';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createEc2Gateway, type Ec2Gateway } from '../../lib/ec2/index.js';
import { ec2Error, FakeEc2 } from './fake-ec2.js';

const client = new EC2Client({ region: 'us-east-1' });
const gatewayFor = () => createEc2Gateway({ client, clusterId: 'c1' });
const owned = (name: string) => ({ CSIVolumeName: name, 'kubernetes.io/cluster/c1': 'owned' });

describe('batched look-ups over a fake EC2', () => {
  let ec2: FakeEc2;
  let gw: Ec2Gateway;
  beforeEach(() => {
    ec2 = new FakeEc2();
    gw = gatewayFor();
  });
  afterEach(() => ec2.restore());

  const volumeIds = (n: number) => Array.from({ length: n }, (_, i) => ec2.addVolume({ tags: owned(`pvc-${i}`), State: 'creating' }));
  const idsPerCall = () => ec2.mock.commandCalls(DescribeVolumesCommand).map((c) => c.args[0].input.VolumeIds?.length);

  it('200 concurrent getDisk -> exactly one DescribeVolumes, every disk found', async () => {
    const ids = volumeIds(200);
    const disks = await Promise.all(ids.map((id) => gw.getDisk(id)));
    expect(ec2.mock).toHaveReceivedCommandTimes(DescribeVolumesCommand, 1);
    expect(disks.map((d) => d?.volumeId)).toEqual(ids);
  });

  it('1200 concurrent getDisk -> three DescribeVolumes of at most 500 IDs', async () => {
    const ids = volumeIds(1200);
    const disks = await Promise.all(ids.map((id) => gw.getDisk(id)));
    expect(ec2.mock).toHaveReceivedCommandTimes(DescribeVolumesCommand, 3);
    expect(idsPerCall()).toEqual([500, 500, 200]);
    expect(disks.every((d, i) => d?.volumeId === ids[i])).toBe(true);
  });

  it('unknown IDs in the batch -> those undefined, the rest found by one more call without them', async () => {
    const ids = volumeIds(3);
    const unknown = ['vol-0ffffffffffffff01', 'vol-0ffffffffffffff02'];
    const disks = await Promise.all([...ids, ...unknown].map((id) => gw.getDisk(id)));
    expect(disks.map((d) => d?.volumeId)).toEqual([...ids, undefined, undefined]);
    expect(ec2.mock).toHaveReceivedCommandTimes(DescribeVolumesCommand, 2);
    expect(ec2.mock.commandCalls(DescribeVolumesCommand)[1]!.args[0].input.VolumeIds).toEqual(ids);
  });

  it('only unknown IDs -> all undefined', async () => {
    const disks = await Promise.all(['vol-0ffffffffffffff01', 'vol-0ffffffffffffff02'].map((id) => gw.getDisk(id)));
    expect(disks).toEqual([undefined, undefined]);
  });

  it('malformed IDs -> undefined without any call', async () => {
    const disks = await Promise.all(['pvc-123', 'vol-XYZ', '', 'vol-', 'i-0123abcd'].map((id) => gw.getDisk(id)));
    expect(disks).toEqual([undefined, undefined, undefined, undefined, undefined]);
    expect(ec2.mock).not.toHaveReceivedCommand(DescribeVolumesCommand);
  });

  it('a forged handle among real ones -> undefined, the others found in one call', async () => {
    const ids = volumeIds(2);
    const disks = await Promise.all([ids[0]!, 'vol-../../etc', ids[1]!].map((id) => gw.getDisk(id)));
    expect(disks.map((d) => d?.volumeId)).toEqual([ids[0], undefined, ids[1]]);
    expect(ec2.mock).toHaveReceivedCommandTimes(DescribeVolumesCommand, 1);
  });

  it('one ID asked twice in a batch -> asked once, both answered', async () => {
    const [id] = volumeIds(1);
    const [a, b] = await Promise.all([gw.getDisk(id!), gw.getDisk(id!)]);
    expect(a?.volumeId).toBe(id);
    expect(b?.volumeId).toBe(id);
    expect(idsPerCall()).toEqual([1]);
  });

  it('a volume read again in the same request -> EC2 asked again, the new state seen', async () => {
    const [id] = volumeIds(1);
    expect((await gw.getDisk(id!))?.state).toBe('creating');
    expect((await gw.getDisk(id!))?.state).toBe('available');
    expect(ec2.mock).toHaveReceivedCommandTimes(DescribeVolumesCommand, 2);
  });

  it('200 concurrent findDiskByName -> one DescribeVolumes filtered by name and cluster', async () => {
    volumeIds(200);
    const disks = await Promise.all(Array.from({ length: 200 }, (_, i) => gw.findDiskByName(`pvc-${i}`)));
    expect(disks.every((d, i) => d?.tags.CSIVolumeName === `pvc-${i}`)).toBe(true);
    expect(ec2.mock).toHaveReceivedCommandTimes(DescribeVolumesCommand, 1);
    const filters = ec2.mock.commandCalls(DescribeVolumesCommand)[0]!.args[0].input.Filters;
    expect(filters?.[0]?.Values).toHaveLength(200);
    expect(filters?.[1]).toEqual({ Name: 'tag:kubernetes.io/cluster/c1', Values: ['owned'] });
  });

  it('450 concurrent findDiskByName -> three calls of at most 200 names', async () => {
    volumeIds(450);
    const disks = await Promise.all(Array.from({ length: 450 }, (_, i) => gw.findDiskByName(`pvc-${i}`)));
    expect(disks.filter(Boolean)).toHaveLength(450);
    const sizes = ec2.mock.commandCalls(DescribeVolumesCommand).map((c) => c.args[0].input.Filters?.[0]?.Values?.length);
    expect(sizes).toEqual([200, 200, 50]);
  });

  it('claims by name and attachments by ID with their PV names -> one DescribeVolumes for all', async () => {
    const ids = volumeIds(100);
    const [claims, attachments] = await Promise.all([
      Promise.all(Array.from({ length: 50 }, (_, i) => gw.findDiskByName(`pvc-${i}`))),
      Promise.all(ids.slice(50).map((id, i) => gw.getDisk(id, `pvc-${50 + i}`))),
    ]);
    expect(claims.every((d, i) => d?.tags.CSIVolumeName === `pvc-${i}`)).toBe(true);
    expect(attachments.map((d) => d?.volumeId)).toEqual(ids.slice(50));
    expect(ec2.mock).toHaveReceivedCommandTimes(DescribeVolumesCommand, 1);
  });

  it('a name that is not the volume\'s (another volume has it, or none) -> the volume asked by ID, never the named one returned', async () => {
    const [mine, other] = volumeIds(2);
    const untagged = ec2.addVolume({ tags: { 'kubernetes.io/cluster/c1': 'owned' } });
    const [a, b] = await Promise.all([gw.getDisk(mine!, 'pvc-1'), gw.getDisk(untagged, 'pvc-static')]);
    expect(a?.volumeId).toBe(mine);
    expect(b?.volumeId).toBe(untagged);
    expect(other).not.toBe(mine);
    // One describe by the two names, then one by the two IDs.
    expect(ec2.mock).toHaveReceivedCommandTimes(DescribeVolumesCommand, 2);
    expect(idsPerCall()).toEqual([undefined, 2]);
  });

  it('200 concurrent getInstance -> one DescribeInstances; unknown and terminated -> undefined', async () => {
    const ids = Array.from({ length: 198 }, () => ec2.addInstance('us-east-1a'));
    const terminated = ec2.addInstance('us-east-1a', { State: { Name: 'terminated', Code: 48 } });
    const instances = await Promise.all([...ids, terminated, 'i-0fffffffffffffff1'].map((id) => gw.getInstance(id)));
    expect(instances.slice(0, 198).every((inst, i) => inst?.instanceId === ids[i] && inst?.zone === 'us-east-1a')).toBe(true);
    expect(instances.slice(198)).toEqual([undefined, undefined]);
    expect(ec2.mock).toHaveReceivedCommandTimes(DescribeInstancesCommand, 2);
    expect(ec2.mock.commandCalls(DescribeInstancesCommand)[1]!.args[0].input.InstanceIds).toHaveLength(199);
  });

  it('instance with attachments -> devicesInUse lists root and attached devices', async () => {
    const instanceId = ec2.addInstance('us-east-1a');
    const [volumeId] = volumeIds(1);
    await gw.getDisk(volumeId!); // creating -> available
    await gw.attachDisk(volumeId!, instanceId, '/dev/xvdaa');
    expect((await gw.getInstance(instanceId))?.devicesInUse).toEqual(['/dev/xvda', '/dev/xvdaa']);
  });
});

describe('batched look-ups, EC2 answers scripted', () => {
  const ec2 = mockClient(EC2Client);
  beforeEach(() => ec2.reset()); // re-installs the stub the fake EC2 above restored
  afterAll(() => ec2.restore());
  const vol = (id: string, name: string, extra: object = {}) => ({
    VolumeId: id,
    State: 'available' as const,
    Tags: Object.entries(owned(name)).map(([Key, Value]) => ({ Key, Value })),
    ...extra,
  });

  it('a refusal that names none of the IDs -> the rest asked by volume-id filter', async () => {
    ec2.on(DescribeVolumesCommand, { VolumeIds: ['vol-01', 'vol-02'] }).rejects(ec2Error('InvalidVolume.NotFound', 'The volume does not exist.'));
    ec2.on(DescribeVolumesCommand, { Filters: [{ Name: 'volume-id', Values: ['vol-01', 'vol-02'] }] }).resolves({ Volumes: [vol('vol-02', 'b')] });
    const gw = gatewayFor();
    expect((await Promise.all([gw.getDisk('vol-01'), gw.getDisk('vol-02')])).map((d) => d?.volumeId)).toEqual([undefined, 'vol-02']);
  });

  it('a page with NextToken -> the next page asked until done', async () => {
    ec2.on(DescribeVolumesCommand).resolvesOnce({ Volumes: [vol('vol-01', 'a')], NextToken: 't1' }).resolves({ Volumes: [vol('vol-02', 'b')] });
    const gw = gatewayFor();
    const [a, b] = await Promise.all([gw.findDiskByName('a'), gw.findDiskByName('b')]);
    expect([a?.volumeId, b?.volumeId]).toEqual(['vol-01', 'vol-02']);
    expect(ec2).toHaveReceivedNthCommandWith(DescribeVolumesCommand, 1, { MaxResults: 500, NextToken: undefined });
    expect(ec2).toHaveReceivedNthCommandWith(DescribeVolumesCommand, 2, { MaxResults: 500, NextToken: 't1' });
  });

  it('two volumes with one name -> the one not being deleted, then the oldest', async () => {
    ec2.on(DescribeVolumesCommand).resolves({
      Volumes: [
        vol('vol-03', 'a', { State: 'deleting', CreateTime: new Date('2024-01-01') }),
        vol('vol-02', 'a', { CreateTime: new Date('2024-03-01') }),
        vol('vol-01', 'a', { CreateTime: new Date('2024-02-01') }),
      ],
    });
    expect((await gatewayFor().findDiskByName('a'))?.volumeId).toBe('vol-01');
  });

  it('a describe that fails -> every look-up of its batch fails with the classified error', async () => {
    ec2.on(DescribeVolumesCommand).rejects(ec2Error('UnauthorizedOperation', 'You are not authorized to perform this operation.', 403));
    const gw = gatewayFor();
    const results = await Promise.allSettled([gw.getDisk('vol-01'), gw.getDisk('vol-02')]);
    expect(results.map((r) => r.status === 'rejected' && r.reason.kind)).toEqual(['unauthorized', 'unauthorized']);
    expect(results[0]!.status === 'rejected' && results[0]!.reason.message).toContain('ec2:DescribeVolumes');
  });
});
