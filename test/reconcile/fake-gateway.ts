/**
 * An in-memory Ec2Gateway for the reconciler tests: volumes and instances in maps, every call
 * recorded, errors scripted per verb. It follows the gateway's contract — the suite the
 * SDK-backed gateway passes runs against it too (test/ec2/gateway-fake.test.ts) — but not
 * EC2's timing: tests choose the state a new volume or attachment starts in, and
 * `settle()` moves every transition on, as time passing in EC2 would.
 */
import { identityTags, snapshotIdentityTags, TagKeys } from '../../lib/contract/tags.js';
import { oldestFirst } from '../../lib/ec2/snapshots.js';
import {
  Ec2Error,
  isGone,
  lookupRank,
  type AttachmentState,
  type CopyDiskRequest,
  type CreateDiskRequest,
  type CreateSnapshotRequest,
  type CreateSnapshotsRequest,
  type Disk,
  type DiskChange,
  type RegionSnapshots,
  type DiskInitialization,
  type DiskModification,
  type DiskState,
  type Ec2ErrorKind,
  type Ec2Gateway,
  type Instance,
  type Snapshot,
  type SnapshotState,
  type Zone,
} from '../../lib/ec2/types.js';

export type Verb = keyof Ec2Gateway;
export interface Call {
  verb: Verb;
  args: unknown[];
}

const MUTATIONS: readonly Verb[] = [
  'createDisk',
  'attachDisk',
  'detachDisk',
  'deleteDisk',
  'createSnapshot',
  'createSnapshots',
  'deleteSnapshot',
  'copyDisk',
  'enableFastSnapshotRestores',
  'modifyDisk',
  'tagDisk',
  'untagDisk',
];

/** EC2's rolling window in which a volume may be modified four times. */
export const FAKE_MODIFICATION_WINDOW_MS = 24 * 60 * 60 * 1000;

/**
 * The fake Region's zones. Names map to IDs out of order, as in a real account (where `a` is
 * rarely `az1`), so a test cannot pass by deriving one from the other.
 */
export const FAKE_ZONES: readonly Zone[] = [
  { name: 'us-east-1a', id: 'use1-az6' },
  { name: 'us-east-1b', id: 'use1-az1' },
  { name: 'us-east-1c', id: 'use1-az2' },
  { name: 'us-east-1d', id: 'use1-az4' },
];

/** What every cluster's gateway over one EC2 shares. */
interface FakeEc2 {
  volumes: Map<string, Disk>;
  instances: Map<string, Instance>;
  snapshots: Map<string, Snapshot>;
  modifications: Map<string, DiskModification>;
  /** When each volume's modifications began (epoch ms), for EC2's four per rolling 24 hours. */
  modificationStarts?: Map<string, number[]>;
  nextId: number;
  zones: Zone[];
}

export class FakeGateway implements Ec2Gateway {
  readonly volumes: Map<string, Disk>;
  readonly instances: Map<string, Instance>;
  readonly snapshots: Map<string, Snapshot>;
  /** Zones with fast snapshot restore enabled, per snapshot. */
  readonly fastRestores = new Map<string, string[]>();
  readonly calls: Call[] = [];
  /** The state CreateSnapshot leaves a new snapshot in. */
  snapshotState: SnapshotState = 'pending';
  /** The state CreateVolume leaves a new volume in. */
  createdState: DiskState = 'creating';
  /** The state AttachVolume reports. */
  attachState: AttachmentState = 'attaching';
  /** The latest modification of each volume. */
  readonly modifications: Map<string, DiskModification>;
  /** What DescribeVolumeStatus says of each volume's initialization (none: an empty volume). */
  readonly initializations = new Map<string, DiskInitialization>();
  /** The clock modifications start on and their cool-down is measured on (epoch ms). */
  now: () => number = () => Date.now();
  readonly #ec2: FakeEc2;
  readonly #scripted = new Map<Verb, Error[]>();

