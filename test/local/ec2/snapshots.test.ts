import {
  CopyVolumesCommand,
  CreateSnapshotCommand,
  CreateTagsCommand,
  CreateVolumeCommand,
  DeleteTagsCommand,
  DeleteSnapshotCommand,
  DescribeFastSnapshotRestoresCommand,
  DescribeSnapshotsCommand,
  DescribeVolumesCommand,
  EnableFastSnapshotRestoresCommand,
  paginateDescribeSnapshots,
  type CreateSnapshotCommandInput,
  type DescribeSnapshotsCommandInput,
  type Snapshot,
} from '@aws-sdk/client-ec2';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { bucketName } from '../../../lib/local/ec2/buckets.js';
import { ManualClock } from '../../../lib/local/ec2/index.js';
import { expectEc2Error, simPerTest, startTestSim, ZONE, type TestSim } from './helpers.js';

// Fixed latencies, so that a test knows when each transition is due.
const SNAPSHOT_MS = 60_000;
const t = simPerTest({
  latency: {
    create: { kind: 'fixed', ms: 1000 },
    snapshot: { kind: 'fixed', ms: SNAPSHOT_MS },
    fsrEnable: { kind: 'fixed', ms: 10_000 },
    fsrOptimizePerTiB: { kind: 'fixed', ms: 3_600_000 },
  },
});

async function volume(input: { Size?: number; VolumeType?: 'gp3' | 'st1'; Encrypted?: boolean; KmsKeyId?: string } = {}): Promise<string> {
  const v = await t.ec2.send(new CreateVolumeCommand({ AvailabilityZone: ZONE, Size: 10, VolumeType: 'gp3', ...input }));
  t.clock.advance(1000);
  return v.VolumeId as string;
}

const snap = (VolumeId: string, input: Partial<CreateSnapshotCommandInput> = {}) =>
  t.ec2.send(new CreateSnapshotCommand({ VolumeId, ...input }));

const describeSnap = async (id: string): Promise<Snapshot | undefined> =>
  (await t.ec2.send(new DescribeSnapshotsCommand({ SnapshotIds: [id] }))).Snapshots?.[0];

const tagged = (key: string, value: string) => ({ TagSpecifications: [{ ResourceType: 'snapshot' as const, Tags: [{ Key: key, Value: value }] }] });

