/**
 * The EC2 calls the reference EBS CSI driver (aws-ebs-csi-driver v1.63.0, pkg/cloud/cloud.go)
 * makes, answered over HTTP by the simulator as AWS answers them: DescribeInstanceTypes, a
 * CreateVolume retried with its tags in another order, the dry runs (and the IOPS probe the
 * driver reads limits from), DescribeVolumesModifications of a volume never modified.
 */
import {
  CreateVolumeCommand,
  DescribeAvailabilityZonesCommand,
  DescribeInstancesCommand,
  DescribeInstanceTypesCommand,
  DescribeVolumesCommand,
  DescribeVolumesModificationsCommand,
  DescribeVolumeStatusCommand,
  ModifyVolumeCommand,
  type CreateVolumeCommandInput,
  type Tag,
} from '@aws-sdk/client-ec2';
import { describe, expect, it } from 'vitest';
import { ACTIONS } from '../../../lib/local/ec2/actions.js';
import { AUTHORIZED_ACTIONS } from '../../../lib/local/ec2/index.js';
import { expectEc2Error, simPerTest, ZONE } from './helpers.js';

const t = simPerTest();

/** The tags the driver puts on a claim's volume (pkg/cloud, pkg/driver), in one order. */
const DRIVER_TAGS: Tag[] = [
  { Key: 'CSIVolumeName', Value: 'pvc-1b2c' },
  { Key: 'ebs.csi.aws.com/cluster', Value: 'true' },
  { Key: 'kubernetes.io/created-for/pvc/name', Value: 'data-web-0' },
  { Key: 'kubernetes.io/created-for/pvc/namespace', Value: 'default' },
  { Key: 'kubernetes.io/created-for/pv/name', Value: 'pvc-1b2c' },
];

const create = (input: Partial<CreateVolumeCommandInput>) =>
  t.ec2.send(new CreateVolumeCommand({ AvailabilityZone: ZONE, Size: 4, VolumeType: 'gp3', ...input }));

/** The driver's own check of the probe's answer (cloud.go, nonIo2ErrRegex and extractMaxIOPSFromError). */
const DRIVER_MAX_IOPS = /volume iops.*is too high.*maximum is (\d+)/i;

