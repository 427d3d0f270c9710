import { multiAttachFor } from './access-modes.js';
import { driverTagsFor } from './driver-tags.js';
import { ParameterError } from './errors.js';
import { filesystemFor, type FsType } from './filesystem.js';
import { initializationFor } from './initialization.js';
import { resolveIops, type IopsAdjustment } from './iops.js';
import { isTrue, readParameters, type ClassParameters } from './parameters.js';
import { ceilGiB, parseQuantity } from './quantity.js';
import { tagsFrom } from './tags.js';
import { resolveThroughput } from './throughput.js';
import { DEFAULT_VOLUME_TYPE, isVolumeType, VOLUME_TYPE_LIMITS, VOLUME_TYPES, type VolumeType } from './volume-types.js';

/** Everything needed to create the EBS volume and write its PV, checked against EBS's rules. */
export interface VolumeSpec {
  type: VolumeType;
  /** The request rounded up to whole GiB (1Gi + 1 byte → 2). */
  sizeGiB: number;
  /** After capping; only when the class asks (iops / iopsPerGB). gp3 without it gets EC2's 3,000. */
  iops?: number;
  /** When capping changed what the class asked: said to the claim's owner, never silently. */
  iopsAdjustment?: IopsAdjustment;
  /** MiB/s, gp3 only; without it EC2's 125. */
  throughput?: number;
  /** A kmsKeyId implies encryption. */
  encrypted: boolean;
  kmsKeyId?: string;
  /** True only for io2 + Block + ReadWriteMany. */
  multiAttach: boolean;
  /** The PV's `csi.fsType`; undefined for Block. */
  fsType?: FsType;
  /**
   * The PV's `csi.volumeAttributes`, as the driver's VolumeContext: the formatting options the
   * node plugin's mkfs reads, and `blockattachuntilinitialized`.
   */
  volumeAttributes: Record<string, string>;
  /** The class's tags, templates expanded; volhook's own tags are added by the caller. */
  tags: Record<string, string>;
  /**
   * Tags the driver derives from parameters (`ebs.csi.aws.com/IOPSPerGb`,
   * `ebs.csi.aws.com/AllowAutoIOPSIncreaseOnModify`): reserved keys, written by volhook.
   */
  driverTags: Record<string, string>;
  /** CreateVolume's `VolumeInitializationRate` (MiB/s), for a volume restored from a snapshot only. */
  initializationRate?: number;
}

export interface VolumeSpecInput {
  /** The StorageClass's `parameters`. */
  parameters: Record<string, string> | undefined;
  /** The PVC's `spec.resources.requests.storage`, a Kubernetes quantity. */
  requestStorage: string;
  volumeMode: 'Filesystem' | 'Block';
  accessModes: string[];
  pvcName: string;
  pvcNamespace: string;
  pvName: string;
  /** The volume is restored from a snapshot (`volumeInitializationRate` applies). */
  fromSnapshot?: boolean;
}

/**
 * Turns a StorageClass and a claim into the volume to create, or says precisely why not.
 * Pure: no I/O, same answer every time — so a bad class fails before any EC2 call, the
 * reconciler can retry without side effects, and every rule is testable with plain objects.
 *
 * Every key of the EBS CSI driver v1.64 is acted on as the driver acts on it, or refused
 * where volhook cannot (docs/parameters.md has the table). `blockExpress` is accepted and does
 * nothing, as in the driver: every io2 volume is Block Express now.
 *
 * @throws ParameterError naming the StorageClass key (or `storage` / `accessModes` of the
 * claim) at fault; the first problem found wins.
 */
export function volumeSpecFor(input: VolumeSpecInput): VolumeSpec {
  const params = readParameters(input.parameters);
  const type = volumeTypeFor(params);
  const sizeGiB = sizeGiBFor(input.requestStorage, type);
  const multiAttach = multiAttachFor(type, input.volumeMode, input.accessModes);
  const resolved = resolveIops(params, type, sizeGiB);
  const iops = resolved?.iops;
  const throughput = resolveThroughput(params, type, iops);
  const kmsKeyId = params.get('kmsKeyId')?.value || undefined;
  const filesystem = filesystemFor(params, input.volumeMode);
  const initialization = initializationFor(params, input.fromSnapshot ?? false);
  const volumeAttributes = { ...filesystem.volumeAttributes, ...initialization.volumeAttributes };
  const tags = tagsFrom(params.tagSpecifications, {
    PVCName: input.pvcName,
    PVCNamespace: input.pvcNamespace,
    PVName: input.pvName,
  });
  const driverTags = driverTagsFor(params);
  const { fsType } = filesystem;

  return {
    type,
    sizeGiB,
    ...(iops !== undefined && { iops }),
    ...(resolved?.adjustment && { iopsAdjustment: resolved.adjustment }),
    ...(throughput !== undefined && { throughput }),
    encrypted: isTrue(params.get('encrypted')) || kmsKeyId !== undefined,
    ...(kmsKeyId !== undefined && { kmsKeyId }),
    multiAttach,
    ...(fsType !== undefined && { fsType }),
    volumeAttributes,
    tags,
    driverTags,
    ...(initialization.rate !== undefined && { initializationRate: initialization.rate }),
  };
}

/**
 * `type`, gp3 when absent or empty (the driver's default). The driver passes any other value
 * to EC2, which refuses what is not a type; volhook refuses it before the call.
 */
function volumeTypeFor(params: ClassParameters): VolumeType {
  const entry = params.get('type');
  if (!entry || entry.value === '') return DEFAULT_VOLUME_TYPE;
  if (!isVolumeType(entry.value)) {
    throw new ParameterError(entry.key, `"${entry.value}" is not an EBS volume type (${VOLUME_TYPES.join(', ')})`);
  }
  return entry.value;
}

/** The request in whole GiB, within the type's size range. */
function sizeGiBFor(requestStorage: string, type: VolumeType): number {
  const bytes = parseQuantity(requestStorage);
  if (bytes <= 0n) throw new ParameterError('storage', `the claim must request more than 0 bytes, not ${requestStorage}`);
  const gib = ceilGiB(bytes);
  const { minSizeGiB, maxSizeGiB } = VOLUME_TYPE_LIMITS[type];
  if (gib < BigInt(minSizeGiB) || gib > BigInt(maxSizeGiB)) {
    throw new ParameterError(
      'storage',
      `${requestStorage} is ${gib} GiB, but a ${type} volume must be from ${minSizeGiB} to ${maxSizeGiB} GiB`,
    );
  }
  return Number(gib);
}
