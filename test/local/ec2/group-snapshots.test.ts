/**
 * CreateSnapshots in the simulator: one crash-consistent set of the volumes attached to an
 * instance, with InstanceSpecification's exclusions, TagSpecifications and CopyTagsFromSource.
 */
import { AttachVolumeCommand, CreateSnapshotsCommand, CreateVolumeCommand, DescribeSnapshotsCommand, type CreateSnapshotsCommandInput } from '@aws-sdk/client-ec2';
import { describe, expect, it } from 'vitest';
import { expectEc2Error, simPerTest, ZONE } from './helpers.js';

const t = simPerTest({ latency: { create: { kind: 'fixed', ms: 1000 }, snapshot: { kind: 'fixed', ms: 60_000 }, attach: { kind: 'fixed', ms: 1000 } } });

async function attachedVolume(instanceId: string, device: string, tags: { Key: string; Value: string }[] = []): Promise<string> {
  const v = await t.ec2.send(
    new CreateVolumeCommand({ AvailabilityZone: ZONE, Size: 10, VolumeType: 'gp3', ...(tags.length > 0 && { TagSpecifications: [{ ResourceType: 'volume', Tags: tags }] }) }),
  );
  t.clock.advance(2000);
  await t.ec2.send(new AttachVolumeCommand({ VolumeId: v.VolumeId!, InstanceId: instanceId, Device: device }));
  t.clock.advance(5000);
  return v.VolumeId!;
}

const group = (input: Partial<CreateSnapshotsCommandInput> & { InstanceSpecification: CreateSnapshotsCommandInput['InstanceSpecification'] }) =>
  t.ec2.send(new CreateSnapshotsCommand(input));

describe('CreateSnapshots', () => {
  it('three data volumes, root excluded -> three pending snapshots started at one time, with the request tags; completed after the latency', async () => {
    const node = t.sim.runInstance({ zone: ZONE });
    const volumes = [await attachedVolume(node.id, '/dev/xvdba'), await attachedVolume(node.id, '/dev/xvdbb'), await attachedVolume(node.id, '/dev/xvdbc')];
    const out = await group({
      InstanceSpecification: { InstanceId: node.id, ExcludeBootVolume: true },
      Description: 'group',
      TagSpecifications: [{ ResourceType: 'snapshot', Tags: [{ Key: 'group', Value: 'g1' }] }],
    });
    expect(out.Snapshots?.map((s) => s.VolumeId).sort()).toEqual([...volumes].sort());
    expect(new Set(out.Snapshots?.map((s) => s.StartTime?.getTime())).size).toBe(1);
    for (const s of out.Snapshots ?? []) {
      expect(s).toMatchObject({ State: 'pending', Description: 'group', VolumeSize: 10, AvailabilityZone: ZONE });
      expect(s.Tags).toEqual([{ Key: 'group', Value: 'g1' }]);
    }
    t.clock.advance(60_000);
    const described = await t.ec2.send(new DescribeSnapshotsCommand({ SnapshotIds: out.Snapshots!.map((s) => s.SnapshotId!) }));
    expect(described.Snapshots?.map((s) => s.State)).toEqual(['completed', 'completed', 'completed']);
  });

  it('without ExcludeBootVolume the root volume is in the set; ExcludeDataVolumeId leaves a data volume out', async () => {
    const node = t.sim.runInstance({ zone: ZONE });
    const a = await attachedVolume(node.id, '/dev/xvdba');
    const b = await attachedVolume(node.id, '/dev/xvdbb');
    const all = await group({ InstanceSpecification: { InstanceId: node.id } });
    expect(all.Snapshots).toHaveLength(3);
    t.clock.advance(60_000);
    const some = await group({ InstanceSpecification: { InstanceId: node.id, ExcludeBootVolume: true, ExcludeDataVolumeIds: [b] } });
    expect(some.Snapshots?.map((s) => s.VolumeId)).toEqual([a]);
  });

  it('CopyTagsFromSource=volume -> each snapshot has its volume tags, the request tags win', async () => {
    const node = t.sim.runInstance({ zone: ZONE });
    await attachedVolume(node.id, '/dev/xvdba', [{ Key: 'team', Value: 'a' }, { Key: 'group', Value: 'from-volume' }]);
    const out = await group({
      InstanceSpecification: { InstanceId: node.id, ExcludeBootVolume: true },
      CopyTagsFromSource: 'volume',
      TagSpecifications: [{ ResourceType: 'snapshot', Tags: [{ Key: 'group', Value: 'g1' }] }],
    });
    expect(out.Snapshots?.[0]?.Tags).toEqual([{ Key: 'team', Value: 'a' }, { Key: 'group', Value: 'g1' }]);
  });

  it('refusals: the root volume in ExcludeDataVolumeIds, a volume not attached, nothing left to snapshot, an unknown instance; no snapshot made (control: the same instance snapshots)', async () => {
    const node = t.sim.runInstance({ zone: ZONE });
    const other = t.sim.runInstance({ zone: ZONE });
    const a = await attachedVolume(node.id, '/dev/xvdba');
    const elsewhere = await attachedVolume(other.id, '/dev/xvdba');
    const root = t.sim.volumes().find((v) => v.attachments.some((x) => x.instanceId === node.id && x.device === t.sim.instance(node.id)!.rootDeviceName))!.id;
    await expectEc2Error(group({ InstanceSpecification: { InstanceId: node.id, ExcludeDataVolumeIds: [root] } }), 'InvalidParameterValue');
    await expectEc2Error(group({ InstanceSpecification: { InstanceId: node.id, ExcludeDataVolumeIds: [elsewhere] } }), 'InvalidParameterValue');
    await expectEc2Error(group({ InstanceSpecification: { InstanceId: node.id, ExcludeBootVolume: true, ExcludeDataVolumeIds: [a] } }), 'InvalidParameterValue');
    await expectEc2Error(group({ InstanceSpecification: { InstanceId: 'i-0123456789abcdef0' } }), 'InvalidInstanceID.NotFound');
    expect(t.sim.snapshots().length).toBe(0);
    const ok = await group({ InstanceSpecification: { InstanceId: node.id, ExcludeBootVolume: true } });
    expect(ok.Snapshots?.map((s) => s.VolumeId)).toEqual([a]);
  });

  it('one volume over its pending-snapshot rate -> the whole set is refused, nothing started', async () => {
    const node = t.sim.runInstance({ zone: ZONE });
    await attachedVolume(node.id, '/dev/xvdba');
    await attachedVolume(node.id, '/dev/xvdbb');
    await group({ InstanceSpecification: { InstanceId: node.id, ExcludeBootVolume: true } });
    const before = t.sim.snapshots().length;
    await expectEc2Error(group({ InstanceSpecification: { InstanceId: node.id, ExcludeBootVolume: true } }), 'SnapshotCreationPerVolumeRateExceeded');
    expect(t.sim.snapshots().length).toBe(before);
  });
});
