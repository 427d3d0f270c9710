/**
 * The reference EBS CSI driver's access key held to AWS's managed policy for it
 * (AmazonEBSCSIDriverPolicy, infra/iam/aws-managed/): every call the driver makes, with the
 * tags it puts on what it creates, is allowed over HTTP; a call the policy does not allow is
 * UnauthorizedOperation, as AWS answers it.
 */
import {
  AttachVolumeCommand,
  CopyVolumesCommand,
  CreateSnapshotCommand,
  CreateTagsCommand,
  CreateVolumeCommand,
  DeleteSnapshotCommand,
  DeleteTagsCommand,
  DeleteVolumeCommand,
  DescribeAvailabilityZonesCommand,
  DescribeInstancesCommand,
  DescribeInstanceTypesCommand,
  DescribeSnapshotsCommand,
  DescribeVolumesCommand,
  DescribeVolumesModificationsCommand,
  DescribeVolumeStatusCommand,
  DetachVolumeCommand,
  EC2Client,
  EnableFastSnapshotRestoresCommand,
  ModifyVolumeCommand,
  type Tag,
} from '@aws-sdk/client-ec2';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ebsCsiDriverPolicy, ebsCsiDriverPrincipals } from '../../../lib/local/ec2/index.js';
import { expectEc2Error, simPerTest, ZONE } from './helpers.js';

const DRIVER_KEY = 'AKIAEBSCSIDRIVER0001';
const t = simPerTest({ iam: { principals: ebsCsiDriverPrincipals(DRIVER_KEY) } });

let driver: EC2Client;
beforeEach(() => {
  // The simulator of this test, signed with the driver's key.
  driver = new EC2Client({ endpoint: t.ec2.config.endpoint, region: 'us-east-1', credentials: { accessKeyId: DRIVER_KEY, secretAccessKey: 'x' }, maxAttempts: 1 });
});
afterEach(() => driver.destroy());

/** The tags the driver gives a claim's volume (CreateVolume with --extra-create-metadata). */
const VOLUME_TAGS: Tag[] = [
  { Key: 'CSIVolumeName', Value: 'pvc-0a1b' },
  { Key: 'ebs.csi.aws.com/cluster', Value: 'true' },
  { Key: 'kubernetes.io/created-for/pvc/name', Value: 'data-web-0' },
  { Key: 'kubernetes.io/created-for/pvc/namespace', Value: 'default' },
  { Key: 'kubernetes.io/created-for/pv/name', Value: 'pvc-0a1b' },
];
/** The tags it gives a VolumeSnapshot's snapshot (CreateSnapshot with --extra-create-metadata). */
const SNAPSHOT_TAGS: Tag[] = [
  { Key: 'CSIVolumeSnapshotName', Value: 'snapshot-9f8e' },
  { Key: 'ebs.csi.aws.com/cluster', Value: 'true' },
  { Key: 'kubernetes.io/created-for/volumesnapshot/name', Value: 'snap-1' },
  { Key: 'kubernetes.io/created-for/volumesnapshot/namespace', Value: 'default' },
  { Key: 'kubernetes.io/created-for/volumesnapshotcontent/name', Value: 'snapcontent-9f8e' },
];

