/** The gateway's snapshots in another Region (cross-Region copies) over aws-sdk-client-mock: which client each call goes to, and what is sent. */
import { CopySnapshotCommand, DeleteSnapshotCommand, DescribeSnapshotsCommand, EC2Client } from '@aws-sdk/client-ec2';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import { createEc2Gateway } from '../../lib/ec2/index.js';
import { Ec2Error } from '../../lib/ec2/types.js';
import { ec2Error, snapshotLookupByName, snapshotTagSpecifications } from './fake-ec2.js';

const NAME = 'snapcontent-0b7d2c1e-5a4f-4e3d-8c2b-1a0f9e8d7c6b';
const SOURCE = 'snap-0bbbbbbbbbbbbbbb1';
const COPY = 'snap-0ccccccccccccccc1';

const home = new EC2Client({ region: 'us-east-1' });
const west = new EC2Client({ region: 'us-west-2' });
const homeMock = mockClient(home);
const westMock = mockClient(west);
afterEach(() => {
  homeMock.reset();
  westMock.reset();
});

const gw = (clientFor?: (region: string) => EC2Client) => createEc2Gateway({ client: home, clusterId: 'c1', batchWindowMs: 0, ...(clientFor && { clientFor }) });
const copyIn = (Tags: { Key: string; Value: string }[] = [{ Key: 'CSIVolumeSnapshotName', Value: NAME }]) => ({ SnapshotId: COPY, VolumeId: 'vol-ffffffff', VolumeSize: 8, State: 'pending' as const, StartTime: new Date('2026-01-01T00:00:00Z'), Tags });

describe('snapshotsIn(region).copySnapshot', () => {
  it('no copy of that name in the destination -> one CopySnapshot to the destination client, naming the source Region, tagged with the identity tags; nothing sent to the home client', async () => {
    westMock.on(DescribeSnapshotsCommand).resolvesOnce({ Snapshots: [] }).resolves({ Snapshots: [copyIn()] });
    westMock.on(CopySnapshotCommand).resolves({ SnapshotId: COPY });
    const regions: string[] = [];
    const copy = await gw((r) => (regions.push(r), west)).snapshotsIn('us-west-2').copySnapshot({ name: NAME, sourceSnapshotId: SOURCE, kmsKeyId: 'alias/backups', tags: { team: 'shop' } });
    expect(copy).toMatchObject({ snapshotId: COPY, state: 'pending' });
    expect(regions).toEqual(['us-west-2']);
    expect(homeMock.calls()).toHaveLength(0);
    expect(westMock).toHaveReceivedCommandTimes(CopySnapshotCommand, 1);
    expect(westMock).toHaveReceivedCommandWith(CopySnapshotCommand, {
      SourceRegion: 'us-east-1',
      SourceSnapshotId: SOURCE,
      Encrypted: true,
      KmsKeyId: 'alias/backups',
      TagSpecifications: snapshotTagSpecifications(NAME),
    });
    // The look-up names this cluster's copies of that name, in this account.
    expect(westMock).toHaveReceivedCommandWith(DescribeSnapshotsCommand, snapshotLookupByName(NAME));
  });

  it('a copy of that name already in the destination -> it, and no CopySnapshot (a retry after a lost answer)', async () => {
    westMock.on(DescribeSnapshotsCommand).resolves({ Snapshots: [copyIn()] });
    const copy = await gw(() => west).snapshotsIn('us-west-2').copySnapshot({ name: NAME, sourceSnapshotId: SOURCE, tags: {} });
    expect(copy.snapshotId).toBe(COPY);
    expect(westMock).toHaveReceivedCommandTimes(CopySnapshotCommand, 0);
  });

  it('UnauthorizedOperation -> unauthorized, naming ec2:CopySnapshot', async () => {
    westMock.on(DescribeSnapshotsCommand).resolves({ Snapshots: [] });
    westMock.on(CopySnapshotCommand).rejects(ec2Error('UnauthorizedOperation', 'You are not authorized to perform this operation.'));
    const error = await gw(() => west).snapshotsIn('us-west-2').copySnapshot({ name: NAME, sourceSnapshotId: SOURCE, tags: {} }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Ec2Error);
    expect(error).toMatchObject({ kind: 'unauthorized', message: expect.stringContaining('ec2:CopySnapshot') });
  });

  it('without a client for other Regions -> every call fails naming the Region, nothing sent; control: with one, the call is made', async () => {
    const refused = await gw().snapshotsIn('us-west-2').findSnapshotsByName(NAME).catch((e: unknown) => e);
    expect(refused).toMatchObject({ message: expect.stringContaining('us-west-2') });
    expect(westMock.calls()).toHaveLength(0);
    westMock.on(DescribeSnapshotsCommand).resolves({ Snapshots: [] });
    expect(await gw(() => west).snapshotsIn('us-west-2').findSnapshotsByName(NAME)).toEqual([]);
  });
});

describe('snapshotsIn(region).deleteSnapshot and getSnapshot', () => {
  it('DeleteSnapshot to the destination client; one already gone resolves', async () => {
    westMock.on(DeleteSnapshotCommand).resolvesOnce({}).rejects(ec2Error('InvalidSnapshot.NotFound', 'gone'));
    const inWest = gw(() => west).snapshotsIn('us-west-2');
    await inWest.deleteSnapshot(COPY);
    await inWest.deleteSnapshot(COPY);
    expect(westMock).toHaveReceivedCommandWith(DeleteSnapshotCommand, { SnapshotId: COPY });
    expect(homeMock.calls()).toHaveLength(0);
  });

  it('getSnapshot by ID in the destination; none -> undefined', async () => {
    westMock.on(DescribeSnapshotsCommand).resolvesOnce({ Snapshots: [copyIn([])] }).resolves({ Snapshots: [] });
    const inWest = gw(() => west).snapshotsIn('us-west-2');
    expect(await inWest.getSnapshot(COPY)).toMatchObject({ snapshotId: COPY });
    expect(await inWest.getSnapshot(COPY)).toBeUndefined();
  });
});
