/**
 * The EC2 gateway: the only part of volhook that speaks to EC2. Its methods are domain verbs
 * returning volhook's own types; SDK shapes stay inside the implementation. Reconcilers
 * depend on this interface only, so they are tested with a fake and the SDK-backed gateway
 * is tested once, over aws-sdk-client-mock and against the simulator.
 */

export type DiskState = 'creating' | 'available' | 'in-use' | 'deleting' | 'deleted' | 'error';

/** EC2 is removing the volume, or has: as good as gone, and its ClientToken spent. */
export function isGone(disk: { state: string }): boolean {
  return disk.state === 'deleting' || disk.state === 'deleted';
}

/**
 * How a look-up by name ranks the volumes tagged with one name, lowest first: a live volume,
 * then a failed one (`error`, which the reconciler deletes), then one being deleted.
 */
export function lookupRank(state: string | undefined): number {
  if (state === 'deleting' || state === 'deleted') return 2;
  return state === 'error' ? 1 : 0;
}
export type AttachmentState = 'attaching' | 'attached' | 'detaching' | 'detached' | 'busy';

export interface DiskAttachment {
  instanceId: string;
  device: string;
  state: AttachmentState;
  /** When the attachment began (ISO 8601, EC2's AttachTime), if known: finds attaches stuck in `attaching`. */
  attachTime?: string;
}

export interface Disk {
  volumeId: string;
  /** The snapshot the volume was created from, if any. */
  snapshotId?: string;
  zone: string;
  sizeGiB: number;
  state: DiskState;
  /** When EC2 began creating the volume (ISO 8601): when to look for it `available`. */
  createTime?: string;
  type: string;
  iops?: number;
  throughput?: number;
  encrypted: boolean;
  kmsKeyId?: string;
  multiAttach: boolean;
  tags: Record<string, string>;
  attachments: DiskAttachment[];
  /** When EC2 created the volume (ISO 8601, its CreateTime), if known: how old an orphan is. */
  createdAt?: string;
}

export interface Instance {
  instanceId: string;
  zone: string;
  state: string;
  tags: Record<string, string>;
  /** Device names taken on the instance: its block device mappings (incl. in-flight attachments). */
  devicesInUse: string[];
  /** The volume at the instance's root device, when EC2 reports one (a group snapshot leaves it out). */
  rootVolumeId?: string;
  /**
   * Its EBS block device mappings — the volumes on it, root included — with their state and
   * AttachTime: which volumes a group snapshot covers, and EC2's own evidence that an attach
   * still `attaching` was left behind (lib/reconcile/stuck-attachment.ts).
   */
  mappings?: InstanceMapping[];
}

/** A volume in an instance's block device mappings, as DescribeInstances reports it. */
export interface InstanceMapping {
  volumeId: string;
  state: AttachmentState;
  /** ISO 8601, EC2's AttachTime. */
  attachTime?: string;
}

/**
 * An availability zone of the Region: its name (`us-east-1a`), which EC2 maps to a physical
 * zone differently in each account, and its ID (`use1-az1`), which names the same zone in every
 * account.
 */
export interface Zone {
  name: string;
  id: string;
}

export interface CreateDiskRequest {
  /** The CSI volume name (`pvc-<uid>`): tag `CSIVolumeName` and the input of the ClientToken. */
  name: string;
  /** Restore: the snapshot the volume is created from (its encryption carries over). */
  snapshotId?: string;
  /** With `snapshotId`: MiB/s at which EC2 fills the volume (`VolumeInitializationRate`). */
  initializationRate?: number;
  zone: string;
  sizeGiB: number;
  type: string;
  iops?: number;
  throughput?: number;
  encrypted?: boolean;
  kmsKeyId?: string;
  multiAttach?: boolean;
  /** Every tag the volume is created with, `CSIVolumeName` and cluster tags included. */
  tags: Record<string, string>;
}

/** EC2's snapshot states; `recoverable`/`recovering` are archive-tier states volhook never makes. */
export type SnapshotState = 'pending' | 'completed' | 'error' | 'recoverable' | 'recovering';

export interface Snapshot {
  snapshotId: string;
  /** The volume it was taken of. */
  volumeId: string;
  sizeGiB: number;
  state: SnapshotState;
  /** EC2's StartTime (ISO 8601). */
  startTime: string;
  progress?: string;
  /** Why the snapshot failed, when its state is `error`. */
  stateMessage?: string;
  encrypted: boolean;
  tags: Record<string, string>;
}