describe('the EBS CSI driver’s key, held to AmazonEBSCSIDriverPolicy', () => {
  it('the policy is the managed one, from its data file, with its source named', () => {
    const policy = ebsCsiDriverPolicy();
    expect(policy.arn).toBe('arn:aws:iam::aws:policy/service-role/AmazonEBSCSIDriverPolicy');
    expect(policy.source).toContain('AmazonEBSCSIDriverPolicy');
    expect(policy.document.Statement.length).toBeGreaterThan(10);
  });

  it('every call the driver makes, with its tags, is allowed: the dry runs, describes, create, attach, modify, snapshot, fast restore, restore, volume status, copy, untag, detach, delete', async () => {
    const node = t.sim.runInstance({ instanceType: 'm5.large' });
    await expectEc2Error(driver.send(new DescribeAvailabilityZonesCommand({ DryRun: true })), 'DryRunOperation', 412);
    await expectEc2Error(
      driver.send(new CreateVolumeCommand({ DryRun: true, AvailabilityZone: ZONE, Size: 4, VolumeType: 'gp3', TagSpecifications: [{ ResourceType: 'volume', Tags: [{ Key: 'CSIVolumeName', Value: 'IopsLimitDryRun' }] }] })),
      'DryRunOperation',
      412,
    );
    await driver.send(new DescribeAvailabilityZonesCommand({}));
    await driver.send(new DescribeInstancesCommand({ InstanceIds: [node.id] }));
    await driver.send(new DescribeInstanceTypesCommand({ InstanceTypes: ['m5.large'] }));

    const { VolumeId } = await driver.send(
      new CreateVolumeCommand({ AvailabilityZone: ZONE, Size: 4, VolumeType: 'gp3', ClientToken: 'pvc-0a1b-1', TagSpecifications: [{ ResourceType: 'volume', Tags: VOLUME_TAGS }] }),
    );
    const volumeId = VolumeId!;
    t.clock.advance(15_000);
    await driver.send(new DescribeVolumesCommand({ VolumeIds: [volumeId] }));
    await driver.send(new AttachVolumeCommand({ VolumeId: volumeId, InstanceId: node.id, Device: '/dev/xvdaa' }));
    t.clock.advance(5_000);
    await expectEc2Error(driver.send(new DescribeVolumesModificationsCommand({ VolumeIds: [volumeId] })), 'InvalidVolumeModification.NotFound');
    await driver.send(new ModifyVolumeCommand({ VolumeId: volumeId, Size: 8, Iops: 4000, Throughput: 250 }));
    await driver.send(new DescribeVolumesModificationsCommand({ VolumeIds: [volumeId] }));

    const { SnapshotId } = await driver.send(new CreateSnapshotCommand({ VolumeId: volumeId, TagSpecifications: [{ ResourceType: 'snapshot', Tags: SNAPSHOT_TAGS }] }));
    const snapshotId = SnapshotId!;
    await driver.send(new DescribeSnapshotsCommand({ SnapshotIds: [snapshotId] }));
    await driver.send(new EnableFastSnapshotRestoresCommand({ SourceSnapshotIds: [snapshotId], AvailabilityZones: [ZONE] }));
    t.clock.advance(3_600_000);
    const restoreTags = VOLUME_TAGS.map((tag) => (tag.Key === 'CSIVolumeName' ? { ...tag, Value: 'pvc-restored' } : tag));
    const restored = await driver.send(
      new CreateVolumeCommand({ AvailabilityZone: ZONE, SnapshotId: snapshotId, VolumeType: 'gp3', TagSpecifications: [{ ResourceType: 'volume', Tags: restoreTags }] }),
    );
    await driver.send(new DescribeVolumeStatusCommand({ VolumeIds: [restored.VolumeId!] }));
    const copy = await driver.send(new CopyVolumesCommand({ SourceVolumeId: volumeId, TagSpecifications: [{ ResourceType: 'volume', Tags: VOLUME_TAGS }] }));
    await driver.send(new DeleteTagsCommand({ Resources: [volumeId], Tags: [{ Key: 'kubernetes.io/created-for/pv/name' }] }));

    await driver.send(new DetachVolumeCommand({ VolumeId: volumeId, InstanceId: node.id }));
    t.clock.advance(5_000);
    await driver.send(new DeleteSnapshotCommand({ SnapshotId: snapshotId }));
    for (const id of [volumeId, restored.VolumeId!, copy.Volumes![0]!.VolumeId!]) await driver.send(new DeleteVolumeCommand({ VolumeId: id }));
    expect(t.sim.volume(volumeId)?.state ?? 'gone').toMatch(/^(deleting|deleted|gone)$/);
  });

  it('control: a disk without the driver’s tags is not the driver’s to delete (UnauthorizedOperation naming DeleteVolume and the volume); the operator’s key deletes it', async () => {
    const [disk] = t.sim.seedVolumes({ zone: ZONE, tags: { team: 'db' } });
    const err = await expectEc2Error(driver.send(new DeleteVolumeCommand({ VolumeId: disk!.id })), 'UnauthorizedOperation', 403);
    expect(err.message).toContain(`ec2:DeleteVolume on resource: arn:aws:ec2:us-east-1:123456789012:volume/${disk!.id}`);
    expect(t.sim.volume(disk!.id)?.state).toBe('available');
    await t.ec2.send(new DeleteVolumeCommand({ VolumeId: disk!.id }));
  });

  it('control: CreateVolume without the driver’s tags, and its dry run, are refused; so are CreateTags on an existing volume and DeleteSnapshot of a snapshot not tagged by it', async () => {
    const untagged = { AvailabilityZone: ZONE, Size: 4, VolumeType: 'gp3' as const };
    await expectEc2Error(driver.send(new CreateVolumeCommand(untagged)), 'UnauthorizedOperation', 403);
    await expectEc2Error(driver.send(new CreateVolumeCommand({ ...untagged, DryRun: true })), 'UnauthorizedOperation', 403);
    expect(t.sim.volumes()).toEqual([]);

    // The policy allows CreateTags only as part of CreateVolume, CreateSnapshot or CopyVolumes (ec2:CreateAction).
    const [disk] = t.sim.seedVolumes({ zone: ZONE, tags: { 'ebs.csi.aws.com/cluster': 'true', CSIVolumeName: 'pvc-x' } });
    await expectEc2Error(driver.send(new CreateTagsCommand({ Resources: [disk!.id], Tags: [{ Key: 'team', Value: 'db' }] })), 'UnauthorizedOperation', 403);

    const [snap] = t.sim.seedSnapshots({ volumeId: disk!.id, tags: { team: 'db' } });
    await expectEc2Error(driver.send(new DeleteSnapshotCommand({ SnapshotId: snap!.id })), 'UnauthorizedOperation', 403);
    const [own] = t.sim.seedSnapshots({ volumeId: disk!.id, tags: { CSIVolumeSnapshotName: 'snapshot-1' } });
    await driver.send(new DeleteSnapshotCommand({ SnapshotId: own!.id }));
  });

  it('DeleteVolume of a volume already gone is InvalidVolume.NotFound, not UnauthorizedOperation (the driver takes it as deleted)', async () => {
    await expectEc2Error(driver.send(new DeleteVolumeCommand({ VolumeId: 'vol-0123456789abcdef0' })), 'InvalidVolume.NotFound');
  });
});
