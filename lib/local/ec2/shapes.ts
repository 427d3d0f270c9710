import { INSTANCE_STATE_CODES, privateDnsName } from './instances.js';
import { instanceTypeInfo, type InstanceTypeInfo } from './instance-types.js';
import type { VolumeStatus } from './volume-status.js';
import type { Attachment, FastSnapshotRestore, Instance, Snapshot, Tag, Volume, VolumeModification } from './model.js';
import { snapshotProgress } from './snapshots.js';
import type { XmlObject } from './xml.js';
import type { ZoneInfo } from './config.js';
import type { World } from './world.js';

/** Element names follow botocore's ec2 model (locationName of each member). */

export const tagSet = (tags: readonly Tag[]): XmlObject[] => tags.map((t) => ({ key: t.key, value: t.value }));

/** AttachVolume and DetachVolume answer without deleteOnTermination; DescribeVolumes with it. */
export function attachmentXml(volumeId: string, a: Attachment, withDeleteOnTermination = true): XmlObject {
  return {
    attachTime: new Date(a.attachTime),
    device: a.device,
    instanceId: a.instanceId,
    status: a.state,
    volumeId,
    deleteOnTermination: withDeleteOnTermination ? a.deleteOnTermination : undefined,
  };
}

export function volumeXml(v: Volume): XmlObject {
  return {
    volumeId: v.id,
    size: v.size,
    snapshotId: v.snapshotId ?? '',
    availabilityZone: v.zone,
    status: v.state,
    createTime: new Date(v.createTime),
    attachmentSet: v.attachments.map((a) => attachmentXml(v.id, a)),
    tagSet: v.tags.length > 0 ? tagSet(v.tags) : undefined,
    volumeType: v.type,
    iops: v.iops,
    throughput: v.throughput,
    encrypted: v.encrypted,
    kmsKeyId: v.kmsKeyId,
    multiAttachEnabled: v.multiAttach,
    sourceVolumeId: v.sourceVolumeId,
    fastRestored: v.snapshotId ? (v.fastRestored ?? false) : undefined,
    volumeInitializationRate: v.volumeInitializationRate,
  };
}

export function snapshotXml(s: Snapshot, now: number, ownerId: string): XmlObject {
  return {
    snapshotId: s.id,
    volumeId: s.volumeId,
    status: s.state,
    statusMessage: s.statusMessage,
    startTime: new Date(s.startTime),
    progress: snapshotProgress(s, now),
    ownerId,
    description: s.description,
    volumeSize: s.volumeSize,
    encrypted: s.encrypted,
    kmsKeyId: s.kmsKeyId,
    tagSet: s.tags.length > 0 ? tagSet(s.tags) : undefined,
    storageTier: 'standard',
    completionTime: s.completionTime === undefined ? undefined : new Date(s.completionTime),
  };
}

/** A SnapshotInfo of CreateSnapshots' snapshotSet (its own shape: `state`, not `status`). */
export function snapshotInfoXml(s: Snapshot, world: { now(): number; env: { accountId: string }; volumes: ReadonlyMap<string, { zone: string }> }): XmlObject {
  return {
    snapshotId: s.id,
    volumeId: s.volumeId,
    state: s.state,
    startTime: new Date(s.startTime),
    progress: snapshotProgress(s, world.now()),
    ownerId: world.env.accountId,
    description: s.description,
    volumeSize: s.volumeSize,
    encrypted: s.encrypted,
    tagSet: s.tags.length > 0 ? tagSet(s.tags) : undefined,
    availabilityZone: world.volumes.get(s.volumeId)?.zone,
  };
}

export function fastRestoreXml(f: FastSnapshotRestore, zoneId: string | undefined, ownerId: string): XmlObject {
  return {
    snapshotId: f.snapshotId,
    availabilityZone: f.zone,
    availabilityZoneId: zoneId,
    state: f.state,
    stateTransitionReason: f.stateTransitionReason,
    ownerId,
    enablingTime: new Date(f.enablingTime),
    optimizingTime: f.optimizingTime === undefined ? undefined : new Date(f.optimizingTime),
    enabledTime: f.enabledTime === undefined ? undefined : new Date(f.enabledTime),
  };
}