/** One CreateSnapshots: a crash-consistent set of the volumes attached to one instance. */
export interface CreateSnapshotsRequest {
  /** The group content's name: tag `CSIVolumeSnapshotName` on every snapshot of the set, what a retry finds it by. */
  name: string;
  instanceId: string;
  /** The instance's data volumes not in the set; the root is left out by ExcludeBootVolume. */
  excludeDataVolumeIds: string[];
  /** Tags besides the identity tags, on every snapshot of the set. */
  tags: Record<string, string>;
}

export interface CreateSnapshotRequest {
  /** The content's name: tag `CSIVolumeSnapshotName`, what a retry finds the snapshot by. */
  name: string;
  volumeId: string;
  /** Every tag the snapshot is created with, the identity tags among them. */
  tags: Record<string, string>;
}

/** A cross-Region copy of a snapshot (EC2 CopySnapshot, sent to the destination Region). */
export interface CopySnapshotRequest {
  /** The content's name: tag `CSIVolumeSnapshotName` on the copy, what a retry finds it by there. */
  name: string;
  /** The snapshot copied, in the cluster's own Region. */
  sourceSnapshotId: string;
  /** A KMS key of the destination Region: the copy is encrypted with it. */
  kmsKeyId?: string;
  /** Every tag the copy is made with besides the identity tags (the source's class and extra tags). */
  tags: Record<string, string>;
}

/**
 * A cluster's snapshots in another Region of its account: where its cross-Region copies are.
 * The same session (and fence) as the gateway's, with a client for that Region.
 */
export interface RegionSnapshots {
  readonly region: string;
  /** As the gateway's, in that Region: the cluster's snapshots tagged `CSIVolumeSnapshotName=<name>`, oldest first. */
  findSnapshotsByName(name: string): Promise<Snapshot[]>;
  /** DescribeSnapshots by ID in that Region; undefined when there is no such snapshot. */
  getSnapshot(snapshotId: string): Promise<Snapshot | undefined>;
  /**
   * CopySnapshot of the cluster's snapshot into that Region, tagged with the identity tags and
   * `tags`. CopySnapshot takes no ClientToken: the caller looks the name up first, and so does this.
   */
  copySnapshot(request: CopySnapshotRequest): Promise<Snapshot>;
  /** DeleteSnapshot in that Region; a snapshot already gone resolves. */
  deleteSnapshot(snapshotId: string): Promise<void>;
}

/** A copy of a volume (EC2 CopyVolumes), in the source's zone: a clone. */
export interface CopyDiskRequest {
  /** The clone's CSI volume name (`pvc-<uid>`): tag `CSIVolumeName` and the input of the ClientToken. */
  name: string;
  sourceVolumeId: string;
  sizeGiB: number;
  type: string;
  iops?: number;
  throughput?: number;
  multiAttach?: boolean;
  tags: Record<string, string>;
}

/**
 * EC2's rule for modifying a volume again (since January 2026; before, one per 6 hours): a new
 * modification may start once the previous one is `completed` (or `failed`) — `optimizing` is
 * still under way — and at most four start in a rolling 24-hour period. Only EC2 knows the
 * starts of that period (DescribeVolumesModifications returns the latest alone): a fifth is
 * refused with VolumeModificationRateExceeded, whose message says when the next may start.
 * Whether a modification in this state still holds the volume: no other may start.
 */
export const isModificationUnderWay = (state: ModificationState): boolean => state === 'modifying' || state === 'optimizing';

export type ModificationState = 'modifying' | 'optimizing' | 'completed' | 'failed';

/** What ModifyVolume changes; only the fields given change. */
export interface DiskChange {
  sizeGiB?: number;
  type?: string;
  iops?: number;
  throughput?: number;
}

/** A volume's initialization (DescribeVolumeStatus): blocks still fetched from S3 on first read while `initializing`. */
export interface DiskInitialization {
  volumeId: string;
  state: 'initializing' | 'completed';
  /** EC2's estimate of the time left, given for a volume created with a VolumeInitializationRate. */
  secondsLeft?: number;
}

