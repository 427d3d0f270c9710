/** The gateway's snapshot and clone verbs over aws-sdk-client-mock: what is sent to EC2, and what EC2's answers mean. */
import {
  CopyVolumesCommand,
  CreateSnapshotCommand,
  CreateVolumeCommand,
  DeleteSnapshotCommand,
  DescribeSnapshotsCommand,
  DescribeVolumesCommand,
  EC2Client,
  EnableFastSnapshotRestoresCommand,
} from '@aws-sdk/client-ec2';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { createEc2Gateway } from '../../lib/ec2/index.js';
import { clientTokenFor } from '../../lib/ec2/token.js';
import { ec2Error, snapshotLookupByName, snapshotTagSpecifications } from './fake-ec2.js';

const ec2 = mockClient(EC2Client);
const gw = () => createEc2Gateway({ client: new EC2Client({ region: 'us-east-1' }), clusterId: 'c1', batchWindowMs: 0 });
const VOL = 'vol-0aaaaaaaaaaaaaaa1';
const SNAP = 'snap-0bbbbbbbbbbbbbbb1';
const NAME = 'snapcontent-0b7d2c1e-5a4f-4e3d-8c2b-1a0f9e8d7c6b';
const ownedSnapshot = { SnapshotId: SNAP, VolumeId: VOL, VolumeSize: 8, State: 'pending' as const, StartTime: new Date('2026-01-01T00:00:00Z'), Progress: '10%', Tags: [{ Key: 'CSIVolumeSnapshotName', Value: NAME }] };

beforeEach(() => ec2.reset());

describe('createSnapshot', () => {
  it('no snapshot of that name -> one CreateSnapshot with every tag in TagSpecifications, identity tags included', async () => {
    ec2.on(DescribeSnapshotsCommand).resolves({ Snapshots: [] });
    ec2.on(CreateSnapshotCommand).resolves({ ...ownedSnapshot, Tags: [] });
    const snapshot = await gw().createSnapshot({ name: NAME, volumeId: VOL, tags: { team: 'shop' } });
    expect(snapshot).toMatchObject({ snapshotId: SNAP, volumeId: VOL, sizeGiB: 8, state: 'pending', progress: '10%', startTime: '2026-01-01T00:00:00.000Z' });
    expect(ec2).toHaveReceivedCommandTimes(CreateSnapshotCommand, 1);
    expect(ec2).toHaveReceivedCommandWith(CreateSnapshotCommand, {
      VolumeId: VOL,
      TagSpecifications: snapshotTagSpecifications(NAME),
    });
    // The look-up names this cluster and this account only.
    expect(ec2).toHaveReceivedCommandWith(DescribeSnapshotsCommand, snapshotLookupByName(NAME));
  });

  it('the name tag finds one (a lost answer earlier) -> no CreateSnapshot: CreateSnapshot has no ClientToken', async () => {
    ec2.on(DescribeSnapshotsCommand).resolves({ Snapshots: [ownedSnapshot] });
    await expect(gw().createSnapshot({ name: NAME, volumeId: VOL, tags: {} })).resolves.toMatchObject({ snapshotId: SNAP });
    expect(ec2).toHaveReceivedCommandTimes(CreateSnapshotCommand, 0);
  });

  it('findSnapshotsByName -> oldest first, following NextToken', async () => {
    const younger = { ...ownedSnapshot, SnapshotId: 'snap-0bbbbbbbbbbbbbbb2', StartTime: new Date('2026-01-01T00:00:05Z') };
    ec2.on(DescribeSnapshotsCommand).resolvesOnce({ Snapshots: [younger], NextToken: 'page-2' }).resolvesOnce({ Snapshots: [ownedSnapshot] });
    expect((await gw().findSnapshotsByName(NAME)).map((s) => s.snapshotId)).toEqual([SNAP, 'snap-0bbbbbbbbbbbbbbb2']);
    expect(ec2).toHaveReceivedCommandTimes(DescribeSnapshotsCommand, 2);
  });

  it('SnapshotLimitExceeded -> rejects naming the action; throttled -> transient', async () => {
    ec2.on(DescribeSnapshotsCommand).resolves({ Snapshots: [] });
    ec2.on(CreateSnapshotCommand).rejectsOnce(ec2Error('SnapshotLimitExceeded')).rejectsOnce(ec2Error('RequestLimitExceeded', 'slow down', 503));
    await expect(gw().createSnapshot({ name: NAME, volumeId: VOL, tags: {} })).rejects.toMatchObject({ kind: 'other', code: 'SnapshotLimitExceeded', action: 'CreateSnapshot' });
    await expect(gw().createSnapshot({ name: NAME, volumeId: VOL, tags: {} })).rejects.toMatchObject({ kind: 'transient' });
  });
});

