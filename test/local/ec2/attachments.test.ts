import {
  AttachVolumeCommand,
  CreateVolumeCommand,
  DeleteVolumeCommand,
  DescribeInstancesCommand,
  DescribeVolumesCommand,
  DetachVolumeCommand,
  RunInstancesCommand,
  TerminateInstancesCommand,
} from '@aws-sdk/client-ec2';
import { describe, expect, it } from 'vitest';
import { eventually, expectEc2Error, simPerTest, startTestSim, ZONE } from './helpers.js';

const t = simPerTest();

async function availableVolume(input: { zone?: string; type?: 'io2' | 'gp3'; multi?: boolean } = {}): Promise<string> {
  const v = await t.ec2.send(
    new CreateVolumeCommand({
      AvailabilityZone: input.zone ?? ZONE,
      Size: 10,
      VolumeType: input.type ?? 'gp3',
      ...(input.type === 'io2' ? { Iops: 1000 } : {}),
      MultiAttachEnabled: input.multi,
    }),
  );
  t.clock.advance(15_000);
  return v.VolumeId!;
}
const attach = (VolumeId: string, InstanceId: string, Device = '/dev/xvdaa') =>
  t.ec2.send(new AttachVolumeCommand({ VolumeId, InstanceId, Device }));
const volume = async (id: string) => (await t.ec2.send(new DescribeVolumesCommand({ VolumeIds: [id] }))).Volumes![0]!;