/** The latest modification of a volume (DescribeVolumesModifications). */
export interface DiskModification {
  volumeId: string;
  /**
   * `modifying`: the volume still has its old size and performance; from `optimizing` on it
   * reports the new ones (the size is usable); `failed`: it kept the old ones.
   */
  state: ModificationState;
  /** ISO 8601: when EC2 accepted it. */
  startTime: string;
  target: { sizeGiB?: number; type?: string; iops?: number; throughput?: number };
  statusMessage?: string;
}

/**
 * What the caller of `createDisk` saw when it looked the name up itself just before (in the
 * same request): the gateway then does not describe again.
 */
export interface LookedUp {
  found: Disk | undefined;
}

export interface Ec2Gateway {
  /**
   * Idempotent: returns the volume tagged `CSIVolumeName=<name>` for this cluster if there is
   * one, else creates it with ClientToken = sha256(`<clusterId>/<name>`) and all tags in
   * TagSpecifications. IdempotentParameterMismatch / VolumeLimitExceeded look up by tag again.
   */
  createDisk(request: CreateDiskRequest, lookedUp?: LookedUp): Promise<Disk>;
  /** The volume tagged `CSIVolumeName=<name>` and owned by this cluster, if any. Batched. */
  findDiskByName(name: string): Promise<Disk | undefined>;
  /**
   * Every volume tagged `kubernetes.io/cluster/<clusterId>=owned`: DescribeVolumes filtered by
   * that tag, 500 a page, every page. What the audit (lib/audit) takes the inventory from.
   */
  listClusterDisks(): Promise<Disk[]>;
  /**
   * Batched DescribeVolumes by ID (≤ 500 per call); undefined when EC2 has no such volume.
   * With `name`, the volume's `CSIVolumeName` when the caller expects one (a PV volhook
   * provisioned), it is looked up with the request's look-ups by name first — one describe
   * for the claims and the attachments of a request, not two — and by ID only when that finds
   * no volume with this ID.
   */
  getDisk(volumeId: string, name?: string): Promise<Disk | undefined>;
  /** Batched DescribeInstances by ID; undefined when the instance does not exist (or is terminated). */
  getInstance(instanceId: string): Promise<Instance | undefined>;
  /** AttachVolume; resolves to the attachment state EC2 reports. */
  attachDisk(volumeId: string, instanceId: string, device: string): Promise<AttachmentState>;
  /** DetachVolume; already detached, volume gone or instance gone all resolve. */
  detachDisk(volumeId: string, instanceId: string): Promise<void>;
  /** DeleteVolume; a volume already gone resolves. */
  deleteDisk(volumeId: string): Promise<void>;
  /**
   * The Region's availability zones, name and ID (DescribeAvailabilityZones): how a zone ID in a
   * StorageClass or on a node becomes the name CreateVolume takes. The mapping of an account
   * does not change, so it is cached for the process, across requests.
   */
  zones(): Promise<Zone[]>;
  /**
   * CreateSnapshot of `volumeId`, all tags in TagSpecifications. CreateSnapshot takes no
   * ClientToken: the caller looks the name up first (`findSnapshotsByName`), and so does this.
   */
  createSnapshot(request: CreateSnapshotRequest): Promise<Snapshot>;
  /**
   * This cluster's snapshots tagged `CSIVolumeSnapshotName=<name>` (owned by the cluster), oldest
   * first. More than one only when two requests created at once.
   */
  findSnapshotsByName(name: string): Promise<Snapshot[]>;
  /**
   * CreateSnapshots of the volumes attached to `instanceId`, less the root and
   * `excludeDataVolumeIds`, every snapshot tagged with the identity tags of `name`. No
   * ClientToken either: the snapshots of `name` are looked up first, and if there are any they
   * are the answer and no set is made.
   */
  createSnapshots(request: CreateSnapshotsRequest): Promise<Snapshot[]>;
  /**
   * Every snapshot of this account tagged `kubernetes.io/cluster/<clusterId>=owned`:
   * DescribeSnapshots filtered by that tag, `OwnerIds: self`, 1,000 a page, every page, oldest
   * first. What the audit (lib/audit) takes the snapshot inventory from.
   */
  listClusterSnapshots(): Promise<Snapshot[]>;
  /** DescribeSnapshots by ID (this account's); undefined when there is no such snapshot. */
  getSnapshot(snapshotId: string): Promise<Snapshot | undefined>;
  /** DeleteSnapshot; a snapshot already gone resolves. */
  deleteSnapshot(snapshotId: string): Promise<void>;
  /** EnableFastSnapshotRestores in `zones`; a zone EC2 refuses fails the call with its reason. */
  enableFastSnapshotRestores(snapshotId: string, zones: string[]): Promise<void>;
  /** The cluster's snapshots in another Region (its copies); every call of one fails when the gateway has no client for it. */
  snapshotsIn(region: string): RegionSnapshots;
  /**
   * Idempotent like createDisk: the volume tagged `CSIVolumeName=<name>` for this cluster if
   * there is one, else CopyVolumes of the source under ClientToken = sha256(`<clusterId>/<name>`).
   */
  copyDisk(request: CopyDiskRequest): Promise<Disk>;
  /**
   * ModifyVolume. When EC2 answers that the volume is already being modified, or was modified
   * too recently, and its latest modification is this very change (our earlier call whose
   * answer was lost), that modification is the answer.
   */
  modifyDisk(volumeId: string, change: DiskChange): Promise<DiskModification>;
  /** The volume's latest modification, undefined if it was never modified. Batched. */
  getModification(volumeId: string): Promise<DiskModification | undefined>;
  /**
   * The initialization of a volume made from a snapshot or copied (DescribeVolumeStatus, its
   * `initialization-state` detail): undefined for an empty volume, which has none, or one EC2
   * does not know. Batched.
   */
  getInitialization(volumeId: string): Promise<DiskInitialization | undefined>;
  /** CreateTags on the volume (adds or overwrites). */
  tagDisk(volumeId: string, tags: Record<string, string>): Promise<void>;
  /** DeleteTags of these keys on the volume (whatever their values). */
  untagDisk(volumeId: string, keys: string[]): Promise<void>;
}