describe('listClusterSnapshots', () => {
  it("-> DescribeSnapshots by the cluster's ownership tag, this account's, 1,000 a page, every page, oldest first", async () => {
    const younger = { ...ownedSnapshot, SnapshotId: 'snap-0bbbbbbbbbbbbbbb2', StartTime: new Date('2026-01-01T00:00:05Z') };
    ec2.on(DescribeSnapshotsCommand).resolvesOnce({ Snapshots: [younger], NextToken: 'page-2' }).resolvesOnce({ Snapshots: [ownedSnapshot] });
    expect((await gw().listClusterSnapshots()).map((s) => s.snapshotId)).toEqual([SNAP, 'snap-0bbbbbbbbbbbbbbb2']);
    expect(ec2).toHaveReceivedCommandTimes(DescribeSnapshotsCommand, 2);
    expect(ec2).toHaveReceivedNthCommandWith(DescribeSnapshotsCommand, 1, { OwnerIds: ['self'], MaxResults: 1000, Filters: [{ Name: 'tag:kubernetes.io/cluster/c1', Values: ['owned'] }] });
    expect(ec2).toHaveReceivedNthCommandWith(DescribeSnapshotsCommand, 2, { OwnerIds: ['self'], MaxResults: 1000, NextToken: 'page-2', Filters: [{ Name: 'tag:kubernetes.io/cluster/c1', Values: ['owned'] }] });
  });
});

describe('getSnapshot, deleteSnapshot, enableFastSnapshotRestores', () => {
  it('getSnapshot -> by the snapshot-id filter (an unknown ID is no error); malformed -> undefined without a call', async () => {
    ec2.on(DescribeSnapshotsCommand).resolves({ Snapshots: [] });
    await expect(gw().getSnapshot(SNAP)).resolves.toBeUndefined();
    expect(ec2).toHaveReceivedCommandWith(DescribeSnapshotsCommand, { OwnerIds: ['self'], Filters: [{ Name: 'snapshot-id', Values: [SNAP] }] });
    ec2.reset();
    await expect(gw().getSnapshot('vol-123')).resolves.toBeUndefined();
    expect(ec2).toHaveReceivedCommandTimes(DescribeSnapshotsCommand, 0);
  });

  it('DeleteSnapshot of a snapshot already gone -> resolves; in use (an AMI) -> inUse', async () => {
    ec2.on(DeleteSnapshotCommand).rejectsOnce(ec2Error('InvalidSnapshot.NotFound')).rejectsOnce(ec2Error('InvalidSnapshot.InUse'));
    await expect(gw().deleteSnapshot(SNAP)).resolves.toBeUndefined();
    await expect(gw().deleteSnapshot(SNAP)).rejects.toMatchObject({ kind: 'inUse' });
  });

  it('EnableFastSnapshotRestores with a zone refused in Unsuccessful -> rejects naming the zone and the code', async () => {
    ec2.on(EnableFastSnapshotRestoresCommand).resolves({
      Successful: [{ SnapshotId: SNAP, AvailabilityZone: 'us-east-1a', State: 'enabling' }],
      Unsuccessful: [{ SnapshotId: SNAP, FastSnapshotRestoreStateErrors: [{ AvailabilityZone: 'us-east-1z', Error: { Code: 'InvalidParameterValue', Message: 'no such zone' } }] }],
    });
    await expect(gw().enableFastSnapshotRestores(SNAP, ['us-east-1a', 'us-east-1z'])).rejects.toMatchObject({ kind: 'invalidParameter', message: expect.stringContaining('us-east-1z: InvalidParameterValue') });
    expect(ec2).toHaveReceivedCommandWith(EnableFastSnapshotRestoresCommand, { SourceSnapshotIds: [SNAP], AvailabilityZones: ['us-east-1a', 'us-east-1z'] });
  });
});