describe('AttachVolume / DetachVolume', () => {
  it('attach -> attaching, then attached (1-4 s), in-use, and listed in the instance block devices', async () => {
    const node = t.sim.runInstance({ zone: ZONE });
    const vol = await availableVolume();
    const out = await attach(vol, node.id);
    expect(out).toMatchObject({ VolumeId: vol, InstanceId: node.id, Device: '/dev/xvdaa', State: 'attaching' });
    let v = await volume(vol);
    expect(v.State).toBe('in-use');
    expect(v.Attachments?.[0]?.State).toBe('attaching');
    t.clock.advance(999);
    expect((await volume(vol)).Attachments?.[0]?.State).toBe('attaching');
    t.clock.advance(3001);
    v = await volume(vol);
    expect(v.Attachments?.[0]).toMatchObject({ State: 'attached', InstanceId: node.id, Device: '/dev/xvdaa', DeleteOnTermination: false });
    const inst = (await t.ec2.send(new DescribeInstancesCommand({ InstanceIds: [node.id] }))).Reservations![0]!.Instances![0]!;
    expect(inst.BlockDeviceMappings?.map((m) => [m.DeviceName, m.Ebs?.VolumeId === vol ? 'vol' : 'root', m.Ebs?.Status])).toEqual([
      ['/dev/xvda', 'root', 'attached'],
      ['/dev/xvdaa', 'vol', 'attached'],
    ]);
  });

  it('detach -> detaching, then available with no attachment', async () => {
    const node = t.sim.runInstance({ zone: ZONE });
    const vol = await availableVolume();
    await attach(vol, node.id);
    t.clock.advance(4000);
    const out = await t.ec2.send(new DetachVolumeCommand({ VolumeId: vol, InstanceId: node.id }));
    expect(out.State).toBe('detaching');
    expect((await volume(vol)).Attachments?.[0]?.State).toBe('detaching');
    t.clock.advance(4000);
    const v = await volume(vol);
    expect(v.State).toBe('available');
    expect(v.Attachments).toEqual([]);
  });

  it('attach to an unknown instance -> InvalidInstanceID.NotFound', async () => {
    const vol = await availableVolume();
    await expectEc2Error(attach(vol, 'i-0123456789abcdef0'), 'InvalidInstanceID.NotFound');
  });

  it('attach an unknown volume -> InvalidVolume.NotFound', async () => {
    const node = t.sim.runInstance({ zone: ZONE });
    await expectEc2Error(attach('vol-0123456789abcdef0', node.id), 'InvalidVolume.NotFound');
  });

  it.each(['/dev/foo', '/dev/xvdaaa', 'sdz9z', '/dev/nvme1n1'])('device name %s -> InvalidParameterValue', async (device) => {
    const node = t.sim.runInstance({ zone: ZONE });
    const vol = await availableVolume();
    await expectEc2Error(attach(vol, node.id, device), 'InvalidParameterValue');
  });

  it('device already used on that instance -> InvalidParameterValue naming the attachment point', async () => {
    const node = t.sim.runInstance({ zone: ZONE });
    const a = await availableVolume();
    const b = await availableVolume();
    await attach(a, node.id, '/dev/xvdaa');
    const err = await expectEc2Error(attach(b, node.id, '/dev/xvdaa'), 'InvalidParameterValue');
    expect(err.message).toBe('Attachment point /dev/xvdaa is already in use');
    await expectEc2Error(attach(b, node.id, '/dev/xvda'), 'InvalidParameterValue');
  });

  it('volume in another zone -> InvalidVolume.ZoneMismatch', async () => {
    const node = t.sim.runInstance({ zone: ZONE });
    const vol = await availableVolume({ zone: 'us-east-1b' });
    await expectEc2Error(attach(vol, node.id), 'InvalidVolume.ZoneMismatch');
  });

  it('volume attached elsewhere -> VolumeInUse; io2 multi-attach -> both attached', async () => {
    const n1 = t.sim.runInstance({ zone: ZONE });
    const n2 = t.sim.runInstance({ zone: ZONE });
    const single = await availableVolume();
    await attach(single, n1.id);
    await expectEc2Error(attach(single, n2.id, '/dev/xvdab'), 'VolumeInUse');
    const multi = await availableVolume({ type: 'io2', multi: true });
    await attach(multi, n1.id, '/dev/xvdac');
    await attach(multi, n2.id, '/dev/xvdac');
    t.clock.advance(4000);
    expect((await volume(multi)).Attachments?.map((a) => a.State)).toEqual(['attached', 'attached']);
  });

  it('volume still creating -> IncorrectState', async () => {
    const node = t.sim.runInstance({ zone: ZONE });
    const v = await t.ec2.send(new CreateVolumeCommand({ AvailabilityZone: ZONE, Size: 1 }));
    await expectEc2Error(attach(v.VolumeId!, node.id), 'IncorrectState');
  });

  it('attach past the slots (28 - root - ENI = 26 data volumes) -> AttachmentLimitExceeded', async () => {
    const node = t.sim.runInstance({ zone: ZONE });
    const devices = [...'abcdefghijklmnopqrstuvwxyz'].map((c) => `/dev/xvda${c}`);
    for (const device of devices) {
      const out = await t.sim.call({ Action: 'CreateVolume', AvailabilityZone: ZONE, Size: '1' });
      expect(out.status).toBe(200);
    }
    t.clock.advance(15_000);
    const vols = t.sim.volumes().filter((v) => v.attachments.length === 0);
    for (const [n, device] of devices.entries()) await attach(vols[n]!.id, node.id, device);
    const extra = await availableVolume();
    await expectEc2Error(attach(extra, node.id, '/dev/xvdba'), 'AttachmentLimitExceeded');
  });

  it('instance with 4 slots -> the third data volume is refused', async () => {
    const node = t.sim.runInstance({ zone: ZONE, attachmentSlots: 4 });
    await attach(await availableVolume(), node.id, '/dev/xvdaa');
    await attach(await availableVolume(), node.id, '/dev/xvdab');
    await expectEc2Error(attach(await availableVolume(), node.id, '/dev/xvdac'), 'AttachmentLimitExceeded');
  });

  it('delete while attached -> VolumeInUse', async () => {
    const node = t.sim.runInstance({ zone: ZONE });
    const vol = await availableVolume();
    await attach(vol, node.id);
    await expectEc2Error(t.ec2.send(new DeleteVolumeCommand({ VolumeId: vol })), 'VolumeInUse');
  });

  it('detach a volume that is not attached -> IncorrectState', async () => {
    const vol = await availableVolume();
    await expectEc2Error(t.ec2.send(new DetachVolumeCommand({ VolumeId: vol })), 'IncorrectState');
  });

  it('detach while already detaching -> IncorrectState', async () => {
    const node = t.sim.runInstance({ zone: ZONE });
    const vol = await availableVolume();
    await attach(vol, node.id);
    t.clock.advance(4000);
    await t.ec2.send(new DetachVolumeCommand({ VolumeId: vol }));
    await expectEc2Error(t.ec2.send(new DetachVolumeCommand({ VolumeId: vol })), 'IncorrectState');
  });

  it('detach from an instance it is not attached to -> InvalidAttachment.NotFound', async () => {
    const n1 = t.sim.runInstance({ zone: ZONE });
    const n2 = t.sim.runInstance({ zone: ZONE });
    const vol = await availableVolume();
    await attach(vol, n1.id);
    await expectEc2Error(
      t.ec2.send(new DetachVolumeCommand({ VolumeId: vol, InstanceId: n2.id })),
      'InvalidAttachment.NotFound',
    );
  });

  it('attachment stuck by a fault rule -> stays attaching until detached', async () => {
    t.sim.configure({ attachFaults: [{ outcome: 'stuck' }] });
    const node = t.sim.runInstance({ zone: ZONE });
    const vol = await availableVolume();
    await attach(vol, node.id);
    t.clock.advance(600_000);
    expect((await volume(vol)).Attachments?.[0]?.State).toBe('attaching');
    await t.ec2.send(new DetachVolumeCommand({ VolumeId: vol, InstanceId: node.id }));
    t.clock.advance(4000);
    expect((await volume(vol)).State).toBe('available');
  });
});