describe('CreateSnapshot', () => {
  it('volume available -> pending with progress, the volume size, description and tags; completed 100% after the latency', async () => {
    const vol = await volume({ Size: 12 });
    const s = await snap(vol, { Description: 'nightly', ...tagged('CSIVolumeSnapshotName', 'snapcontent-1') });
    expect(s.SnapshotId).toMatch(/^snap-[0-9a-f]{17}$/);
    expect(s).toMatchObject({
      VolumeId: vol,
      State: 'pending',
      Progress: '0%',
      VolumeSize: 12,
      Description: 'nightly',
      Encrypted: false,
      OwnerId: '123456789012',
      Tags: [{ Key: 'CSIVolumeSnapshotName', Value: 'snapcontent-1' }],
    });
    t.clock.advance(SNAPSHOT_MS / 2);
    expect(await describeSnap(s.SnapshotId as string)).toMatchObject({ State: 'pending', Progress: '50%' });
    t.clock.advance(SNAPSHOT_MS / 2);
    const done = await describeSnap(s.SnapshotId as string);
    expect(done).toMatchObject({ State: 'completed', Progress: '100%' });
    expect(done?.CompletionTime?.getTime()).toBe((s.StartTime as Date).getTime() + SNAPSHOT_MS);
  });

  it('encrypted volume -> encrypted snapshot with the volume key', async () => {
    const vol = await volume({ Encrypted: true, KmsKeyId: 'alias/team' });
    const s = await snap(vol);
    expect(s).toMatchObject({ Encrypted: true, KmsKeyId: 'arn:aws:kms:us-east-1:123456789012:alias/team' });
  });

  it('unknown volume -> InvalidVolume.NotFound; creating volume -> IncorrectState; long description -> InvalidParameterValue', async () => {
    await expectEc2Error(snap('vol-0123456789abcdef0'), 'InvalidVolume.NotFound');
    const creating = await t.ec2.send(new CreateVolumeCommand({ AvailabilityZone: ZONE, Size: 1 }));
    await expectEc2Error(snap(creating.VolumeId as string), 'IncorrectState');
    await expectEc2Error(snap(await volume(), { Description: 'x'.repeat(256) }), 'InvalidParameterValue');
  });

  it('tags for a volume resource type -> InvalidParameterValue; Outposts -> refused by name', async () => {
    const vol = await volume();
    await expectEc2Error(snap(vol, { TagSpecifications: [{ ResourceType: 'volume', Tags: [{ Key: 'a', Value: 'b' }] }] }), 'InvalidParameterValue');
    const e = await expectEc2Error(snap(vol, { OutpostArn: 'arn:aws:outposts:us-east-1:123456789012:outpost/op-1' }), 'InvalidParameterValue');
    expect(e.message).toContain('OutpostArn');
  });

  it('second snapshot of a volume within 15 s of a pending one -> SnapshotCreationPerVolumeRateExceeded; after 15 s accepted', async () => {
    const vol = await volume();
    await snap(vol);
    t.clock.advance(14_000);
    await expectEc2Error(snap(vol), 'SnapshotCreationPerVolumeRateExceeded');
    t.clock.advance(1000);
    expect((await snap(vol)).State).toBe('pending');
  });

  it('five pending on gp3 -> the sixth is ConcurrentSnapshotLimitExceeded; st1 allows one', async () => {
    t.sim.configure({ latency: { snapshot: { kind: 'fixed', ms: 600_000 } } });
    const vol = await volume();
    for (let i = 0; i < 5; i++) {
      await snap(vol);
      t.clock.advance(15_000);
    }
    await expectEc2Error(snap(vol), 'ConcurrentSnapshotLimitExceeded');
    const hdd = await volume({ VolumeType: 'st1', Size: 125 });
    await snap(hdd);
    t.clock.advance(20_000);
    await expectEc2Error(snap(hdd), 'ConcurrentSnapshotLimitExceeded');
  });

  it('snapshot fault rule on a volume tag -> the snapshot ends in error with a status message', async () => {
    t.sim.configure({ snapshotFaults: [{ volumeTag: { key: 'fail' }, outcome: 'error' }] });
    const v = await t.ec2.send(
      new CreateVolumeCommand({ AvailabilityZone: ZONE, Size: 1, TagSpecifications: [{ ResourceType: 'volume', Tags: [{ Key: 'fail', Value: '' }] }] }),
    );
    t.clock.advance(1000);
    const s = await snap(v.VolumeId as string);
    t.clock.advance(SNAPSHOT_MS);
    expect(await describeSnap(s.SnapshotId as string)).toMatchObject({ State: 'error', StateMessage: 'Snapshot creation failed.' });
  });
});