describe('restore and clone', () => {
  it('createDisk with a snapshot -> CreateVolume names the SnapshotId and the initialization rate', async () => {
    ec2.on(DescribeVolumesCommand).resolves({ Volumes: [] });
    ec2.on(CreateVolumeCommand).resolves({ VolumeId: VOL, State: 'creating', Size: 10, AvailabilityZone: 'us-east-1a', SnapshotId: SNAP });
    const disk = await gw().createDisk({ name: 'pvc-1', zone: 'us-east-1a', sizeGiB: 10, type: 'gp3', snapshotId: SNAP, initializationRate: 200, tags: {} });
    expect(disk.snapshotId).toBe(SNAP);
    expect(ec2).toHaveReceivedCommandWith(CreateVolumeCommand, { SnapshotId: SNAP, VolumeInitializationRate: 200, Size: 10 });
    // A restore carries the tag the EBS CSI driver's cluster-scoped policy fences by, as every new disk does.
    expect(ec2).toHaveReceivedCommandWith(CreateVolumeCommand, { TagSpecifications: [{ ResourceType: 'volume', Tags: expect.arrayContaining([{ Key: 'ebs.csi.aws.com/cluster-name', Value: 'c1' }]) }] });
  });

  it('copyDisk -> the name tag first, then CopyVolumes under the ClientToken of the name, tagged like a volume', async () => {
    ec2.on(DescribeVolumesCommand).resolves({ Volumes: [] });
    ec2.on(CopyVolumesCommand).resolves({ Volumes: [{ VolumeId: 'vol-0ccccccccccccccc1', State: 'creating', Size: 20, AvailabilityZone: 'us-east-1b' }] });
    const disk = await gw().copyDisk({ name: 'pvc-2', sourceVolumeId: VOL, sizeGiB: 20, type: 'gp3', tags: { team: 'shop' } });
    expect(disk).toMatchObject({ volumeId: 'vol-0ccccccccccccccc1', zone: 'us-east-1b', tags: { CSIVolumeName: 'pvc-2', team: 'shop' } });
    expect(ec2).toHaveReceivedCommandWith(CopyVolumesCommand, {
      SourceVolumeId: VOL,
      Size: 20,
      VolumeType: 'gp3',
      ClientToken: clientTokenFor('c1', 'pvc-2'),
      TagSpecifications: [{ ResourceType: 'volume', Tags: expect.arrayContaining([{ Key: 'CSIVolumeName', Value: 'pvc-2' }, { Key: 'kubernetes.io/cluster/c1', Value: 'owned' }, { Key: 'ebs.csi.aws.com/cluster', Value: 'true' }, { Key: 'volhook.io/cluster', Value: 'c1' }, { Key: 'ebs.csi.aws.com/cluster-name', Value: 'c1' }]) }],
    });
  });

  it('copyDisk when the name tag finds the copy (a lost answer earlier) -> no second CopyVolumes', async () => {
    ec2.on(DescribeVolumesCommand).resolves({ Volumes: [{ VolumeId: 'vol-0ccccccccccccccc1', State: 'available', Size: 20, AvailabilityZone: 'us-east-1b', Tags: [{ Key: 'CSIVolumeName', Value: 'pvc-2' }] }] });
    await expect(gw().copyDisk({ name: 'pvc-2', sourceVolumeId: VOL, sizeGiB: 20, type: 'gp3', tags: {} })).resolves.toMatchObject({ volumeId: 'vol-0ccccccccccccccc1' });
    expect(ec2).toHaveReceivedCommandTimes(CopyVolumesCommand, 0);
  });
});

