/** The simulated cloud's records. Plain data, so the whole world can be written as JSON. */

export const VOLUME_TYPES = ['standard', 'io1', 'io2', 'gp2', 'sc1', 'st1', 'gp3'] as const;
export type VolumeType = (typeof VOLUME_TYPES)[number];

export type VolumeState = 'creating' | 'available' | 'in-use' | 'deleting' | 'deleted' | 'error';
export type AttachmentState = 'attaching' | 'attached' | 'detaching';
export type InstanceStateName =
  | 'pending'
  | 'running'
  | 'shutting-down'
  | 'terminated'
  | 'stopping'
  | 'stopped';
export type ModificationState = 'modifying' | 'optimizing' | 'completed' | 'failed';

export interface Tag {
  key: string;
  value: string;
}

export interface Attachment {
  instanceId: string;
  device: string;
  state: AttachmentState;
  attachTime: number;
  deleteOnTermination: boolean;
  /** Identifies this attachment in scheduled events, so a stale event never touches a new one. */
  epoch: number;
  /** Never leaves `attaching` (fault injection). */
  stuck?: boolean;
}

export interface Volume {
  id: string;
  /** Creation order: stable pagination. */
  seq: number;
  zone: string;
  size: number;
  type: VolumeType;
  iops?: number;
  throughput?: number;
  encrypted: boolean;
  kmsKeyId?: string;
  multiAttach: boolean;
  state: VolumeState;
  createTime: number;
  tags: Tag[];
  attachments: Attachment[];
  /** The snapshot it was restored from (CreateVolume with SnapshotId). */
  snapshotId?: string;
  /** The volume it is a copy of (CopyVolumes). */
  sourceVolumeId?: string;
  /** Created from a snapshot with fast snapshot restore `enabled` in its zone. */
  fastRestored?: boolean;
  /** CreateVolume's VolumeInitializationRate, MiB/s. */
  volumeInitializationRate?: number;
  /** When its modifications within the current rolling window began: EC2 allows four. */
  modificationStarts?: number[];
}

export type SnapshotState = 'pending' | 'completed' | 'error';

export interface Snapshot {
  id: string;
  /** Creation order: stable pagination. */
  seq: number;
  volumeId: string;
  /** The source volume's size when the snapshot began, GiB. */
  volumeSize: number;
  state: SnapshotState;
  startTime: number;
  /** When the pending snapshot is due to end (drives `progress`). */
  dueTime: number;
  completionTime?: number;
  description: string;
  encrypted: boolean;
  kmsKeyId?: string;
  tags: Tag[];
  statusMessage?: string;
  /** DeleteSnapshot while pending: EC2 removes it once it completes. */
  deleteRequested?: boolean;
  /** A CopySnapshot copy: the snapshot it was copied from (EC2 shows it only in the description). */
  copiedFrom?: { region: string; snapshotId: string };
}

export type FastSnapshotRestoreState = 'enabling' | 'optimizing' | 'enabled' | 'disabling' | 'disabled';

/** Fast snapshot restore of one snapshot in one zone. */
export interface FastSnapshotRestore {
  snapshotId: string;
  zone: string;
  /** Order of enabling: stable pagination. */
  seq: number;
  state: FastSnapshotRestoreState;
  stateTransitionReason: string;
  enablingTime: number;
  optimizingTime?: number;
  enabledTime?: number;
}

export interface Instance {
  id: string;
  seq: number;
  reservationId: string;
  imageId: string;
  instanceType: string;
  zone: string;
  state: InstanceStateName;
  launchTime: number;
  tags: Tag[];
  privateIp: string;
  rootDeviceName: string;
  /** Attachment slots shared by volumes (root included) and network interfaces. */
  attachmentSlots: number;
  networkInterfaces: number;
  clientToken?: string;
  stateReason?: string;
}

export interface VolumeModification {
  volumeId: string;
  state: ModificationState;
  startTime: number;
  endTime?: number;
  progress: number;
  original: { size: number; type: VolumeType; iops?: number; throughput?: number; multiAttach: boolean };
  target: { size: number; type: VolumeType; iops?: number; throughput?: number; multiAttach: boolean };
}

/** A state change due at a time; kept as data so it survives a restart. */
export type ScheduledEvent = { at: number; seq: number } & (
  | { kind: 'volume-created'; volumeId: string; outcome: 'available' | 'error' | 'vanish' }
  | { kind: 'volume-deleted'; volumeId: string }
  | { kind: 'attached'; volumeId: string; instanceId: string; epoch: number }
  | { kind: 'detached'; volumeId: string; instanceId: string; epoch: number }
  | { kind: 'modification-optimizing'; volumeId: string; startTime: number }
  | { kind: 'modification-completed'; volumeId: string; startTime: number }
  | { kind: 'instance-running'; instanceId: string }
  | { kind: 'instance-terminated'; instanceId: string }
  | { kind: 'instance-purged'; instanceId: string }
  | { kind: 'snapshot-completed'; snapshotId: string; outcome: 'completed' | 'error' }
  | { kind: 'fsr-optimizing'; snapshotId: string; zone: string; epoch: number }
  | { kind: 'fsr-enabled'; snapshotId: string; zone: string; epoch: number }
);

export interface ClientTokenRecord {
  volumeId: string;
  fingerprint: string;
  at: number;
  /** The volume as first answered, returned again if it is gone. */
  original: Volume;
}

/** Everything the simulator knows; what `stateDir` persists. */
export interface WorldState {
  version: 1;
  seq: number;
  volumes: Volume[];
  instances: Instance[];
  modifications: VolumeModification[];
  clientTokens: Record<string, ClientTokenRecord>;
  events: ScheduledEvent[];
  /** Absent in state files written before snapshots existed. */
  snapshots?: Snapshot[];
  fastSnapshotRestores?: FastSnapshotRestore[];
}