describe('DescribeSnapshots', () => {
  it('filters tag:, tag-key, status, volume-id, owner -> only the matching snapshots', async () => {
    const a = await volume();
    const b = await volume();
    const s1 = await snap(a, tagged('CSIVolumeSnapshotName', 'one'));
    const s2 = await snap(b, tagged('CSIVolumeSnapshotName', 'two'));
    t.clock.advance(SNAPSHOT_MS);
    const s3 = await snap(a, tagged('team', 'x'));
    const ids = async (input: DescribeSnapshotsCommandInput) =>
      ((await t.ec2.send(new DescribeSnapshotsCommand(input))).Snapshots ?? []).map((s) => s.SnapshotId);
    expect(await ids({ Filters: [{ Name: 'tag:CSIVolumeSnapshotName', Values: ['two'] }] })).toEqual([s2.SnapshotId]);
    expect(await ids({ Filters: [{ Name: 'tag-key', Values: ['CSIVolumeSnapshotName'] }] })).toEqual([s1.SnapshotId, s2.SnapshotId]);
    expect(await ids({ Filters: [{ Name: 'status', Values: ['pending'] }] })).toEqual([s3.SnapshotId]);
    expect(await ids({ Filters: [{ Name: 'volume-id', Values: [a] }, { Name: 'status', Values: ['completed'] }] })).toEqual([s1.SnapshotId]);
    expect(await ids({ OwnerIds: ['self'] })).toHaveLength(3);
    expect(await ids({ OwnerIds: ['123456789012'], Filters: [{ Name: 'tag:team', Values: ['x'] }] })).toEqual([s3.SnapshotId]);
    expect(await ids({ OwnerIds: ['amazon'] })).toEqual([]);
  });

  it('CreateTags / DeleteTags on a snapshot -> its tags change, and tag filters see them', async () => {
    const s = await snap(await volume());
    await t.ec2.send(new CreateTagsCommand({ Resources: [s.SnapshotId as string], Tags: [{ Key: 'later', Value: '1' }] }));
    expect((await describeSnap(s.SnapshotId as string))?.Tags).toEqual([{ Key: 'later', Value: '1' }]);
    await t.ec2.send(new DeleteTagsCommand({ Resources: [s.SnapshotId as string], Tags: [{ Key: 'later' }] }));
    const found = await t.ec2.send(new DescribeSnapshotsCommand({ Filters: [{ Name: 'tag-key', Values: ['later'] }] }));
    expect(found.Snapshots).toEqual([]);
  });

  it('unknown ID -> InvalidSnapshot.NotFound; malformed -> InvalidSnapshotID.Malformed; unknown filter, RestorableBy -> InvalidParameterValue', async () => {
    await expectEc2Error(t.ec2.send(new DescribeSnapshotsCommand({ SnapshotIds: ['snap-0123456789abcdef0'] })), 'InvalidSnapshot.NotFound');
    await expectEc2Error(t.ec2.send(new DescribeSnapshotsCommand({ SnapshotIds: ['vol-1'] })), 'InvalidSnapshotID.Malformed');
    await expectEc2Error(t.ec2.send(new DescribeSnapshotsCommand({ Filters: [{ Name: 'colour', Values: ['x'] }] })), 'InvalidParameterValue');
    await expectEc2Error(t.ec2.send(new DescribeSnapshotsCommand({ RestorableByUserIds: ['all'] })), 'InvalidParameterValue');
  });

  it('MaxResults 5 over 12 snapshots -> 3 pages via the SDK paginator, each once; MaxResults with IDs -> InvalidParameterCombination', async () => {
    const made: string[] = [];
    for (let i = 0; i < 12; i++) made.push((await snap(await volume())).SnapshotId as string);
    const pages: number[] = [];
    const seen: string[] = [];
    for await (const page of paginateDescribeSnapshots({ client: t.ec2, pageSize: 5 }, {})) {
      pages.push(page.Snapshots?.length ?? 0);
      seen.push(...(page.Snapshots ?? []).map((s) => s.SnapshotId as string));
    }
    expect(pages).toEqual([5, 5, 2]);
    expect(seen).toEqual(made);
    await expectEc2Error(t.ec2.send(new DescribeSnapshotsCommand({ SnapshotIds: [made[0] as string], MaxResults: 5 })), 'InvalidParameterCombination');
    await expectEc2Error(t.ec2.send(new DescribeSnapshotsCommand({ MaxResults: 4 })), 'InvalidParameterValue');
  });
});

