/**
 * VolumeSnapshotClass parameters, as the EBS CSI driver's CreateSnapshot reads them (keys
 * matched case-insensitively, tag keys by the case-sensitive `tagSpecification` prefix):
 *
 * - `tagSpecification_N`: `key=value` tags; the value a template over `.VolumeSnapshotName`,
 *   `.VolumeSnapshotNamespace` and `.VolumeSnapshotContentName`.
 * - `fastSnapshotRestoreAvailabilityZones`: zones (comma separated, spaces dropped) to enable
 *   fast snapshot restore in, once the snapshot exists.
 * - `copyToRegion` (volhook's own; the driver has none, see its issue #2926): a Region to copy
 *   the snapshot into with EC2 CopySnapshot once it is completed; `copyToRegionKmsKeyId`, a KMS
 *   key of that Region to encrypt the copy with (needs `copyToRegion`). A value that is not a
 *   Region name is refused, naming it.
 * - `outpostArn`: refused — volhook does not place volumes or snapshots on Outposts.
 * - the snapshot lock keys (`lockMode`, `lockDuration`, `lockExpirationDate`,
 *   `lockCoolOffPeriod`, also spelled `snapshotLock…`): refused — a locked snapshot cannot be
 *   deleted, so a content with the Delete policy could never be honoured.
 * - secret references (`csi.storage.k8s.io/snapshotter-secret-…`), which the sidecar strips:
 *   accepted and ignored — volhook uses no secrets.
 *
 * Any other key is refused, naming it, as the driver refuses it.
 */
import { ParameterError } from './errors.js';
import { TAG_SPECIFICATION_PREFIX, type ParameterEntry } from './parameters.js';
import { tagsFrom } from './tags.js';

export interface SnapshotSpec {
  /** The class's tags, templates expanded. */
  tags: Record<string, string>;
  /** Zones to enable fast snapshot restore in; empty for none. */
  fastSnapshotRestoreZones: string[];
  /** The cross-Region copy the class asks for, if any. */
  copy?: { region: string; kmsKeyId?: string };
}

export interface SnapshotSpecInput {
  parameters: Record<string, string> | null | undefined;
  volumeSnapshotName: string;
  volumeSnapshotNamespace: string;
  volumeSnapshotContentName: string;
}

const FAST_SNAPSHOT_RESTORE_ZONES = 'fastsnapshotrestoreavailabilityzones';
const COPY_TO_REGION = 'copytoregion';
const COPY_KMS_KEY_ID = 'copytoregionkmskeyid';
/** An AWS Region name as EC2 writes them (us-east-1, ap-southeast-2, us-gov-west-1, eu-central-2). */
export const REGION_NAME = /^[a-z]{2}(-[a-z]+)+-\d{1,2}$/;

/** The keys this reader knows, as the docs list them (docs/snapshots.md, "Class parameters"). */
export const SNAPSHOT_CLASS_KEYS = [
  'tagSpecification_N',
  'fastSnapshotRestoreAvailabilityZones',
  'copyToRegion',
  'copyToRegionKmsKeyId',
  'outpostArn',
  'lockMode',
  'csi.storage.k8s.io/snapshotter-secret-*',
] as const;
const OUTPOST_ARN = 'outpostarn';
const LOCK_KEYS = new Set(
  ['lockMode', 'lockDuration', 'lockExpirationDate', 'lockCoolOffPeriod', 'snapshotLockMode', 'snapshotLockDuration', 'snapshotLockExpirationDate', 'snapshotLockCoolOffPeriod'].map((k) =>
    k.toLowerCase(),
  ),
);
/** The sidecar's secret keys (external-snapshotter `pkg/utils`), stripped before the driver sees them. */
const IGNORED_KEYS = new Set(
  [
    'csi.storage.k8s.io/snapshotter-secret-name',
    'csi.storage.k8s.io/snapshotter-secret-namespace',
    'csi.storage.k8s.io/snapshotter-list-secret-name',
    'csi.storage.k8s.io/snapshotter-list-secret-namespace',
  ],
);

/**
 * The snapshot a class asks for, or a ParameterError naming the key at fault. Pure: a bad
 * class fails before any EC2 call.
 */
export function snapshotSpecFor(input: SnapshotSpecInput): SnapshotSpec {
  const tagEntries: ParameterEntry[] = [];
  let fastSnapshotRestoreZones: string[] = [];
  let copyRegion: { key: string; value: string } | undefined;
  let copyKey: { key: string; value: string } | undefined;
  for (const [key, value] of Object.entries(input.parameters ?? {})) {
    const lower = key.toLowerCase();
    if (IGNORED_KEYS.has(key)) continue;
    if (lower === COPY_TO_REGION) {
      if (!REGION_NAME.test(value)) throw new ParameterError(key, `${JSON.stringify(value)} is not an AWS Region name (such as us-west-2)`);
      copyRegion = { key, value };
    } else if (lower === COPY_KMS_KEY_ID) {
      if (value.trim() === '') throw new ParameterError(key, 'names no KMS key');
      copyKey = { key, value };
    } else if (lower === FAST_SNAPSHOT_RESTORE_ZONES) {
      fastSnapshotRestoreZones = value.replace(/ /g, '').split(',').filter((zone) => zone !== '');
      if (fastSnapshotRestoreZones.length === 0) throw new ParameterError(key, 'names no availability zone');
    } else if (lower === OUTPOST_ARN) {
      throw new ParameterError(key, 'snapshots on AWS Outposts are not supported by volhook');
    } else if (LOCK_KEYS.has(lower)) {
      throw new ParameterError(key, 'snapshot locks are not supported by volhook: a locked snapshot cannot be deleted, so a Delete policy could not be honoured');
    } else if (key.startsWith(TAG_SPECIFICATION_PREFIX)) {
      tagEntries.push({ key, value });
    } else {
      throw new ParameterError(key, 'is not a VolumeSnapshotClass parameter of the EBS CSI driver');
    }
  }
  tagEntries.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const tags = tagsFrom(tagEntries, {
    VolumeSnapshotName: input.volumeSnapshotName,
    VolumeSnapshotNamespace: input.volumeSnapshotNamespace,
    VolumeSnapshotContentName: input.volumeSnapshotContentName,
  });
  if (copyKey && !copyRegion) throw new ParameterError(copyKey.key, 'needs copyToRegion: it is the key of the copy in that Region');
  const copy = copyRegion && { region: copyRegion.value, ...(copyKey && { kmsKeyId: copyKey.value }) };
  return { tags, fastSnapshotRestoreZones, ...(copy && { copy }) };
}
