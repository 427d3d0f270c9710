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
}