describe('DeleteSnapshot', () => {
  it('completed -> gone at once; deleting again -> InvalidSnapshot.NotFound', async () => {
    const s = await snap(await volume());
    t.clock.advance(SNAPSHOT_MS);
    await t.ec2.send(new DeleteSnapshotCommand({ SnapshotId: s.SnapshotId }));
    await expectEc2Error(t.ec2.send(new DescribeSnapshotsCommand({ SnapshotIds: [s.SnapshotId as string] })), 'InvalidSnapshot.NotFound');
    await expectEc2Error(t.ec2.send(new DeleteSnapshotCommand({ SnapshotId: s.SnapshotId })), 'InvalidSnapshot.NotFound');
  });

  it('pending -> accepted (twice), still listed pending, gone once it completes', async () => {
    const s = await snap(await volume());
    await t.ec2.send(new DeleteSnapshotCommand({ SnapshotId: s.SnapshotId }));
    await t.ec2.send(new DeleteSnapshotCommand({ SnapshotId: s.SnapshotId }));
    expect(await describeSnap(s.SnapshotId as string)).toMatchObject({ State: 'pending' });
    t.clock.advance(SNAPSHOT_MS);
    expect(t.sim.snapshot(s.SnapshotId as string)).toBeUndefined();
    expect((await t.ec2.send(new DescribeSnapshotsCommand({}))).Snapshots).toEqual([]);
  });

  it('malformed ID -> InvalidSnapshotID.Malformed; missing -> MissingParameter', async () => {
    await expectEc2Error(t.ec2.send(new DeleteSnapshotCommand({ SnapshotId: 'snapshot-1' })), 'InvalidSnapshotID.Malformed');
    expect((await t.sim.call({ Action: 'DeleteSnapshot' })).code).toBe('MissingParameter');
  });
});

describe('CreateVolume from a snapshot', () => {
  async function completed(size = 8, encrypted = false): Promise<string> {
    const s = await snap(await volume({ Size: size, ...(encrypted ? { Encrypted: true } : {}) }));
    t.clock.advance(SNAPSHOT_MS);
    return s.SnapshotId as string;
  }

  it('no Size -> the snapshot size; SnapshotId reported; filter snapshot-id finds it', async () => {
    const id = await completed(8);
    const v = await t.ec2.send(new CreateVolumeCommand({ AvailabilityZone: ZONE, SnapshotId: id, VolumeType: 'gp3' }));
    expect(v).toMatchObject({ Size: 8, SnapshotId: id, State: 'creating', FastRestored: false });
    const found = await t.ec2.send(new DescribeVolumesCommand({ Filters: [{ Name: 'snapshot-id', Values: [id] }] }));
    expect(found.Volumes?.map((x) => x.VolumeId)).toEqual([v.VolumeId]);
  });

  it('Size larger -> that size; smaller than the snapshot -> InvalidParameterValue', async () => {
    const id = await completed(8);
    expect((await t.ec2.send(new CreateVolumeCommand({ AvailabilityZone: ZONE, SnapshotId: id, Size: 20 }))).Size).toBe(20);
    const e = await expectEc2Error(t.ec2.send(new CreateVolumeCommand({ AvailabilityZone: ZONE, SnapshotId: id, Size: 7 })), 'InvalidParameterValue');
    expect(e.message).toContain(id);
  });

  it('encrypted snapshot -> encrypted volume with the snapshot key even without Encrypted', async () => {
    const id = await completed(4, true);
    const v = await t.ec2.send(new CreateVolumeCommand({ AvailabilityZone: ZONE, SnapshotId: id }));
    expect(v).toMatchObject({ Encrypted: true, KmsKeyId: 'arn:aws:kms:us-east-1:123456789012:alias/aws/ebs' });
  });

  it('pending snapshot -> IncorrectState; unknown -> InvalidSnapshot.NotFound; no size and no snapshot -> MissingParameter', async () => {
    const s = await snap(await volume());
    await expectEc2Error(t.ec2.send(new CreateVolumeCommand({ AvailabilityZone: ZONE, SnapshotId: s.SnapshotId })), 'IncorrectState');
    await expectEc2Error(t.ec2.send(new CreateVolumeCommand({ AvailabilityZone: ZONE, SnapshotId: 'snap-0123456789abcdef0' })), 'InvalidSnapshot.NotFound');
    await expectEc2Error(t.ec2.send(new CreateVolumeCommand({ AvailabilityZone: ZONE })), 'MissingParameter');
  });

  it('VolumeInitializationRate: kept with a snapshot; without one -> InvalidParameterCombination; 99 -> InvalidParameterValue', async () => {
    const id = await completed();
    const v = await t.ec2.send(new CreateVolumeCommand({ AvailabilityZone: ZONE, SnapshotId: id, VolumeInitializationRate: 200 }));
    expect(v.VolumeInitializationRate).toBe(200);
    await expectEc2Error(t.ec2.send(new CreateVolumeCommand({ AvailabilityZone: ZONE, Size: 4, VolumeInitializationRate: 200 })), 'InvalidParameterCombination');
    await expectEc2Error(t.ec2.send(new CreateVolumeCommand({ AvailabilityZone: ZONE, SnapshotId: id, VolumeInitializationRate: 99 })), 'InvalidParameterValue');
  });
});

