/**
 * Regions behind one simulator endpoint: each Region its own snapshot store, the Region of a
 * call the one its SigV4 credential scope names (the SDK client of that Region signs with it);
 * CopySnapshot served in the destination Region.
 */
import {
  CopySnapshotCommand,
  CreateSnapshotCommand,
  CreateVolumeCommand,
  DeleteSnapshotCommand,
  DescribeSnapshotsCommand,
  EC2Client,
  type CopySnapshotCommandInput,
} from '@aws-sdk/client-ec2';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../lib/local/ec2/index.js';
import { expectEc2Error, startTestSim, ZONE, type TestSim } from './helpers.js';

const SNAPSHOT_MS = 60_000;
const HOME = 'us-east-1';
const WEST = 'us-west-2';

let running: TestSim | undefined;
const clients: EC2Client[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) c.destroy();
  await running?.close();
  running = undefined;
});

async function start(regions: string[] = [WEST]): Promise<{ t: TestSim; clock: ManualClock; west: EC2Client }> {
  const clock = new ManualClock();
  running = await startTestSim({ throttling: false, regions, latency: { create: { kind: 'fixed', ms: 1000 }, snapshot: { kind: 'fixed', ms: SNAPSHOT_MS } } }, clock);
  return { t: running, clock, west: client(running.url, WEST) };
}

function client(url: string, region: string): EC2Client {
  const c = new EC2Client({ endpoint: url, region, credentials: { accessKeyId: 'test', secretAccessKey: 'test' }, maxAttempts: 1 });
  clients.push(c);
  return c;
}

/** A completed snapshot in the home Region. */
async function homeSnapshot(t: TestSim, clock: ManualClock, volume: { Encrypted?: boolean } = {}): Promise<string> {
  const v = await t.ec2.send(new CreateVolumeCommand({ AvailabilityZone: ZONE, Size: 7, VolumeType: 'gp3', ...volume }));
  clock.advance(1000);
  const s = await t.ec2.send(new CreateSnapshotCommand({ VolumeId: v.VolumeId, TagSpecifications: [{ ResourceType: 'snapshot', Tags: [{ Key: 'owner', Value: 'source' }] }] }));
  clock.advance(SNAPSHOT_MS);
  return s.SnapshotId as string;
}

const copyOf = (id: string, input: Partial<CopySnapshotCommandInput> = {}) =>
  new CopySnapshotCommand({
    SourceRegion: HOME,
    SourceSnapshotId: id,
    TagSpecifications: [{ ResourceType: 'snapshot', Tags: [{ Key: 'copy-of', Value: id }] }],
    ...input,
  });

const ids = async (c: EC2Client) => ((await c.send(new DescribeSnapshotsCommand({ OwnerIds: ['self'] }))).Snapshots ?? []).map((s) => s.SnapshotId);