describe('DescribeInstanceTypes', () => {
  it('m5.large: Nitro, EBS info with the shared attachment limit (27), NVMe required, its EBS-optimized figures', async () => {
    const out = await t.ec2.send(new DescribeInstanceTypesCommand({ InstanceTypes: ['m5.large'] }));
    expect(out.InstanceTypes).toHaveLength(1);
    expect(out.InstanceTypes?.[0]).toMatchObject({
      InstanceType: 'm5.large',
      CurrentGeneration: true,
      Hypervisor: 'nitro',
      BareMetal: false,
      VCpuInfo: { DefaultVCpus: 2 },
      MemoryInfo: { SizeInMiB: 8192 },
      ProcessorInfo: { SupportedArchitectures: ['x86_64'] },
      EbsInfo: {
        EbsOptimizedSupport: 'default',
        EncryptionSupport: 'supported',
        NvmeSupport: 'required',
        MaximumEbsAttachments: 27,
        AttachmentLimitType: 'shared',
        EbsOptimizedInfo: { BaselineIops: 3600, MaximumIops: 18750, BaselineThroughputInMBps: 81.25 },
      },
      NetworkInfo: { MaximumNetworkInterfaces: 3, EnaSupport: 'required' },
      NitroEnclavesSupport: 'unsupported',
    });
    // One EBS card: the driver reads MaximumEbsCards only when it is above 1.
    expect(out.InstanceTypes?.[0]?.EbsInfo?.MaximumEbsCards).toBeUndefined();
  });

  it('without names -> every type the simulator describes; a filter narrows them (hypervisor=xen -> m1.small)', async () => {
    const all = await t.ec2.send(new DescribeInstanceTypesCommand({}));
    expect(all.InstanceTypes?.map((i) => i.InstanceType).sort()).toEqual(['m1.small', 'm5.large', 'm6i.large']);
    const xen = await t.ec2.send(new DescribeInstanceTypesCommand({ Filters: [{ Name: 'hypervisor', Values: ['xen'] }] }));
    expect(xen.InstanceTypes?.map((i) => i.InstanceType)).toEqual(['m1.small']);
    expect(xen.InstanceTypes?.[0]?.EbsInfo).toMatchObject({ NvmeSupport: 'unsupported', EbsOptimizedSupport: 'unsupported' });
  });

  it('MaxResults pages through them', async () => {
    const first = await t.ec2.send(new DescribeInstanceTypesCommand({ MaxResults: 5 }));
    expect(first.InstanceTypes).toHaveLength(3);
    expect(first.NextToken).toBeUndefined();
    await expectEc2Error(t.ec2.send(new DescribeInstanceTypesCommand({ MaxResults: 4 })), 'InvalidParameterValue');
  });

  it('a type it does not describe (c5.xlarge: not in its table) -> InvalidInstanceType naming it and the ones it does; an unknown filter -> InvalidParameterValue', async () => {
    const err = await expectEc2Error(t.ec2.send(new DescribeInstanceTypesCommand({ InstanceTypes: ['m5.large', 'c5.xlarge'] })), 'InvalidInstanceType');
    expect(err.message).toContain('[c5.xlarge]');
    expect(err.message).toContain('m5.large');
    await expectEc2Error(t.ec2.send(new DescribeInstanceTypesCommand({ Filters: [{ Name: 'no-such-filter', Values: ['x'] }] })), 'InvalidParameterValue');
  });

  it('an instance reports the hypervisor of its type (m5.large: nitro, not xen)', async () => {
    const i = t.sim.runInstance({ instanceType: 'm5.large' });
    const out = await t.ec2.send(new DescribeInstancesCommand({ InstanceIds: [i.id] }));
    expect(out.Reservations?.[0]?.Instances?.[0]?.Hypervisor).toBe('nitro');
  });
});

describe('CreateVolume retried with the same ClientToken', () => {
  it('the same tags in another order -> the same volume, not IdempotentParameterMismatch', async () => {
    const first = await create({ ClientToken: 'driver-token-1', TagSpecifications: [{ ResourceType: 'volume', Tags: DRIVER_TAGS }] });
    const again = await create({ ClientToken: 'driver-token-1', TagSpecifications: [{ ResourceType: 'volume', Tags: [...DRIVER_TAGS].reverse() }] });
    expect(again.VolumeId).toBe(first.VolumeId);
    const all = await t.ec2.send(new DescribeVolumesCommand({}));
    expect(all.Volumes).toHaveLength(1);
  });

  it('control: another size, or another tag value -> IdempotentParameterMismatch', async () => {
    await create({ ClientToken: 'driver-token-2', TagSpecifications: [{ ResourceType: 'volume', Tags: DRIVER_TAGS }] });
    await expectEc2Error(create({ ClientToken: 'driver-token-2', Size: 5, TagSpecifications: [{ ResourceType: 'volume', Tags: [...DRIVER_TAGS].reverse() }] }), 'IdempotentParameterMismatch');
    const changed = DRIVER_TAGS.map((tag) => (tag.Key === 'CSIVolumeName' ? { ...tag, Value: 'pvc-other' } : tag));
    await expectEc2Error(create({ ClientToken: 'driver-token-2', TagSpecifications: [{ ResourceType: 'volume', Tags: changed }] }), 'IdempotentParameterMismatch');
  });
});