describe('CopyVolumes', () => {
  it('source available -> one new volume in its zone with its own tags, SourceVolumeId, gp2 and the source size by default', async () => {
    const src = await t.ec2.send(
      new CreateVolumeCommand({ AvailabilityZone: 'us-east-1b', Size: 9, VolumeType: 'gp3', TagSpecifications: [{ ResourceType: 'volume', Tags: [{ Key: 'src', Value: '1' }] }] }),
    );
    t.clock.advance(1000);
    const out = await t.ec2.send(
      new CopyVolumesCommand({ SourceVolumeId: src.VolumeId, TagSpecifications: [{ ResourceType: 'volume', Tags: [{ Key: 'CSIVolumeName', Value: 'pvc-1' }] }] }),
    );
    expect(out.Volumes).toHaveLength(1);
    const copy = out.Volumes?.[0];
    expect(copy).toMatchObject({
      AvailabilityZone: 'us-east-1b',
      Size: 9,
      VolumeType: 'gp2',
      State: 'creating',
      SourceVolumeId: src.VolumeId,
      Tags: [{ Key: 'CSIVolumeName', Value: 'pvc-1' }],
    });
    expect(copy?.VolumeId).not.toBe(src.VolumeId);
    t.clock.advance(1000);
    const described = await t.ec2.send(new DescribeVolumesCommand({ VolumeIds: [copy?.VolumeId as string] }));
    expect(described.Volumes?.[0]).toMatchObject({ State: 'available', SourceVolumeId: src.VolumeId });
  });

  it('same ClientToken again -> the same copy; with other parameters -> IdempotentParameterMismatch', async () => {
    const src = await volume();
    const a = await t.ec2.send(new CopyVolumesCommand({ SourceVolumeId: src, ClientToken: 'tok', Size: 10, VolumeType: 'gp3' }));
    const b = await t.ec2.send(new CopyVolumesCommand({ SourceVolumeId: src, ClientToken: 'tok', Size: 10, VolumeType: 'gp3' }));
    expect(b.Volumes?.[0]?.VolumeId).toBe(a.Volumes?.[0]?.VolumeId);
    expect(t.sim.volumes()).toHaveLength(2);
    await expectEc2Error(t.ec2.send(new CopyVolumesCommand({ SourceVolumeId: src, ClientToken: 'tok', Size: 11, VolumeType: 'gp3' })), 'IdempotentParameterMismatch');
  });

  it('smaller than the source -> InvalidParameterValue; source creating -> IncorrectState; unknown -> InvalidVolume.NotFound', async () => {
    const src = await volume({ Size: 10 });
    await expectEc2Error(t.ec2.send(new CopyVolumesCommand({ SourceVolumeId: src, Size: 9 })), 'InvalidParameterValue');
    const creating = await t.ec2.send(new CreateVolumeCommand({ AvailabilityZone: ZONE, Size: 1 }));
    await expectEc2Error(t.ec2.send(new CopyVolumesCommand({ SourceVolumeId: creating.VolumeId })), 'IncorrectState');
    await expectEc2Error(t.ec2.send(new CopyVolumesCommand({ SourceVolumeId: 'vol-0123456789abcdef0' })), 'InvalidVolume.NotFound');
  });

  it('encrypted source -> encrypted copy with its key', async () => {
    const src = await volume({ Encrypted: true, KmsKeyId: 'k1' });
    const out = await t.ec2.send(new CopyVolumesCommand({ SourceVolumeId: src }));
    expect(out.Volumes?.[0]).toMatchObject({ Encrypted: true, KmsKeyId: 'arn:aws:kms:us-east-1:123456789012:key/k1' });
  });
});

