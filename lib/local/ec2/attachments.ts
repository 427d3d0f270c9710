import { checkDeviceName, normalizeDevice } from './device-names.js';
import { Ec2Error, ec2Errors } from './errors.js';
import type { Attachment, Volume } from './model.js';
import type { World } from './world.js';

/** io1/io2 Multi-Attach: up to 16 instances. */
const MULTI_ATTACH_MAX = 16;

export interface AttachResult {
  volume: Volume;
  attachment: Attachment;
}

/**
 * AttachVolume, checked in the order EC2 reports problems: unknown IDs, device name, zone,
 * volume state, instance state, device in use, free slots.
 */
export function attachVolume(world: World, volumeId: string, instanceId: string, device: string): AttachResult {
  const volume = world.getVolume(volumeId);
  const instance = world.getInstance(instanceId);
  checkDeviceName(device);
  if (volume.zone !== instance.zone) {
    throw new Ec2Error(
      'InvalidVolume.ZoneMismatch',
      `The volume '${volume.id}' is not in the same availability zone as instance '${instance.id}'`,
    );
  }
  if (volume.state !== 'available' && volume.state !== 'in-use') {
    throw ec2Errors.incorrectState(`${volume.id} is not 'available'.`);
  }
  if (volume.attachments.some((a) => a.instanceId === instance.id)) {
    throw new Ec2Error('VolumeInUse', `${volume.id} is already attached to an instance`);
  }
  if (volume.attachments.length > 0 && !volume.multiAttach) {
    throw new Ec2Error('VolumeInUse', `${volume.id} is already attached to an instance`);
  }
  if (volume.attachments.length >= MULTI_ATTACH_MAX) {
    throw new Ec2Error('AttachmentLimitExceeded', `Volume ${volume.id} has reached its limit of ${MULTI_ATTACH_MAX} attachments`);
  }
  if (instance.state !== 'running' && instance.state !== 'stopped') {
    throw ec2Errors.incorrectState(`Instance '${instance.id}' is not 'running'.`);
  }
  const onInstance = world.attachmentsOn(instance.id);
  const point = normalizeDevice(device);
  if (onInstance.some(({ attachment }) => normalizeDevice(attachment.device) === point)) {
    throw ec2Errors.invalidValue(`Attachment point ${device} is already in use`);
  }
  if (onInstance.length + instance.networkInterfaces >= instance.attachmentSlots) {
    throw new Ec2Error('AttachmentLimitExceeded', `Instance '${instance.id}' has reached its attachment limit`);
  }
  const attachment: Attachment = {
    instanceId: instance.id,
    device,
    state: 'attaching',
    attachTime: world.now(),
    deleteOnTermination: false,
    epoch: world.nextSeq(),
    stuck: stuck(world, volume, instance.id) || undefined,
  };
  volume.attachments.push(attachment);
  volume.state = 'in-use';
  if (!attachment.stuck) {
    world.schedule(
      { kind: 'attached', volumeId: volume.id, instanceId: instance.id, epoch: attachment.epoch },
      world.latency('attach'),
    );
  }
  world.changed();
  return { volume, attachment };
}

function stuck(world: World, volume: Volume, instanceId: string): boolean {
  return world.env.attachFaults.some(
    (rule) =>
      (rule.instanceId === undefined || rule.instanceId === instanceId) &&
      (rule.volumeTag === undefined ||
        volume.tags.some((t) => t.key === rule.volumeTag?.key && (rule.volumeTag.value === undefined || t.value === rule.volumeTag.value))) &&
      (rule.rate === undefined || world.env.rng.next() < rule.rate),
  );
}

export interface DetachRequest {
  volumeId: string;
  instanceId?: string;
  device?: string;
  force?: boolean;
}

/**
 * DetachVolume. A volume with no attachment is `IncorrectState`, one attached elsewhere
 * `InvalidAttachment.NotFound`, one already detaching `IncorrectState`. An attachment still
 * `attaching` may be detached (how a stuck attachment is given up), as may a root volume only
 * with Force.
 */
export function detachVolume(world: World, req: DetachRequest): AttachResult {
  const volume = world.getVolume(req.volumeId);
  if (req.instanceId !== undefined) world.getInstance(req.instanceId);
  if (volume.attachments.length === 0) {
    throw ec2Errors.incorrectState(`Volume '${volume.id}' is in the '${volume.state}' state.`);
  }
  let candidates = volume.attachments;
  if (req.instanceId !== undefined) candidates = candidates.filter((a) => a.instanceId === req.instanceId);
  if (candidates.length === 0) {
    throw new Ec2Error(
      'InvalidAttachment.NotFound',
      `Volume '${volume.id}' can not be detached from '${req.instanceId}' because it is not attached`,
    );
  }
  if (req.device !== undefined) {
    const point = normalizeDevice(req.device);
    candidates = candidates.filter((a) => normalizeDevice(a.device) === point);
    if (candidates.length === 0) {
      throw new Ec2Error(
        'InvalidAttachment.NotFound',
        `The volume '${volume.id}' is not attached to instance '${req.instanceId ?? ''}' as device '${req.device}'`,
      );
    }
  }
  if (candidates.length > 1) {
    throw ec2Errors.combination(`Volume '${volume.id}' is attached to more than one instance; specify the instance.`);
  }
  const attachment = candidates[0] as Attachment;
  if (attachment.state === 'detaching') {
    throw ec2Errors.incorrectState(`Volume '${volume.id}' is in the 'detaching' state.`);
  }
  const instance = world.instances.get(attachment.instanceId);
  if (instance && attachment.device === instance.rootDeviceName && instance.state === 'running' && !req.force) {
    throw new Ec2Error('OperationNotPermitted', `Unable to detach root volume '${volume.id}' from instance '${instance.id}'`);
  }
  attachment.state = 'detaching';
  attachment.stuck = undefined;
  world.schedule(
    { kind: 'detached', volumeId: volume.id, instanceId: attachment.instanceId, epoch: attachment.epoch },
    req.force ? 0 : world.latency('detach'),
  );
  world.changed();
  return { volume, attachment };
}
