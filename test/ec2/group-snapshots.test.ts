/**
 * The gateway's createSnapshots (a group snapshot: one CreateSnapshots of the volumes attached to
 * one instance) and the instance's volumes as getInstance maps them: what is sent over
 * aws-sdk-client-mock, and the whole round over the EC2 simulator.
 */
import { CreateSnapshotsCommand, DescribeSnapshotsCommand, EC2Client } from '@aws-sdk/client-ec2';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, describe, expect, it } from 'vitest';
import { TagKeys } from '../../lib/contract/tags.js';
import { createEc2Gateway } from '../../lib/ec2/index.js';
import { snapshotTagSpecifications } from './fake-ec2.js';
import { simPerTest, ZONE } from '../local/ec2/helpers.js';

const NAME = 'groupsnapcontent-5a4f4e3d';

describe('createSnapshots over aws-sdk-client-mock', () => {
  const ec2 = mockClient(EC2Client);
  // The mock replaces every EC2Client's send: the simulator's tests below need the real one back.
  afterAll(() => ec2.restore());
  const gw = () => createEc2Gateway({ client: new EC2Client({ region: 'us-east-1' }), clusterId: 'c1', batchWindowMs: 0 });

  it('no snapshot of that name -> one CreateSnapshots: the instance, the root left out, the other data volumes excluded, every tag with the identity tags', async () => {
    ec2.reset();
    ec2.on(DescribeSnapshotsCommand).resolves({ Snapshots: [] });
    ec2.on(CreateSnapshotsCommand).resolves({
      Snapshots: [
        { SnapshotId: 'snap-2', VolumeId: 'vol-b', VolumeSize: 4, State: 'pending', StartTime: new Date('2026-01-01T00:00:00Z') },
        { SnapshotId: 'snap-1', VolumeId: 'vol-a', VolumeSize: 4, State: 'pending', StartTime: new Date('2026-01-01T00:00:00Z') },
      ],
    });
    const snapshots = await gw().createSnapshots({ name: NAME, instanceId: 'i-1', excludeDataVolumeIds: ['vol-other'], tags: { team: 'shop' } });
    expect(snapshots.map((s) => [s.volumeId, s.snapshotId, s.state])).toEqual([
      ['vol-a', 'snap-1', 'pending'],
      ['vol-b', 'snap-2', 'pending'],
    ]);
    expect(snapshots[0]?.tags[TagKeys.csiVolumeSnapshotName]).toBe(NAME);
    expect(ec2).toHaveReceivedCommandTimes(CreateSnapshotsCommand, 1);
    expect(ec2).toHaveReceivedCommandWith(CreateSnapshotsCommand, {
      InstanceSpecification: { InstanceId: 'i-1', ExcludeBootVolume: true, ExcludeDataVolumeIds: ['vol-other'] },
      TagSpecifications: snapshotTagSpecifications(NAME),
    });
  });

  it('snapshots of that name exist (a lost answer earlier) -> they are the answer, no CreateSnapshots: it has no ClientToken', async () => {
    ec2.reset();
    ec2.on(DescribeSnapshotsCommand).resolves({
      Snapshots: [{ SnapshotId: 'snap-1', VolumeId: 'vol-a', VolumeSize: 4, State: 'completed', StartTime: new Date('2026-01-01T00:00:00Z'), Tags: [{ Key: 'CSIVolumeSnapshotName', Value: NAME }] }],
    });
    const snapshots = await gw().createSnapshots({ name: NAME, instanceId: 'i-1', excludeDataVolumeIds: [], tags: {} });
    expect(snapshots.map((s) => s.snapshotId)).toEqual(['snap-1']);
    expect(ec2).toHaveReceivedCommandTimes(CreateSnapshotsCommand, 0);
  });
});