describe('Fast snapshot restores', () => {
  it('enabled on a pending snapshot -> enabling until it completes, then optimizing, then enabled; a restore there is FastRestored', async () => {
    const s = await snap(await volume({ Size: 512 }));
    const id = s.SnapshotId as string;
    const on = await t.ec2.send(new EnableFastSnapshotRestoresCommand({ SourceSnapshotIds: [id], AvailabilityZones: ['us-east-1a', 'us-east-1b'] }));
    expect(on.Successful?.map((x) => [x.AvailabilityZone, x.State])).toEqual([['us-east-1a', 'enabling'], ['us-east-1b', 'enabling']]);
    expect(on.Unsuccessful).toEqual([]);
    const states = async () =>
      ((await t.ec2.send(new DescribeFastSnapshotRestoresCommand({ Filters: [{ Name: 'snapshot-id', Values: [id] }] }))).FastSnapshotRestores ?? []).map((f) => f.State);
    t.clock.advance(SNAPSHOT_MS + 9_000);
    expect(await states()).toEqual(['enabling', 'enabling']);
    t.clock.advance(1_000);
    expect(await states()).toEqual(['optimizing', 'optimizing']);
    t.clock.advance(3_600_000);
    expect(await states()).toEqual(['enabled', 'enabled']);
    const restored = await t.ec2.send(new CreateVolumeCommand({ AvailabilityZone: 'us-east-1b', SnapshotId: id }));
    expect(restored.FastRestored).toBe(true);
    const zoneA = await t.ec2.send(new DescribeFastSnapshotRestoresCommand({ Filters: [{ Name: 'availability-zone', Values: ['us-east-1a'] }, { Name: 'state', Values: ['enabled'] }] }));
    expect(zoneA.FastSnapshotRestores).toHaveLength(1);
  });

  it('unknown snapshot and unknown zone -> reported under Unsuccessful, the rest enabled', async () => {
    const s = await snap(await volume());
    const out = await t.ec2.send(
      new EnableFastSnapshotRestoresCommand({ SourceSnapshotIds: [s.SnapshotId as string, 'snap-0123456789abcdef0'], AvailabilityZones: ['us-east-1a', 'us-west-2a'] }),
    );
    expect(out.Successful?.map((x) => x.AvailabilityZone)).toEqual(['us-east-1a']);
    expect(out.Unsuccessful).toEqual([
      { SnapshotId: s.SnapshotId, FastSnapshotRestoreStateErrors: [{ AvailabilityZone: 'us-west-2a', Error: { Code: 'InvalidParameterValue', Message: 'Invalid availability zone: [us-west-2a]' } }] },
      {
        SnapshotId: 'snap-0123456789abcdef0',
        FastSnapshotRestoreStateErrors: [
          { AvailabilityZone: 'us-east-1a', Error: { Code: 'InvalidSnapshot.NotFound', Message: "The snapshot 'snap-0123456789abcdef0' does not exist." } },
          { AvailabilityZone: 'us-west-2a', Error: { Code: 'InvalidSnapshot.NotFound', Message: "The snapshot 'snap-0123456789abcdef0' does not exist." } },
        ],
      },
    ]);
  });

  it('deleted snapshot -> its fast snapshot restores are gone too', async () => {
    const s = await snap(await volume());
    t.clock.advance(SNAPSHOT_MS);
    await t.ec2.send(new EnableFastSnapshotRestoresCommand({ SourceSnapshotIds: [s.SnapshotId as string], AvailabilityZones: ['us-east-1a'] }));
    await t.ec2.send(new DeleteSnapshotCommand({ SnapshotId: s.SnapshotId }));
    expect((await t.ec2.send(new DescribeFastSnapshotRestoresCommand({}))).FastSnapshotRestores).toEqual([]);
  });
});

