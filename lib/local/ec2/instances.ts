import { ec2Errors } from './errors.js';
import { compileFilters, type FilterTable } from './filters.js';
import type { Instance, InstanceStateName, Tag, Volume } from './model.js';
import type { QueryFilter } from './query.js';
import type { World } from './world.js';

export const INSTANCE_STATE_CODES: Readonly<Record<InstanceStateName, number>> = {
  pending: 0,
  running: 16,
  'shutting-down': 32,
  terminated: 48,
  stopping: 64,
  stopped: 80,
};

const ROOT_DEVICE = '/dev/xvda';
const ROOT_SIZE_GIB = 8;

export interface RunInstancesRequest {
  imageId: string;
  instanceType?: string;
  zone?: string;
  count: number;
  instanceTags?: Tag[];
  volumeTags?: Tag[];
  clientToken?: string;
  /** Skip `pending`, for setting up nodes in-process. */
  running?: boolean;
  /** Attachment slots shared by volumes (root included) and ENIs; default from the simulator. */
  attachmentSlots?: number;
  networkInterfaces?: number;
}

/**
 * RunInstances: each instance boots from an 8 GiB gp3 root volume at /dev/xvda that is
 * deleted with it, and has one network interface, both taking attachment slots.
 */
export function runInstances(world: World, req: RunInstancesRequest): Instance[] {
  if (req.clientToken !== undefined) {
    const earlier = [...world.instances.values()].filter((i) => i.clientToken === req.clientToken);
    if (earlier.length > 0) return earlier;
  }
  const zones = world.env.zones;
  const zone = req.zone ?? (zones[0]?.name as string);
  if (!world.zone(zone)) throw ec2Errors.invalidValue(`Invalid availability zone: [${zone}]`);
  if (req.count < 1) throw ec2Errors.invalidValue(`Value (${req.count}) for parameter count is invalid.`);
  const reservationId = world.newId('r');
  const out: Instance[] = [];
  for (let n = 0; n < req.count; n++) {
    const seq = world.nextSeq();
    const instance: Instance = {
      id: world.newId('i'),
      seq,
      reservationId,
      imageId: req.imageId,
      instanceType: req.instanceType ?? 'm1.small',
      zone,
      state: req.running ? 'running' : 'pending',
      launchTime: world.now(),
      tags: req.instanceTags ?? [],
      privateIp: `10.0.${(seq >> 8) & 255}.${seq & 255}`,
      rootDeviceName: ROOT_DEVICE,
      attachmentSlots: req.attachmentSlots ?? world.env.attachmentSlots,
      networkInterfaces: req.networkInterfaces ?? 1,
      clientToken: req.clientToken,
    };
    world.instances.set(instance.id, instance);
    const root: Volume = {
      id: world.newId('vol'),
      seq: world.nextSeq(),
      zone,
      type: 'gp3',
      size: ROOT_SIZE_GIB,
      iops: 3000,
      throughput: 125,
      encrypted: false,
      multiAttach: false,
      state: 'in-use',
      createTime: world.now(),
      tags: req.volumeTags ?? [],
      attachments: [
        {
          instanceId: instance.id,
          device: ROOT_DEVICE,
          state: 'attached',
          attachTime: world.now(),
          deleteOnTermination: true,
          epoch: world.nextSeq(),
        },
      ],
    };
    world.volumes.set(root.id, root);
    if (!req.running) world.schedule({ kind: 'instance-running', instanceId: instance.id }, world.latency('instanceStart'));
    out.push(instance);
  }
  world.changed();
  return out;
}

export interface StateChange {
  instance: Instance;
  previous: InstanceStateName;
}

/** TerminateInstances: `shutting-down`, then `terminated` with its volumes detached or deleted. */
export function terminateInstances(world: World, ids: readonly string[]): StateChange[] {
  if (ids.length === 0) throw ec2Errors.missing('InstanceId');
  const instances = ids.map((id) => world.getInstance(id));
  const changes = instances.map((instance) => {
    const previous = instance.state;
    if (previous !== 'terminated' && previous !== 'shutting-down') {
      instance.state = 'shutting-down';
      world.schedule({ kind: 'instance-terminated', instanceId: instance.id }, world.latency('instanceTerminate'));
    }
    return { instance, previous };
  });
  world.changed();
  return changes;
}

const instanceFilters = (world: World): FilterTable<Instance> => ({
  fields: {
    'instance-id': (i) => [i.id],
    'availability-zone': (i) => [i.zone],
    'instance-state-name': (i) => [i.state],
    'instance-state-code': (i) => [String(INSTANCE_STATE_CODES[i.state])],
    'instance-type': (i) => [i.instanceType],
    'image-id': (i) => [i.imageId],
    'reservation-id': (i) => [i.reservationId],
    'private-ip-address': (i) => [i.privateIp],
    'private-dns-name': (i) => [privateDnsName(world, i)],
    'client-token': (i) => (i.clientToken ? [i.clientToken] : []),
    'block-device-mapping.volume-id': (i) => world.attachmentsOn(i.id).map(({ volume }) => volume.id),
    'block-device-mapping.device-name': (i) => world.attachmentsOn(i.id).map(({ attachment }) => attachment.device),
    'block-device-mapping.status': (i) => world.attachmentsOn(i.id).map(({ attachment }) => attachment.state),
  },
  tags: (i) => i.tags,
});

export function findInstances(world: World, ids: readonly string[], filters: readonly QueryFilter[]): Instance[] {
  const keep = compileFilters(filters, instanceFilters(world));
  const base = ids.length > 0 ? ids.map((id) => world.getInstance(id)) : [...world.instances.values()];
  return [...new Set(base)].sort((a, b) => a.seq - b.seq).filter(keep);
}

export function privateDnsName(world: World, instance: Instance): string {
  const host = `ip-${instance.privateIp.replace(/\./g, '-')}`;
  return world.env.region === 'us-east-1' ? `${host}.ec2.internal` : `${host}.${world.env.region}.compute.internal`;
}