describe('CopySnapshot into another Region', () => {
  it('the copy is pending in the destination Region only, with the request tags and the source size; completed after the latency', async () => {
    const { t, clock, west } = await start();
    const source = await homeSnapshot(t, clock);
    const out = await west.send(copyOf(source));
    expect(out.SnapshotId).toMatch(/^snap-[0-9a-f]{17}$/);
    expect(out.Tags).toEqual([{ Key: 'copy-of', Value: source }]);
    expect(await ids(west)).toEqual([out.SnapshotId]);
    expect(await ids(t.ec2)).toEqual([source]);
    const [copy] = (await west.send(new DescribeSnapshotsCommand({ SnapshotIds: [out.SnapshotId as string] }))).Snapshots ?? [];
    expect(copy).toMatchObject({ State: 'pending', VolumeSize: 7, Description: `[Copied ${source} from ${HOME}]`, Encrypted: false, Tags: [{ Key: 'copy-of', Value: source }] });
    clock.advance(SNAPSHOT_MS);
    const [done] = (await west.send(new DescribeSnapshotsCommand({ SnapshotIds: [out.SnapshotId as string] }))).Snapshots ?? [];
    expect(done?.State).toBe('completed');
    expect(t.sim.inRegion(WEST).snapshot(out.SnapshotId as string)?.copiedFrom).toEqual({ region: HOME, snapshotId: source });
  });

  it('an encrypted copy takes the key named, in the destination Region; KmsKeyId without Encrypted is refused', async () => {
    const { t, clock, west } = await start();
    const source = await homeSnapshot(t, clock);
    await expectEc2Error(west.send(copyOf(source, { KmsKeyId: 'k-1' })), 'InvalidParameterDependency');
    const out = await west.send(copyOf(source, { Encrypted: true, KmsKeyId: 'k-1' }));
    const [copy] = (await west.send(new DescribeSnapshotsCommand({ SnapshotIds: [out.SnapshotId as string] }))).Snapshots ?? [];
    expect(copy).toMatchObject({ Encrypted: true, KmsKeyId: `arn:aws:kms:${WEST}:123456789012:key/k-1` });
  });

  it('CopySnapshot has no ClientToken: each call makes another copy (the caller finds a copy it made by its tags)', async () => {
    const { t, clock, west } = await start();
    const source = await homeSnapshot(t, clock);
    const first = await west.send(copyOf(source));
    const again = await west.send(copyOf(source));
    expect(again.SnapshotId).not.toBe(first.SnapshotId);
    const found = await west.send(new DescribeSnapshotsCommand({ OwnerIds: ['self'], Filters: [{ Name: 'tag:copy-of', Values: [source] }] }));
    expect((found.Snapshots ?? []).map((s) => s.SnapshotId).sort()).toEqual([first.SnapshotId, again.SnapshotId].sort());
  });

  it('a pending source, a source Region not held, or a DestinationRegion other than the one called are refused', async () => {
    const { t, clock, west } = await start();
    const v = await t.ec2.send(new CreateVolumeCommand({ AvailabilityZone: ZONE, Size: 7 }));
    clock.advance(1000);
    const pending = await t.ec2.send(new CreateSnapshotCommand({ VolumeId: v.VolumeId }));
    await expectEc2Error(west.send(copyOf(pending.SnapshotId as string)), 'IncorrectState');
    clock.advance(SNAPSHOT_MS);
    expect((await expectEc2Error(west.send(copyOf(pending.SnapshotId as string, { SourceRegion: 'eu-central-1' })), 'InvalidParameterValue', 400)).message).toMatch(/SourceRegion/);
    expect((await expectEc2Error(west.send(copyOf(pending.SnapshotId as string, { DestinationRegion: 'eu-central-1' })), 'InvalidParameterValue', 400)).message).toMatch(/DestinationRegion/);
    // Control: the same source, now completed, is copied.
    expect((await west.send(copyOf(pending.SnapshotId as string))).SnapshotId).toMatch(/^snap-/);
  });

  it('DeleteSnapshot and DescribeSnapshots are per Region: the copy is not found from the source Region', async () => {
    const { t, clock, west } = await start();
    const source = await homeSnapshot(t, clock);
    const copy = (await west.send(copyOf(source))).SnapshotId as string;
    clock.advance(SNAPSHOT_MS);
    await expectEc2Error(t.ec2.send(new DeleteSnapshotCommand({ SnapshotId: copy })), 'InvalidSnapshot.NotFound');
    await expectEc2Error(west.send(new DeleteSnapshotCommand({ SnapshotId: source })), 'InvalidSnapshot.NotFound');
    await west.send(new DeleteSnapshotCommand({ SnapshotId: copy }));
    expect(await ids(west)).toEqual([]);
    expect(await ids(t.ec2)).toEqual([source]);
  });
});

describe('routing by the signed Region', () => {
  it('with further Regions held, a Region not held is AuthFailure naming it; each held one answers its own zones', async () => {
    const { t } = await start();
    expect((await expectEc2Error(client(t.url, 'eu-central-1').send(new DescribeSnapshotsCommand({})), 'AuthFailure', 401)).message).toMatch(/eu-central-1/);
    expect(t.sim.regionNames()).toEqual([HOME, WEST]);
    expect(t.sim.inRegion(WEST).region).toBe(WEST);
  });

  it('without further Regions, every call is served in the home Region whatever its scope (as before Regions)', async () => {
    const { t, clock } = await start([]);
    const source = await homeSnapshot(t, clock);
    expect(await ids(client(t.url, 'eu-central-1'))).toEqual([source]);
  });

  it('refuses malformed or repeated Region names at start', async () => {
    await expect(startTestSim({ regions: ['nowhere'] })).rejects.toThrow(/not Region names: "nowhere"/);
    await expect(startTestSim({ regions: [HOME] })).rejects.toThrow(/more than once.*us-east-1/);
  });
});