describe('throttling and stats of the new actions', () => {
  it('buckets: DescribeSnapshots split like DescribeVolumes; the others their own', () => {
    expect(bucketName('DescribeSnapshots', ['Action', 'Version'])).toBe('DescribeSnapshots:unfiltered');
    expect(bucketName('DescribeSnapshots', ['Action', 'Filter.1.Name'])).toBe('DescribeSnapshots');
    expect(bucketName('DescribeSnapshots', ['Action', 'Owner.1'])).toBe('DescribeSnapshots');
    for (const a of ['CreateSnapshot', 'DeleteSnapshot', 'CopyVolumes', 'EnableFastSnapshotRestores', 'DescribeFastSnapshotRestores']) {
      expect(bucketName(a, ['Action'])).toBe(a);
    }
  });

  it('CreateSnapshot bucket 100 with refill 5/s -> the 101st in a burst is RequestLimitExceeded and counted', async () => {
    t.sim.configure({ throttling: { enabled: true } });
    const results = await Promise.all(Array.from({ length: 101 }, () => t.sim.call({ Action: 'CreateSnapshot', VolumeId: 'vol-0123456789abcdef0' })));
    expect(results.filter((r) => r.code === 'RequestLimitExceeded')).toHaveLength(1);
    expect(t.sim.getStats().actions.CreateSnapshot).toMatchObject({ calls: 101, throttled: 1, errors: { 'InvalidVolume.NotFound': 100, RequestLimitExceeded: 1 } });
  });

  it('stats per action -> counted like the volume actions', async () => {
    const s = await snap(await volume());
    await t.ec2.send(new DescribeSnapshotsCommand({}));
    await t.ec2.send(new DeleteSnapshotCommand({ SnapshotId: s.SnapshotId }));
    const stats = t.sim.getStats().actions;
    expect(stats.CreateSnapshot).toMatchObject({ calls: 1, ok: 1 });
    expect(stats.DescribeSnapshots).toMatchObject({ calls: 1, ok: 1 });
    expect(stats.DeleteSnapshot).toMatchObject({ calls: 1, ok: 1 });
  });
});

describe('persistence', () => {
  it('restart on the same stateDir -> snapshots, fast restores and their due transitions resume', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'volhook-ec2-snap-'));
    const clock = new ManualClock();
    const latency = { create: { kind: 'fixed', ms: 1000 }, snapshot: { kind: 'fixed', ms: SNAPSHOT_MS }, fsrEnable: { kind: 'fixed', ms: 10_000 } } as const;
    let second: TestSim | undefined;
    try {
      const first = await startTestSim({ stateDir: dir, throttling: false, latency }, clock);
      const v = await first.ec2.send(new CreateVolumeCommand({ AvailabilityZone: ZONE, Size: 3 }));
      clock.advance(1000);
      const s = await first.ec2.send(new CreateSnapshotCommand({ VolumeId: v.VolumeId, ...tagged('CSIVolumeSnapshotName', 'kept') }));
      await first.ec2.send(new EnableFastSnapshotRestoresCommand({ SourceSnapshotIds: [s.SnapshotId as string], AvailabilityZones: [ZONE] }));
      await first.close();

      second = await startTestSim({ stateDir: dir, throttling: false, latency }, clock);
      expect(second.sim.snapshot(s.SnapshotId as string)).toMatchObject({ state: 'pending', tags: [{ key: 'CSIVolumeSnapshotName', value: 'kept' }] });
      clock.advance(SNAPSHOT_MS + 10_000);
      expect(second.sim.snapshot(s.SnapshotId as string)?.state).toBe('completed');
      expect(second.sim.fastSnapshotRestores().map((f) => f.state)).toEqual(['optimizing']);
    } finally {
      await second?.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