export function modificationXml(m: VolumeModification): XmlObject {
  return {
    volumeId: m.volumeId,
    modificationState: m.state,
    targetSize: m.target.size,
    targetIops: m.target.iops,
    targetVolumeType: m.target.type,
    targetThroughput: m.target.throughput,
    targetMultiAttachEnabled: m.target.multiAttach,
    originalSize: m.original.size,
    originalIops: m.original.iops,
    originalVolumeType: m.original.type,
    originalThroughput: m.original.throughput,
    originalMultiAttachEnabled: m.original.multiAttach,
    progress: m.progress,
    startTime: new Date(m.startTime),
    endTime: m.endTime === undefined ? undefined : new Date(m.endTime),
  };
}

export const instanceStateXml = (state: Instance['state']): XmlObject => ({
  code: INSTANCE_STATE_CODES[state],
  name: state,
});

export function instanceXml(world: World, i: Instance, launchIndex = 0): XmlObject {
  const mappings = world
    .attachmentsOn(i.id)
    .sort((a, b) => a.attachment.epoch - b.attachment.epoch)
    .map(({ volume, attachment }) => ({
      deviceName: attachment.device,
      ebs: {
        volumeId: volume.id,
        status: attachment.state,
        attachTime: new Date(attachment.attachTime),
        deleteOnTermination: attachment.deleteOnTermination,
      },
    }));
  const live = i.state !== 'terminated';
  return {
    instanceId: i.id,
    imageId: i.imageId,
    instanceState: instanceStateXml(i.state),
    privateDnsName: live ? privateDnsName(world, i) : '',
    dnsName: '',
    reason: i.stateReason ?? '',
    amiLaunchIndex: launchIndex,
    productCodes: [],
    instanceType: i.instanceType,
    launchTime: new Date(i.launchTime),
    placement: { availabilityZone: i.zone, groupName: '', tenancy: 'default' },
    monitoring: { state: 'disabled' },
    privateIpAddress: live ? i.privateIp : undefined,
    groupSet: [],
    architecture: 'x86_64',
    rootDeviceType: 'ebs',
    rootDeviceName: i.rootDeviceName,
    blockDeviceMapping: mappings,
    virtualizationType: 'hvm',
    clientToken: i.clientToken ?? '',
    tagSet: i.tags.length > 0 ? tagSet(i.tags) : undefined,
    hypervisor: instanceTypeInfo(i.instanceType)?.hypervisor ?? 'xen',
    networkInterfaceSet: [],
    ebsOptimized: false,
    enaSupport: true,
  };
}

/** Instances grouped by reservation, in the order given. */
export function reservationsXml(world: World, instances: readonly Instance[]): XmlObject[] {
  const groups = new Map<string, Instance[]>();
  for (const i of instances) {
    const g = groups.get(i.reservationId) ?? [];
    g.push(i);
    groups.set(i.reservationId, g);
  }
  return [...groups].map(([reservationId, members]) => ({
    reservationId,
    ownerId: world.env.accountId,
    groupSet: [],
    instancesSet: members.map((i) => instanceXml(world, i)),
  }));
}

export function zoneXml(region: string, z: ZoneInfo): XmlObject {
  return {
    optInStatus: 'opt-in-not-required',
    zoneName: z.name,
    zoneId: z.id,
    zoneState: 'available',
    regionName: region,
    groupName: region,
    networkBorderGroup: region,
    zoneType: 'availability-zone',
    messageSet: [],
  };
}

/** An InstanceTypeInfo (members in botocore's order, as the table holds them). */
export function instanceTypeXml(t: InstanceTypeInfo): XmlObject {
  return structuredClone(t) as unknown as XmlObject;
}

/** A VolumeStatusItem. */
export function volumeStatusXml(s: VolumeStatus, zoneId: string | undefined): XmlObject {
  const init = s.initialization;
  return {
    actionsSet: [],
    availabilityZone: s.volume.zone,
    eventsSet: [],
    volumeId: s.volume.id,
    volumeStatus: { details: s.details.map((d) => ({ name: d.name, status: d.status })), status: s.status },
    attachmentStatuses: s.volume.attachments.map((a) => ({ instanceId: a.instanceId })),
    initializationStatusDetails: init && {
      initializationType: init.type,
      progress: init.progress,
      estimatedTimeToCompleteInSeconds: init.secondsLeft,
    },
    availabilityZoneId: zoneId,
  };
}