describe('DryRun', () => {
  it('DescribeAvailabilityZones and CreateVolume -> DryRunOperation (412); nothing is made', async () => {
    await expectEc2Error(t.ec2.send(new DescribeAvailabilityZonesCommand({ DryRun: true })), 'DryRunOperation', 412);
    await expectEc2Error(create({ DryRun: true, TagSpecifications: [{ ResourceType: 'volume', Tags: DRIVER_TAGS }] }), 'DryRunOperation', 412);
    expect(t.sim.volumes()).toEqual([]);
  });

  it('CreateVolume parameters EC2 refuses are refused in a dry run too: the driver’s IOPS probe reads each type’s limit', async () => {
    const probe = (VolumeType: 'gp3' | 'io1' | 'io2' | 'gp2') =>
      create({ DryRun: true, VolumeType, Size: 4, Iops: 2147483647, TagSpecifications: [{ ResourceType: 'volume', Tags: [{ Key: 'CSIVolumeName', Value: 'IopsLimitDryRun' }] }] });
    for (const [type, max] of [['gp3', 16000], ['io1', 64000], ['io2', 256000]] as const) {
      const err = await expectEc2Error(probe(type), 'InvalidParameterValue');
      expect(DRIVER_MAX_IOPS.exec(err.message)?.[1], type).toBe(String(max));
    }
    const gp2 = await expectEc2Error(probe('gp2'), 'InvalidParameterCombination');
    expect(gp2.message).toContain('parameter iops is not supported');
    expect(t.sim.volumes()).toEqual([]);
  });

  it('a dry run names a zone the Region does not have as a real call would', async () => {
    await expectEc2Error(create({ DryRun: true, AvailabilityZone: 'us-east-1z' }), 'InvalidZone.NotFound');
  });
});

describe('DescribeVolumesModifications', () => {
  it('a volume never modified -> InvalidVolumeModification.NotFound (the driver takes it as "none yet"); once modified -> its modification', async () => {
    const v = await create({});
    await expectEc2Error(t.ec2.send(new DescribeVolumesModificationsCommand({ VolumeIds: [v.VolumeId!] })), 'InvalidVolumeModification.NotFound');
    t.clock.advance(15_000);
    await t.ec2.send(new ModifyVolumeCommand({ VolumeId: v.VolumeId!, Size: 8 }));
    const out = await t.ec2.send(new DescribeVolumesModificationsCommand({ VolumeIds: [v.VolumeId!] }));
    expect(out.VolumesModifications?.[0]).toMatchObject({ VolumeId: v.VolumeId, ModificationState: 'modifying', TargetSize: 8, OriginalSize: 4 });
  });
});

/**
 * Each EC2 call of aws-ebs-csi-driver v1.63.0 (pkg/cloud/cloud.go) and whether the simulator
 * serves it. LockSnapshot is made only for a VolumeSnapshotClass with lock parameters; it is
 * not served because what EC2 answers a DeleteSnapshot of a locked snapshot is not documented.
 */
const DRIVER_CALLS: Readonly<Record<string, 'served' | 'not served'>> = {
  AttachVolume: 'served',
  CopyVolumes: 'served',
  CreateSnapshot: 'served',
  CreateTags: 'served',
  CreateVolume: 'served',
  DeleteSnapshot: 'served',
  DeleteTags: 'served',
  DeleteVolume: 'served',
  DescribeAvailabilityZones: 'served',
  DescribeInstanceTypes: 'served',
  DescribeInstances: 'served',
  DescribeSnapshots: 'served',
  DescribeVolumeStatus: 'served',
  DescribeVolumes: 'served',
  DescribeVolumesModifications: 'served',
  DetachVolume: 'served',
  EnableFastSnapshotRestores: 'served',
  LockSnapshot: 'not served',
  ModifyVolume: 'served',
};

describe('the driver’s calls', () => {
  it('each served call has a handler and an IAM mapping; each other is refused InvalidAction naming it', async () => {
    for (const [action, state] of Object.entries(DRIVER_CALLS)) {
      expect(Object.hasOwn(ACTIONS, action), action).toBe(state === 'served');
      expect(AUTHORIZED_ACTIONS.includes(action), action).toBe(state === 'served');
      if (state === 'not served') {
        const out = await t.sim.call({ Action: action, Version: '2016-11-15' });
        expect(out.code, action).toBe('InvalidAction');
        expect(out.body).toContain(`The action ${action} is not valid for this web service (the EC2 simulator does not implement it).`);
      }
    }
  });
});

