/**
 * An in-memory Ec2Gateway for the reconciler tests: volumes and instances in maps, every call
 * recorded, errors scripted per verb. It follows the gateway's contract (findDiskByName sees
 * only this cluster's volumes; detach and delete of something gone resolve), not EC2's timing:
 * tests choose the state a new volume or attachment starts in.
 */
import { Ec2Error, type AttachmentState, type CreateDiskRequest, type Disk, type DiskState, type Ec2ErrorKind, type Ec2Gateway, type Instance } from '../../lib/ec2/types.js';

export type Verb = keyof Ec2Gateway;
export interface Call {
  verb: Verb;
  args: unknown[];
}

const MUTATIONS: readonly Verb[] = ['createDisk', 'attachDisk', 'detachDisk', 'deleteDisk'];

const isDead = (disk: Disk) => disk.state === 'deleting' || disk.state === 'deleted';

export class FakeGateway implements Ec2Gateway {
  readonly volumes = new Map<string, Disk>();
  readonly instances = new Map<string, Instance>();
  readonly calls: Call[] = [];
  /** The state CreateVolume leaves a new volume in. */
  createdState: DiskState = 'creating';
  /** The state AttachVolume reports. */
  attachState: AttachmentState = 'attaching';
  #nextId = 1;
  readonly #scripted = new Map<Verb, Error[]>();

  constructor(readonly clusterId = 'alpha') {}

  /** The next `times` calls of `verb` throw `error` instead of doing anything. */
  fail(verb: Verb, error: Error, times = 1): this {
    const queue = this.#scripted.get(verb) ?? [];
    for (let i = 0; i < times; i++) queue.push(error);
    this.#scripted.set(verb, queue);
    return this;
  }

  addVolume(volume: Partial<Disk> & Pick<Disk, 'volumeId'>): Disk {
    const disk: Disk = {
      zone: 'us-east-1a',
      sizeGiB: 10,
      state: 'available',
      type: 'gp3',
      encrypted: false,
      multiAttach: false,
      tags: { [`kubernetes.io/cluster/${this.clusterId}`]: 'owned', 'ebs.csi.aws.com/cluster': 'true' },
      attachments: [],
      ...volume,
    };
    this.volumes.set(disk.volumeId, disk);
    return disk;
  }

  addInstance(instance: Partial<Instance> & Pick<Instance, 'instanceId'>): Instance {
    const record: Instance = {
      zone: 'us-east-1a',
      state: 'running',
      tags: { [`kubernetes.io/cluster/${this.clusterId}`]: 'owned' },
      devicesInUse: ['/dev/xvda'],
      ...instance,
    };
    this.instances.set(record.instanceId, record);
    return record;
  }

  /** Calls that change EC2. */
  get mutations(): Call[] {
    return this.calls.filter((c) => MUTATIONS.includes(c.verb));
  }

  callsOf(verb: Verb): Call[] {
    return this.calls.filter((c) => c.verb === verb);
  }

  #enter(verb: Verb, ...args: unknown[]): void {
    this.calls.push({ verb, args });
    const error = this.#scripted.get(verb)?.shift();
    if (error) throw error;
  }

  /** As the gateway answers: a live volume before a failed one, a failed one before one being deleted. */
  #byName(name: string): Disk | undefined {
    const rank = (d: Disk) => (isDead(d) ? 2 : d.state === 'error' ? 1 : 0);
    return [...this.volumes.values()]
      .filter((d) => d.tags.CSIVolumeName === name && d.tags[`kubernetes.io/cluster/${this.clusterId}`] === 'owned')
      .sort((a, b) => rank(a) - rank(b))[0];
  }

  async createDisk(request: CreateDiskRequest): Promise<Disk> {
    this.#enter('createDisk', request);
    const existing = this.#byName(request.name);
    // A dead volume's token is spent: the gateway creates the next generation.
    if (existing && !isDead(existing)) return structuredClone(existing);
    const disk: Disk = {
      volumeId: `vol-${String(this.#nextId++).padStart(17, '0')}`,
      zone: request.zone,
      sizeGiB: request.sizeGiB,
      state: this.createdState,
      type: request.type,
      ...(request.iops !== undefined && { iops: request.iops }),
      ...(request.throughput !== undefined && { throughput: request.throughput }),
      encrypted: request.encrypted ?? false,
      ...(request.kmsKeyId !== undefined && { kmsKeyId: request.kmsKeyId }),
      multiAttach: request.multiAttach ?? false,
      tags: { ...request.tags },
      attachments: [],
    };
    this.volumes.set(disk.volumeId, disk);
    return structuredClone(disk);
  }

  async findDiskByName(name: string): Promise<Disk | undefined> {
    this.#enter('findDiskByName', name);
    const disk = this.#byName(name);
    return disk && structuredClone(disk);
  }

  async getDisk(volumeId: string): Promise<Disk | undefined> {
    this.#enter('getDisk', volumeId);
    const disk = this.volumes.get(volumeId);
    return disk && structuredClone(disk);
  }

  async getInstance(instanceId: string): Promise<Instance | undefined> {
    this.#enter('getInstance', instanceId);
    const instance = this.instances.get(instanceId);
    return instance && structuredClone(instance);
  }

  async attachDisk(volumeId: string, instanceId: string, device: string): Promise<AttachmentState> {
    this.#enter('attachDisk', volumeId, instanceId, device);
    const disk = this.volumes.get(volumeId);
    const instance = this.instances.get(instanceId);
    if (!disk || !instance) throw new Ec2Error('notFound', 'InvalidVolume.NotFound', `EC2 AttachVolume: ${volumeId} or ${instanceId} not found`);
    if (instance.devicesInUse.includes(device)) {
      throw ec2Error('deviceInUse', 'InvalidParameterValue', `Attachment point ${device} is already in use`);
    }
    instance.devicesInUse.push(device);
    disk.attachments.push({ instanceId, device, state: this.attachState });
    disk.state = 'in-use';
    return this.attachState;
  }

  async detachDisk(volumeId: string, instanceId: string): Promise<void> {
    this.#enter('detachDisk', volumeId, instanceId);
    const disk = this.volumes.get(volumeId);
    for (const attachment of disk?.attachments ?? []) if (attachment.instanceId === instanceId) attachment.state = 'detaching';
  }

  async deleteDisk(volumeId: string): Promise<void> {
    this.#enter('deleteDisk', volumeId);
    const disk = this.volumes.get(volumeId);
    if (!disk) return;
    if (disk.attachments.length > 0) throw ec2Error('inUse', 'VolumeInUse', `Volume ${volumeId} is attached`);
    disk.state = 'deleting';
  }
}

export function ec2Error(kind: Ec2ErrorKind, code: string, message = code): Ec2Error {
  return new Ec2Error(kind, code, `EC2: ${code}: ${message}`);
}

export const throttled = () => ec2Error('transient', 'RequestLimitExceeded', 'Request limit exceeded.');