/**
 * What an EC2 failure means for the object being reconciled — decided once, in
 * `classifyEc2Error`, and mapped to outcomes by the reconcilers.
 */
export type Ec2ErrorKind =
  /** Throttled, 5xx, network, timeout: retry later; never a failure of the object. */
  | 'transient'
  /** The StorageClass asks for something EC2 refuses (InvalidParameterValue & co). */
  | 'invalidParameter'
  /** InvalidVolume.NotFound, InvalidInstanceID.NotFound, InvalidAttachment.NotFound. */
  | 'notFound'
  /** VolumeInUse. */
  | 'inUse'
  /** IncorrectState: the volume is in transition. */
  | 'incorrectState'
  /** InsufficientVolumeCapacity: the zone is out of capacity. */
  | 'capacity'
  /** AttachmentLimitExceeded: the node has no free attachment slot. */
  | 'attachmentLimit'
  /** The device name is already used on the instance. */
  | 'deviceInUse'
  /** InvalidVolume.ZoneMismatch. */
  | 'zoneMismatch'
  /** IdempotentParameterMismatch: the token was used with other parameters. */
  | 'idempotentMismatch'
  /** VolumeLimitExceeded: the account's quota. */
  | 'volumeLimit'
  /** UnauthorizedOperation: the backend's role lacks a permission. */
  | 'unauthorized'
  /**
   * No EC2 session for the cluster: STS refused to let the backend assume the cluster's EC2 role
   * (AccessDenied: its trust policy or ExternalId), or no role is configured at all. No EC2 call
   * is made; it needs a person.
   */
  | 'sessionDenied'
  /**
   * VolumeModificationRateExceeded: four modifications of the volume began in the last 24
   * hours; `retryAt` of the error, when its message names it, is when the next may start.
   */
  | 'modificationRate'
  /** Anything else EC2 says. */
  | 'other';

export class Ec2Error extends Error {
  override readonly name = 'Ec2Error';
  constructor(
    readonly kind: Ec2ErrorKind,
    /** EC2's error code, e.g. `InvalidParameterValue`, or the JS error name. */
    readonly code: string,
    message: string,
    readonly action?: string,
    /**
     * For `transient` errors that know when trying again makes sense (the rate budget's
     * refusal: when this call's token will be there), seconds from now.
     */
    readonly retryAfterSeconds?: number,
    /** For `modificationRate`: when EC2 says the volume may be modified again. */
    readonly retryAt?: Date,
  ) {
    super(message);
  }
}

/** An Ec2Error of one of `kinds`. */
export function isEc2Error(err: unknown, ...kinds: Ec2Error['kind'][]): err is Ec2Error {
  return err instanceof Ec2Error && kinds.includes(err.kind);
}