describe('createSnapshots over the EC2 simulator', () => {
  const t = simPerTest({ latency: { create: { kind: 'fixed', ms: 1000 }, snapshot: { kind: 'fixed', ms: 60_000 }, attach: { kind: 'fixed', ms: 1000 } } });
  const gateway = () => createEc2Gateway({ client: t.ec2, clusterId: 'c1', batchWindowMs: 0 });

  async function attachedDisk(instanceId: string, name: string, device: string): Promise<string> {
    const gw = gateway();
    const disk = await gw.createDisk({ name, zone: ZONE, sizeGiB: 4, type: 'gp3', tags: { [TagKeys.cluster('c1')]: 'owned' } });
    t.clock.advance(2000);
    await gw.attachDisk(disk.volumeId, instanceId, device);
    t.clock.advance(5000);
    return disk.volumeId;
  }

  it("three claims' volumes on one node, another volume there too -> getInstance names the root and the volumes; one CreateSnapshots makes the three members' snapshots, tagged with the group's name; a retry finds them and makes none", async () => {
    const node = t.sim.runInstance({ zone: ZONE });
    const members = [await attachedDisk(node.id, 'pvc-a', '/dev/xvdba'), await attachedDisk(node.id, 'pvc-b', '/dev/xvdbb'), await attachedDisk(node.id, 'pvc-c', '/dev/xvdbc')];
    const other = await attachedDisk(node.id, 'pvc-other', '/dev/xvdbd');
    const instance = await gateway().getInstance(node.id);
    expect(instance?.rootVolumeId).toMatch(/^vol-/);
    expect(instance?.mappings?.map((m) => m.volumeId).sort()).toEqual([instance!.rootVolumeId!, ...members, other].sort());
    expect(members).not.toContain(instance?.rootVolumeId);

    t.sim.resetStats();
    const snapshots = await gateway().createSnapshots({ name: NAME, instanceId: node.id, excludeDataVolumeIds: [other], tags: {} });
    expect(snapshots.map((s) => s.volumeId)).toEqual([...members].sort());
    expect(new Set(snapshots.map((s) => s.startTime)).size).toBe(1);
    expect(t.sim.getStats().actions.CreateSnapshots?.calls).toBe(1);

    t.clock.advance(60_000);
    const again = await gateway().createSnapshots({ name: NAME, instanceId: node.id, excludeDataVolumeIds: [other], tags: {} });
    const byId = (a: { snapshotId: string }, b: { snapshotId: string }) => a.snapshotId.localeCompare(b.snapshotId);
    expect(again.sort(byId).map((s) => [s.snapshotId, s.state])).toEqual(snapshots.sort(byId).map((s) => [s.snapshotId, 'completed']));
    expect(t.sim.getStats().actions.CreateSnapshots?.calls).toBe(1);
    expect(await gateway().findSnapshotsByName(NAME)).toHaveLength(3);
  });

  it("a member snapshotted on its own a moment before -> CreateSnapshots meets SnapshotCreationPerVolumeRateExceeded: transient, again in 15 s; 15 s later the group is taken", async () => {
    const node = t.sim.runInstance({ zone: ZONE });
    const members = [await attachedDisk(node.id, 'pvc-a', '/dev/xvdba'), await attachedDisk(node.id, 'pvc-b', '/dev/xvdbb')];
    await gateway().createSnapshot({ name: 'snapcontent-own', volumeId: members[0]!, tags: {} });
    t.clock.advance(5_000);
    await expect(gateway().createSnapshots({ name: NAME, instanceId: node.id, excludeDataVolumeIds: [], tags: {} })).rejects.toMatchObject({
      kind: 'transient',
      code: 'SnapshotCreationPerVolumeRateExceeded',
      retryAfterSeconds: 15,
    });
    expect(await gateway().findSnapshotsByName(NAME)).toEqual([]);
    t.clock.advance(15_000);
    const snapshots = await gateway().createSnapshots({ name: NAME, instanceId: node.id, excludeDataVolumeIds: [], tags: {} });
    expect(snapshots.map((s) => s.volumeId)).toEqual([...members].sort());
  });
});
