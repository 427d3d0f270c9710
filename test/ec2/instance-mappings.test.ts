/**
 * getInstance's block device mappings with their state and AttachTime — the evidence that an
 * attach still `attaching` was left behind by a later one (lib/reconcile/stuck-attachment.ts):
 * mapped from the SDK's shape over aws-sdk-client-mock, and read from the EC2 simulator with
 * one attachment stuck.
 */
import { DescribeInstancesCommand, EC2Client } from '@aws-sdk/client-ec2';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, describe, expect, it } from 'vitest';
import { TagKeys } from '../../lib/contract/tags.js';
import { createEc2Gateway } from '../../lib/ec2/index.js';
import { simPerTest, ZONE } from '../local/ec2/helpers.js';

describe('getInstance mappings over aws-sdk-client-mock', () => {
  const ec2 = mockClient(EC2Client);
  afterAll(() => ec2.restore());

  it('Ebs Status and AttachTime of each mapping -> state and ISO time; a mapping without Ebs is left out', async () => {
    ec2.reset();
    ec2.on(DescribeInstancesCommand).resolves({
      Reservations: [
        {
          Instances: [
            {
              InstanceId: 'i-1',
              Placement: { AvailabilityZone: ZONE },
              State: { Name: 'running' },
              RootDeviceName: '/dev/xvda',
              BlockDeviceMappings: [
                { DeviceName: '/dev/xvda', Ebs: { VolumeId: 'vol-root', Status: 'attached', AttachTime: new Date('2026-01-01T00:00:00Z') } },
                { DeviceName: '/dev/xvdba', Ebs: { VolumeId: 'vol-a', Status: 'attaching', AttachTime: new Date('2026-01-01T01:00:00Z') } },
                { DeviceName: '/dev/xvdbb', Ebs: { VolumeId: 'vol-b', Status: 'attached', AttachTime: new Date('2026-01-01T01:00:05Z') } },
                { DeviceName: '/dev/sdb' },
              ],
            },
          ],
        },
      ],
    });
    const gw = createEc2Gateway({ client: new EC2Client({ region: 'us-east-1' }), clusterId: 'c1', batchWindowMs: 0 });
    const instance = await gw.getInstance('i-1');
    expect(instance?.mappings).toEqual([
      { volumeId: 'vol-root', state: 'attached', attachTime: '2026-01-01T00:00:00.000Z' },
      { volumeId: 'vol-a', state: 'attaching', attachTime: '2026-01-01T01:00:00.000Z' },
      { volumeId: 'vol-b', state: 'attached', attachTime: '2026-01-01T01:00:05.000Z' },
    ]);
  });
});

describe('getInstance mappings over the EC2 simulator', () => {
  const t = simPerTest({ latency: { create: { kind: 'fixed', ms: 1000 }, attach: { kind: 'fixed', ms: 1000 } } });
  const gateway = () => createEc2Gateway({ client: t.ec2, clusterId: 'c1', batchWindowMs: 0 });

  it('one attach stuck, a later one finished -> the stuck one attaching with the earlier AttachTime, the later one attached with its own', async () => {
    t.sim.configure({ attachFaults: [{ volumeTag: { key: TagKeys.csiVolumeName, value: 'pvc-stuck' }, outcome: 'stuck' }] });
    const node = t.sim.runInstance({ zone: ZONE });
    const gw = gateway();
    const disk = async (name: string) => (await gw.createDisk({ name, zone: ZONE, sizeGiB: 4, type: 'gp3', tags: { [TagKeys.cluster('c1')]: 'owned' } })).volumeId;
    const stuck = await disk('pvc-stuck');
    const later = await disk('pvc-later');
    t.clock.advance(2000);
    await gw.attachDisk(stuck, node.id, '/dev/xvdba');
    t.clock.advance(3000);
    await gw.attachDisk(later, node.id, '/dev/xvdbb');
    t.clock.advance(5000);

    const mappings = (await gateway().getInstance(node.id))?.mappings ?? [];
    const of = (id: string) => mappings.find((m) => m.volumeId === id);
    expect(of(stuck)?.state).toBe('attaching');
    expect(of(later)?.state).toBe('attached');
    expect(Date.parse(of(later)!.attachTime!) - Date.parse(of(stuck)!.attachTime!)).toBe(3000);
  });
});