  constructor(
    readonly clusterId = 'alpha',
    ec2: FakeEc2 = {
      volumes: new Map(),
      instances: new Map(),
      snapshots: new Map(),
      modifications: new Map(),
      nextId: 1,
      zones: FAKE_ZONES.map((z) => ({ ...z })),
    },
  ) {
    this.#ec2 = ec2;
    this.volumes = ec2.volumes;
    this.instances = ec2.instances;
    this.snapshots = ec2.snapshots;
    this.modifications = ec2.modifications;
  }

  /** A gateway of another cluster over the same EC2 (its own calls, scripts and start states). */
  forCluster(clusterId: string): FakeGateway {
    return new FakeGateway(clusterId, this.#ec2);
  }

  /**
   * Moves every volume and attachment on, as time passing in EC2 would: creating → available,
   * attaching → attached, detaching → gone (the volume `available` once nothing is attached),
   * deleting → deleted.
   */
  settle(): this {
    for (const snapshot of this.snapshots.values()) if (snapshot.state === 'pending') Object.assign(snapshot, { state: 'completed', progress: '100%' });
    for (const held of this.regionSnapshots.values()) for (const s of held.values()) if (s.state === 'pending') Object.assign(s, { state: 'completed', progress: '100%' });
    for (const disk of this.volumes.values()) {
      if (disk.state === 'creating') disk.state = 'available';
      if (disk.state === 'deleting') disk.state = 'deleted';
      const leaving = disk.attachments.filter((a) => a.state === 'detaching' || a.state === 'detached');
      for (const a of leaving) {
        const instance = this.instances.get(a.instanceId);
        if (instance) instance.devicesInUse = instance.devicesInUse.filter((d) => d !== a.device);
      }
      disk.attachments = disk.attachments.filter((a) => !leaving.includes(a)).map((a) => (a.state === 'attaching' ? { ...a, state: 'attached' } : a));
      if (disk.state === 'in-use' && disk.attachments.length === 0) disk.state = 'available';
    }
    // modifying → optimizing (the volume reports its new size and performance) → completed.
    for (const m of this.modifications.values()) {
      if (m.state === 'optimizing') m.state = 'completed';
      if (m.state !== 'modifying') continue;
      m.state = 'optimizing';
      const disk = this.volumes.get(m.volumeId);
      if (!disk) continue;
      if (m.target.sizeGiB !== undefined) disk.sizeGiB = m.target.sizeGiB;
      if (m.target.type !== undefined) disk.type = m.target.type;
      if (m.target.iops !== undefined) disk.iops = m.target.iops;
      if (m.target.throughput !== undefined) disk.throughput = m.target.throughput;
    }
    return this;
  }

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
      tags: { [TagKeys.cluster(this.clusterId)]: 'owned', [TagKeys.ebsCluster]: 'true', [TagKeys.volhookCluster]: this.clusterId },
      attachments: [],
      ...volume,
    };
    this.volumes.set(disk.volumeId, disk);
    return disk;
  }

  addSnapshot(snapshot: Partial<Snapshot> & Pick<Snapshot, 'snapshotId'>): Snapshot {
    const record: Snapshot = {
      volumeId: 'vol-00000000000000001',
      sizeGiB: 10,
      state: 'completed',
      startTime: new Date(Date.UTC(2026, 0, 1)).toISOString(),
      encrypted: false,
      tags: { [TagKeys.cluster(this.clusterId)]: 'owned', [TagKeys.ebsCluster]: 'true', [TagKeys.volhookCluster]: this.clusterId },
      ...snapshot,
    };
    this.snapshots.set(record.snapshotId, record);
    return record;
  }

  addInstance(instance: Partial<Instance> & Pick<Instance, 'instanceId'>): Instance {
    const record: Instance = {
      zone: 'us-east-1a',
      state: 'running',
      tags: { [TagKeys.cluster(this.clusterId)]: 'owned' },
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
    return [...this.volumes.values()]
      .filter((d) => d.tags[TagKeys.csiVolumeName] === name && d.tags[TagKeys.cluster(this.clusterId)] === 'owned')
      .sort((a, b) => lookupRank(a.state) - lookupRank(b.state))[0];
  }

  async createDisk(request: CreateDiskRequest): Promise<Disk> {
    this.#enter('createDisk', request);
    const existing = this.#byName(request.name);
    // A dead volume's token is spent: the gateway creates the next generation.
    if (existing && !isGone(existing)) return structuredClone(existing);
    const source = request.snapshotId === undefined ? undefined : this.snapshots.get(request.snapshotId);
    if (request.snapshotId !== undefined && !source) throw ec2Error('notFound', 'InvalidSnapshot.NotFound', `The snapshot '${request.snapshotId}' does not exist.`);
    if (source && source.sizeGiB > request.sizeGiB) throw ec2Error('invalidParameter', 'InvalidParameterValue', `size ${request.sizeGiB} is less than the snapshot's ${source.sizeGiB}`);
    const disk: Disk = {
      volumeId: `vol-${String(this.#ec2.nextId++).padStart(17, '0')}`,
      ...(request.snapshotId !== undefined && { snapshotId: request.snapshotId }),
      zone: request.zone,
      sizeGiB: request.sizeGiB,
      state: this.createdState,
      type: request.type,
      ...(request.iops !== undefined && { iops: request.iops }),
      ...(request.throughput !== undefined && { throughput: request.throughput }),
      encrypted: request.encrypted ?? false,
      ...(request.kmsKeyId !== undefined && { kmsKeyId: request.kmsKeyId }),
      multiAttach: request.multiAttach ?? false,
      // As the gateway: the tags findDiskByName filters on, whatever the request says.
      tags: { ...request.tags, ...identityTags(this.clusterId, request.name) },
      attachments: [],
      createdAt: new Date().toISOString(),
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

  /** As the gateway: every volume tagged for this cluster, deleted ones included (EC2 lists them a while). */
  async listClusterDisks(): Promise<Disk[]> {
    this.#enter('listClusterDisks');
    return [...this.volumes.values()].filter((d) => d.tags[TagKeys.cluster(this.clusterId)] === 'owned').map((d) => structuredClone(d));
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
    const live = disk.attachments.filter((a) => a.state !== 'detached');
    // As the gateway: attached (or attaching) to this very instance already is done.
    const mine = live.find((a) => a.instanceId === instanceId && (a.state === 'attaching' || a.state === 'attached'));
    if (mine) return mine.state;
    if (disk.zone !== instance.zone) throw ec2Error('zoneMismatch', 'InvalidVolume.ZoneMismatch', `${volumeId} is not in the zone of ${instanceId}`);
    if (disk.state !== 'available' && disk.state !== 'in-use') throw ec2Error('incorrectState', 'IncorrectState', `${volumeId} is ${disk.state}`);
    if (live.length > 0 && !disk.multiAttach) throw ec2Error('inUse', 'VolumeInUse', `${volumeId} is already attached to an instance`);
    if (instance.devicesInUse.includes(device)) {
      throw ec2Error('deviceInUse', 'InvalidParameterValue', `Attachment point ${device} is already in use`);
    }
    instance.devicesInUse.push(device);
    disk.attachments.push({ instanceId, device, state: this.attachState, attachTime: new Date().toISOString() });
    disk.state = 'in-use';
    return this.attachState;
  }

  async detachDisk(volumeId: string, instanceId: string): Promise<void> {
    this.#enter('detachDisk', volumeId, instanceId);
    const disk = this.volumes.get(volumeId);
    for (const attachment of disk?.attachments ?? []) if (attachment.instanceId === instanceId) attachment.state = 'detaching';
  }

  async zones(): Promise<Zone[]> {
    this.#enter('zones');
    return structuredClone(this.#ec2.zones);
  }

  /** As the gateway: the name is looked up first, as CreateSnapshot has no token. */
  async createSnapshot(request: CreateSnapshotRequest): Promise<Snapshot> {
    this.#enter('createSnapshot', request);
    const [existing] = this.#snapshotsByName(request.name);
    if (existing) return structuredClone(existing);
    const volume = this.volumes.get(request.volumeId);
    if (!volume || isGone(volume)) throw ec2Error('notFound', 'InvalidVolume.NotFound', `The volume '${request.volumeId}' does not exist.`);
    const id = this.#ec2.nextId++;
    const snapshot: Snapshot = {
      snapshotId: `snap-${String(id).padStart(17, '0')}`,
      volumeId: request.volumeId,
      sizeGiB: volume.sizeGiB,
      state: this.snapshotState,
      startTime: new Date(Date.UTC(2026, 0, 1) + id * 1000).toISOString(),
      encrypted: volume.encrypted,
      tags: { ...request.tags, ...snapshotIdentityTags(this.clusterId, request.name) },
    };
    this.snapshots.set(snapshot.snapshotId, snapshot);
    return structuredClone(snapshot);
  }

  async createSnapshots(request: CreateSnapshotsRequest): Promise<Snapshot[]> {
    this.#enter('createSnapshots', request);
    const existing = this.#snapshotsByName(request.name);
    if (existing.length > 0) return structuredClone(existing);
    const instance = this.instances.get(request.instanceId);
    if (!instance) throw ec2Error('notFound', 'InvalidInstanceID.NotFound', `The instance ID '${request.instanceId}' does not exist`);
    const volumes = [...this.volumes.values()]
      .filter((v) => v.attachments.some((a) => a.instanceId === instance.instanceId && a.state === 'attached'))
      .filter((v) => v.volumeId !== instance.rootVolumeId && !request.excludeDataVolumeIds.includes(v.volumeId))
      .sort((a, b) => a.volumeId.localeCompare(b.volumeId));
    const startTime = new Date(Date.UTC(2026, 0, 1) + this.#ec2.nextId * 1000).toISOString();
    return volumes.map((volume) => {
      const snapshot: Snapshot = {
        snapshotId: `snap-${String(this.#ec2.nextId++).padStart(17, '0')}`,
        volumeId: volume.volumeId,
        sizeGiB: volume.sizeGiB,
        state: this.snapshotState,
        startTime,
        encrypted: volume.encrypted,
        tags: { ...request.tags, ...snapshotIdentityTags(this.clusterId, request.name) },
      };
      this.snapshots.set(snapshot.snapshotId, snapshot);
      return structuredClone(snapshot);
    });
  }

  #snapshotsByName(name: string): Snapshot[] {
    return [...this.snapshots.values()]
      .filter((s) => s.tags[TagKeys.csiVolumeSnapshotName] === name && s.tags[TagKeys.cluster(this.clusterId)] === 'owned')
      .sort(oldestFirst);
  }

  async findSnapshotsByName(name: string): Promise<Snapshot[]> {
    this.#enter('findSnapshotsByName', name);
    return structuredClone(this.#snapshotsByName(name));
  }

  /** As the gateway: this cluster's snapshots, oldest first. */
  async listClusterSnapshots(): Promise<Snapshot[]> {
    this.#enter('listClusterSnapshots');
    return structuredClone([...this.snapshots.values()].filter((s) => s.tags[TagKeys.cluster(this.clusterId)] === 'owned').sort(oldestFirst));
  }

  async getSnapshot(snapshotId: string): Promise<Snapshot | undefined> {
    this.#enter('getSnapshot', snapshotId);
    const snapshot = this.snapshots.get(snapshotId);
    return snapshot && structuredClone(snapshot);
  }

  async deleteSnapshot(snapshotId: string): Promise<void> {
    this.#enter('deleteSnapshot', snapshotId);
    this.snapshots.delete(snapshotId);
    this.fastRestores.delete(snapshotId);
  }

  /** Snapshots of other Regions (cross-Region copies), by Region then ID. */
  readonly regionSnapshots = new Map<string, Map<string, Snapshot>>();

  /** As the gateway: CopySnapshot finds the copy by its name first; scripted errors by verb `snapshotsIn`. */
  snapshotsIn(region: string): RegionSnapshots {
    const held = () => {
      const found = this.regionSnapshots.get(region) ?? new Map<string, Snapshot>();
      this.regionSnapshots.set(region, found);
      return found;
    };
    const byName = (name: string) =>
      [...held().values()].filter((s) => s.tags[TagKeys.csiVolumeSnapshotName] === name && s.tags[TagKeys.cluster(this.clusterId)] === 'owned').sort(oldestFirst);
    return {
      region,
      findSnapshotsByName: async (name) => {
        this.#enter('snapshotsIn', region, 'findSnapshotsByName', name);
        return structuredClone(byName(name));
      },
      getSnapshot: async (snapshotId) => {
        this.#enter('snapshotsIn', region, 'getSnapshot', snapshotId);
        const found = held().get(snapshotId);
        return found && structuredClone(found);
      },
      copySnapshot: async (request) => {
        this.#enter('snapshotsIn', region, 'copySnapshot', request);
        const [existing] = byName(request.name);
        if (existing) return structuredClone(existing);
        const source = this.snapshots.get(request.sourceSnapshotId);
        if (!source || source.state !== 'completed') throw ec2Error('incorrectState', 'IncorrectState', `Snapshot is in invalid state - ${source?.state ?? 'gone'}`);
        const id = this.#ec2.nextId++;
        const copy: Snapshot = {
          snapshotId: `snap-${String(id).padStart(17, '0')}`,
          volumeId: 'vol-ffffffff',
          sizeGiB: source.sizeGiB,
          state: 'pending',
          startTime: new Date(Date.UTC(2026, 0, 1) + id * 1000).toISOString(),
          encrypted: source.encrypted || request.kmsKeyId !== undefined,
          tags: { ...request.tags, ...snapshotIdentityTags(this.clusterId, request.name) },
        };
        held().set(copy.snapshotId, copy);
        return structuredClone(copy);
      },
      deleteSnapshot: async (snapshotId) => {
        this.#enter('snapshotsIn', region, 'deleteSnapshot', snapshotId);
        held().delete(snapshotId);
      },
    };
  }

  async enableFastSnapshotRestores(snapshotId: string, zones: string[]): Promise<void> {
    this.#enter('enableFastSnapshotRestores', snapshotId, zones);
    if (!this.snapshots.has(snapshotId)) throw ec2Error('notFound', 'InvalidSnapshot.NotFound', `The snapshot '${snapshotId}' does not exist.`);
    this.fastRestores.set(snapshotId, [...new Set([...(this.fastRestores.get(snapshotId) ?? []), ...zones])]);
  }

  async copyDisk(request: CopyDiskRequest): Promise<Disk> {
    this.#enter('copyDisk', request);
    const existing = this.#byName(request.name);
    if (existing && !isGone(existing)) return structuredClone(existing);
    const source = this.volumes.get(request.sourceVolumeId);
    if (!source || isGone(source)) throw ec2Error('notFound', 'InvalidVolume.NotFound', `The volume '${request.sourceVolumeId}' does not exist.`);
    const disk: Disk = {
      volumeId: `vol-${String(this.#ec2.nextId++).padStart(17, '0')}`,
      zone: source.zone,
      sizeGiB: request.sizeGiB,
      state: this.createdState,
      type: request.type,
      ...(request.iops !== undefined && { iops: request.iops }),
      ...(request.throughput !== undefined && { throughput: request.throughput }),
      encrypted: source.encrypted,
      ...(source.kmsKeyId !== undefined && { kmsKeyId: source.kmsKeyId }),
      multiAttach: request.multiAttach ?? false,
      tags: { ...request.tags, ...identityTags(this.clusterId, request.name) },
      attachments: [],
    };
    this.volumes.set(disk.volumeId, disk);
    return structuredClone(disk);
  }

  async modifyDisk(volumeId: string, change: DiskChange): Promise<DiskModification> {
    this.#enter('modifyDisk', volumeId, change);
    const disk = this.volumes.get(volumeId);
    if (!disk || isGone(disk)) throw ec2Error('notFound', 'InvalidVolume.NotFound', `The volume '${volumeId}' does not exist.`);
    const last = this.modifications.get(volumeId);
    if (last && (last.state === 'modifying' || last.state === 'optimizing')) {
      throw ec2Error('incorrectState', 'IncorrectModificationState', `Volume '${volumeId}' is already being modified.`);
    }
    const starts = (this.#ec2.modificationStarts ??= new Map<string, number[]>());
    const recent = (starts.get(volumeId) ?? []).filter((start) => this.now() - start < FAKE_MODIFICATION_WINDOW_MS);
    if (recent.length >= 4) {
      const nextAt = new Date(Math.min(...recent) + FAKE_MODIFICATION_WINDOW_MS);
      const message = `Volume '${volumeId}' has reached the limit of four modifications in a rolling 24-hour period. You can modify it again after ${nextAt.toISOString()}.`;
      throw new Ec2Error('modificationRate', 'VolumeModificationRateExceeded', `EC2 ModifyVolume: VolumeModificationRateExceeded: ${message}`, 'ModifyVolume', undefined, nextAt);
    }
    if (change.sizeGiB !== undefined && change.sizeGiB < disk.sizeGiB) {
      throw ec2Error('invalidParameter', 'InvalidParameterValue', 'New size cannot be smaller than existing size.');
    }
    const target = { sizeGiB: change.sizeGiB ?? disk.sizeGiB, type: change.type ?? disk.type, ...(change.iops !== undefined ? { iops: change.iops } : disk.iops !== undefined ? { iops: disk.iops } : {}), ...(change.throughput !== undefined ? { throughput: change.throughput } : disk.throughput !== undefined ? { throughput: disk.throughput } : {}) };
    const modification: DiskModification = { volumeId, state: 'modifying', startTime: new Date(this.now()).toISOString(), target };
    this.modifications.set(volumeId, modification);
    starts.set(volumeId, [...recent, this.now()]);
    return structuredClone(modification);
  }

  async getInitialization(volumeId: string): Promise<DiskInitialization | undefined> {
    this.#enter('getInitialization', volumeId);
    const i = this.initializations.get(volumeId);
    return i && structuredClone(i);
  }

  async getModification(volumeId: string): Promise<DiskModification | undefined> {
    this.#enter('getModification', volumeId);
    const m = this.modifications.get(volumeId);
    return m && structuredClone(m);
  }

  async tagDisk(volumeId: string, tags: Record<string, string>): Promise<void> {
    this.#enter('tagDisk', volumeId, tags);
    const disk = this.volumes.get(volumeId);
    if (!disk) throw ec2Error('notFound', 'InvalidVolume.NotFound', `The volume '${volumeId}' does not exist.`);
    Object.assign(disk.tags, tags);
  }

  async untagDisk(volumeId: string, keys: string[]): Promise<void> {
    this.#enter('untagDisk', volumeId, keys);
    const disk = this.volumes.get(volumeId);
    if (!disk) throw ec2Error('notFound', 'InvalidVolume.NotFound', `The volume '${volumeId}' does not exist.`);
    for (const key of keys) delete disk.tags[key];
  }

  async deleteDisk(volumeId: string): Promise<void> {
    this.#enter('deleteDisk', volumeId);
    const disk = this.volumes.get(volumeId);
    if (!disk) return;
    if (disk.attachments.some((a) => a.state !== 'detached')) throw ec2Error('inUse', 'VolumeInUse', `Volume ${volumeId} is attached`);
    if (!isGone(disk)) disk.state = 'deleting';
  }
}

export function ec2Error(kind: Ec2ErrorKind, code: string, message = code): Ec2Error {
  return new Ec2Error(kind, code, `EC2: ${code}: ${message}`);
}

export const throttled = () => ec2Error('transient', 'RequestLimitExceeded', 'Request limit exceeded.');