describe('instances', () => {
  it('RunInstances -> pending then running, in the zone, tagged, with a root volume at /dev/xvda', async () => {
    const out = await t.ec2.send(
      new RunInstancesCommand({
        ImageId: 'ami-12345678',
        InstanceType: 'm5.large',
        MinCount: 2,
        MaxCount: 2,
        Placement: { AvailabilityZone: 'us-east-1b' },
        TagSpecifications: [{ ResourceType: 'instance', Tags: [{ Key: 'Name', Value: 'node' }] }],
      }),
    );
    expect(out.Instances).toHaveLength(2);
    const first = out.Instances![0]!;
    expect(first).toMatchObject({
      State: { Name: 'pending', Code: 0 },
      Placement: { AvailabilityZone: 'us-east-1b' },
      InstanceType: 'm5.large',
      RootDeviceName: '/dev/xvda',
      Tags: [{ Key: 'Name', Value: 'node' }],
    });
    expect(first.BlockDeviceMappings?.[0]?.DeviceName).toBe('/dev/xvda');
    t.clock.advance(15_000);
    const described = await t.ec2.send(new DescribeInstancesCommand({ InstanceIds: [first.InstanceId!] }));
    expect(described.Reservations?.[0]?.Instances?.[0]?.State).toEqual({ Code: 16, Name: 'running' });
  });

  it('TerminateInstances -> shutting-down, then terminated; root deleted, data volume detached', async () => {
    const node = t.sim.runInstance({ zone: ZONE });
    const root = t.sim.volumes().find((v) => v.attachments[0]?.instanceId === node.id)!;
    const vol = await availableVolume();
    await attach(vol, node.id);
    t.clock.advance(4000);
    const out = await t.ec2.send(new TerminateInstancesCommand({ InstanceIds: [node.id] }));
    expect(out.TerminatingInstances?.[0]).toMatchObject({
      InstanceId: node.id,
      PreviousState: { Name: 'running', Code: 16 },
      CurrentState: { Name: 'shutting-down', Code: 32 },
    });
    t.clock.advance(10_000);
    const inst = (await t.ec2.send(new DescribeInstancesCommand({ InstanceIds: [node.id] }))).Reservations![0]!.Instances![0]!;
    expect(inst.State?.Name).toBe('terminated');
    expect(t.sim.volume(root.id)).toBeUndefined();
    expect((await volume(vol)).State).toBe('available');
  });

  it('attach to a pending instance -> IncorrectState', async () => {
    const vol = await availableVolume();
    const pending = t.sim.runInstance({ zone: ZONE, running: false });
    await expectEc2Error(attach(vol, pending.id), 'IncorrectState');
  });

  it('DescribeInstances filters: instance-id, tag:K, tag-key, availability-zone, instance-state-name', async () => {
    const a = t.sim.runInstance({ zone: 'us-east-1a', instanceTags: [{ key: 'role', value: 'node' }] });
    const b = t.sim.runInstance({ zone: 'us-east-1b', instanceTags: [{ key: 'role', value: 'master' }] });
    const c = t.sim.runInstance({ zone: 'us-east-1b', running: false });
    const ids = async (Filters: { Name: string; Values: string[] }[]) =>
      ((await t.ec2.send(new DescribeInstancesCommand({ Filters }))).Reservations ?? [])
        .flatMap((r) => r.Instances ?? [])
        .map((i) => i.InstanceId)
        .sort();
    expect(await ids([{ Name: 'instance-id', Values: [a.id] }])).toEqual([a.id]);
    expect(await ids([{ Name: 'tag:role', Values: ['master'] }])).toEqual([b.id]);
    expect(await ids([{ Name: 'tag-key', Values: ['role'] }])).toEqual([a.id, b.id].sort());
    expect(await ids([{ Name: 'availability-zone', Values: ['us-east-1b'] }])).toEqual([b.id, c.id].sort());
    expect(await ids([{ Name: 'instance-state-name', Values: ['pending'] }])).toEqual([c.id]);
    await expectEc2Error(t.ec2.send(new DescribeInstancesCommand({ InstanceIds: ['i-0123456789abcdef0'] })), 'InvalidInstanceID.NotFound');
    await expectEc2Error(t.ec2.send(new DescribeInstancesCommand({ InstanceIds: [a.id], MaxResults: 5 })), 'InvalidParameterCombination');
  });
});

describe('over real time at scale 100', () => {
  it('create -> available -> attach -> attached -> detach -> available -> delete -> gone', async () => {
    const real = await startTestSim({ timeScale: 100 });
    try {
      const node = real.sim.runInstance({ zone: ZONE });
      const v = await real.ec2.send(new CreateVolumeCommand({ AvailabilityZone: ZONE, Size: 5, VolumeType: 'gp3' }));
      const id = v.VolumeId!;
      const get = async () => (await real.ec2.send(new DescribeVolumesCommand({ VolumeIds: [id] }))).Volumes![0]!;
      await eventually(get, (x) => x.State === 'available');
      await real.ec2.send(new AttachVolumeCommand({ VolumeId: id, InstanceId: node.id, Device: '/dev/xvdba' }));
      await eventually(get, (x) => x.Attachments?.[0]?.State === 'attached');
      await real.ec2.send(new DetachVolumeCommand({ VolumeId: id }));
      await eventually(get, (x) => x.State === 'available');
      await real.ec2.send(new DeleteVolumeCommand({ VolumeId: id }));
      await eventually(
        () => get().then(() => 'present', (e: Error) => e.name),
        (x) => x === 'InvalidVolume.NotFound',
      );
    } finally {
      await real.close();
    }
  });
});