describe('snapshot look-ups of one request, batched', () => {
  const snap = (id: string, name: string, start: string) => ({ SnapshotId: id, VolumeId: VOL, VolumeSize: 8, State: 'pending' as const, StartTime: new Date(start), Tags: [{ Key: 'CSIVolumeSnapshotName', Value: name }] });
  const a = snap('snap-0aaaaaaaaaaaaaaa1', 'snapcontent-a', '2026-01-01T00:00:00Z');
  const b = snap('snap-0aaaaaaaaaaaaaaa2', 'snapcontent-b', '2026-01-01T00:00:00Z');
  const bOlder = snap('snap-0aaaaaaaaaaaaaaa3', 'snapcontent-b', '2025-12-31T00:00:00Z');

  it('three getSnapshot and three findSnapshotsByName at once -> one DescribeSnapshots by snapshot-id and one by name tag; each answered its own, unknown ones absent', async () => {
    ec2.on(DescribeSnapshotsCommand).callsFake((input: { Filters: { Name: string; Values: string[] }[] }) => {
      const [filter] = input.Filters;
      const all = [a, b, bOlder];
      if (filter!.Name === 'snapshot-id') return { Snapshots: all.filter((s) => filter!.Values.includes(s.SnapshotId)) };
      return { Snapshots: all.filter((s) => filter!.Values.includes(s.Tags[0]!.Value)) };
    });
    const g = gw();
    const [byIdA, byIdB, byIdUnknown, named, namedB, namedNone] = await Promise.all([
      g.getSnapshot(a.SnapshotId),
      g.getSnapshot(b.SnapshotId),
      g.getSnapshot('snap-0fffffffffffffff9'),
      g.findSnapshotsByName('snapcontent-a'),
      g.findSnapshotsByName('snapcontent-b'),
      g.findSnapshotsByName('snapcontent-none'),
    ]);
    expect(ec2).toHaveReceivedCommandTimes(DescribeSnapshotsCommand, 2);
    expect(ec2).toHaveReceivedCommandWith(DescribeSnapshotsCommand, { Filters: [{ Name: 'snapshot-id', Values: [a.SnapshotId, b.SnapshotId, 'snap-0fffffffffffffff9'] }] });
    expect(ec2).toHaveReceivedCommandWith(DescribeSnapshotsCommand, {
      Filters: [
        { Name: 'tag:CSIVolumeSnapshotName', Values: ['snapcontent-a', 'snapcontent-b', 'snapcontent-none'] },
        { Name: 'tag:kubernetes.io/cluster/c1', Values: ['owned'] },
      ],
    });
    expect([byIdA?.snapshotId, byIdB?.snapshotId, byIdUnknown]).toEqual([a.SnapshotId, b.SnapshotId, undefined]);
    expect(named.map((s) => s.snapshotId)).toEqual([a.SnapshotId]);
    // Each name's oldest first.
    expect(namedB.map((s) => s.snapshotId)).toEqual([bOlder.SnapshotId, b.SnapshotId]);
    expect(namedNone).toEqual([]);
  });

  it('control: one look-up alone -> one DescribeSnapshots naming it alone', async () => {
    ec2.on(DescribeSnapshotsCommand).resolves({ Snapshots: [a] });
    expect((await gw().getSnapshot(a.SnapshotId))?.snapshotId).toBe(a.SnapshotId);
    expect(ec2).toHaveReceivedCommandWith(DescribeSnapshotsCommand, { Filters: [{ Name: 'snapshot-id', Values: [a.SnapshotId] }] });
  });
});