describe('DescribeVolumeStatus', () => {
  const statusOf = async (id: string) => (await t.ec2.send(new DescribeVolumeStatusCommand({ VolumeIds: [id] }))).VolumeStatuses?.[0];
  /** The driver's reading (cloud.go, isVolumeStatusInitializing). */
  const initializing = (item: Awaited<ReturnType<typeof statusOf>>) =>
    (item?.VolumeStatus?.Details ?? []).some((d) => d.Name === 'initialization-state' && d.Status === 'initializing');

  it('an empty volume: ok, io-enabled passed, no initialization', async () => {
    const v = await create({});
    t.clock.advance(15_000);
    const item = await statusOf(v.VolumeId!);
    expect(item).toMatchObject({ VolumeId: v.VolumeId, AvailabilityZone: ZONE, VolumeStatus: { Status: 'ok', Details: [{ Name: 'io-enabled', Status: 'passed' }, { Name: 'io-performance', Status: 'not-applicable' }] } });
    expect(item?.InitializationStatusDetails).toBeUndefined();
    expect(initializing(item)).toBe(false);
  });

  it('restored at a provisioned rate: initializing with the time left, then completed once its size has been read at that rate', async () => {
    const [source] = t.sim.seedVolumes({ zone: ZONE, sizeGiB: 10 });
    const [snap] = t.sim.seedSnapshots({ volumeId: source!.id, sizeGiB: 10 });
    const v = await create({ SnapshotId: snap!.id, Size: 10, VolumeInitializationRate: 100 });
    // 10 GiB at 100 MiB/s: 102.4 s.
    t.clock.advance(2_400);
    const early = await statusOf(v.VolumeId!);
    expect(initializing(early)).toBe(true);
    expect(early?.InitializationStatusDetails).toMatchObject({ InitializationType: 'provisioned-rate', Progress: 2, EstimatedTimeToCompleteInSeconds: 100 });
    t.clock.advance(100_000);
    const done = await statusOf(v.VolumeId!);
    expect(initializing(done)).toBe(false);
    expect(done?.VolumeStatus?.Details).toContainEqual({ Name: 'initialization-state', Status: 'completed' });
    expect(done?.InitializationStatusDetails).toMatchObject({ InitializationType: 'provisioned-rate', Progress: 100, EstimatedTimeToCompleteInSeconds: 0 });
  });

  it('a filter on the initialization state; a volume that does not exist -> InvalidVolume.NotFound; MaxResults with VolumeIds -> InvalidParameterCombination', async () => {
    const [source] = t.sim.seedVolumes({ zone: ZONE, sizeGiB: 10 });
    const [snap] = t.sim.seedSnapshots({ volumeId: source!.id, sizeGiB: 10 });
    const restored = await create({ SnapshotId: snap!.id, Size: 10 });
    const out = await t.ec2.send(new DescribeVolumeStatusCommand({ Filters: [{ Name: 'volume-status.details-status', Values: ['initializing'] }] }));
    expect(out.VolumeStatuses?.map((s) => s.VolumeId)).toEqual([restored.VolumeId]);
    expect(out.VolumeStatuses?.[0]?.InitializationStatusDetails).toMatchObject({ InitializationType: 'default' });
    expect(out.VolumeStatuses?.[0]?.InitializationStatusDetails?.EstimatedTimeToCompleteInSeconds).toBeUndefined();
    await expectEc2Error(t.ec2.send(new DescribeVolumeStatusCommand({ VolumeIds: ['vol-0123456789abcdef0'] })), 'InvalidVolume.NotFound');
    await expectEc2Error(t.ec2.send(new DescribeVolumeStatusCommand({ VolumeIds: [restored.VolumeId!], MaxResults: 5 })), 'InvalidParameterCombination');
  });
});
