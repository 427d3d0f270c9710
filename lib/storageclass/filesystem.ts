import { ParameterError } from './errors.js';
import { isTrue, type ClassParameters, type ParameterEntry, type ParameterName } from './parameters.js';

/**
 * Filesystems the EBS CSI node plugin formats and mounts (`ValidFSTypes`, pkg/driver/node.go):
 * ext3, ext4 and xfs on Linux, ntfs on Windows nodes. The node refuses anything else
 * (`NodeStageVolume: invalid fstype ext2`), so volhook refuses it before a disk exists.
 */
export const FS_TYPES = ['ext3', 'ext4', 'xfs', 'ntfs'] as const;
export type FsType = (typeof FS_TYPES)[number];

/** The external-provisioner's default `--default-fstype` for the EBS driver. */
export const DEFAULT_FS_TYPE: FsType = 'ext4';

type FormattingOption = Extract<
  ParameterName,
  'blockSize' | 'inodeSize' | 'bytesPerInode' | 'numberOfInodes' | 'ext4BigAlloc' | 'ext4ClusterSize' | 'ext4EncryptionSupport'
>;

/**
 * The `csi.volumeAttributes` key the EBS CSI node plugin reads for each formatting option
 * (aws-ebs-csi-driver pkg/driver/constants.go): lower case, unlike the StorageClass keys.
 * In the driver's order, which decides which error comes first.
 */
export const VOLUME_ATTRIBUTE_KEYS: Readonly<Record<FormattingOption, string>> = {
  blockSize: 'blocksize',
  inodeSize: 'inodesize',
  bytesPerInode: 'bytesperinode',
  numberOfInodes: 'numberofinodes',
  ext4BigAlloc: 'ext4bigalloc',
  ext4ClusterSize: 'ext4clustersize',
  ext4EncryptionSupport: 'ext4encryptionsupport',
};

const FORMATTING_OPTIONS = Object.keys(VOLUME_ATTRIBUTE_KEYS) as FormattingOption[];

/** Options that are flags: set only when exactly "true". The others are mkfs values. */
const FLAG_OPTIONS: ReadonlySet<FormattingOption> = new Set(['ext4BigAlloc', 'ext4EncryptionSupport']);

const EXT4_ONLY: readonly FormattingOption[] = ['ext4BigAlloc', 'ext4ClusterSize', 'ext4EncryptionSupport'];

/**
 * Options mkfs of each filesystem has no flag for (the driver's `FileSystemConfigs`):
 * bigalloc, cluster size and fscrypt are ext4's alone, mkfs.xfs takes no bytes-per-inode or
 * inode count, and the Windows node formats ntfs with none of them.
 */
const UNSUPPORTED: Readonly<Record<FsType, ReadonlySet<FormattingOption>>> = {
  ext3: new Set(EXT4_ONLY),
  ext4: new Set(),
  xfs: new Set(['bytesPerInode', 'numberOfInodes', ...EXT4_ONLY]),
  ntfs: new Set(FORMATTING_OPTIONS),
};

export interface FilesystemSpec {
  /** `undefined` for Block: there is nothing to format. */
  fsType?: FsType;
  volumeAttributes: Record<string, string>;
}

/**
 * The filesystem and mkfs options for the PV. The options travel to the node plugin in
 * `csi.volumeAttributes`, which is why they are checked here, as the driver's controller
 * checks them: a wrong one would otherwise surface only as a mount failure on the node, long
 * after the volume exists.
 *
 * An empty fstype means the default (as in the external-provisioner); for Block, the fstype
 * is ignored, as the external-provisioner ignores it (one class serves both modes). An empty
 * formatting option means "not set" (as in the driver); ext4BigAlloc and
 * ext4EncryptionSupport are only set by "true".
 *
 * @throws ParameterError when both fstype keys are given; for an fstype the node plugin does
 * not mount (anything but ext3, ext4, xfs, ntfs, in lower case); for a formatting option on
 * a Block volume; for a non-alphanumeric option value (it becomes an mkfs argument); for an
 * option the filesystem lacks; and for ext4ClusterSize without ext4BigAlloc: "true".
 */
export function filesystemFor(params: ClassParameters, volumeMode: 'Filesystem' | 'Block'): FilesystemSpec {
  const fsType = fsTypeFor(params, volumeMode);
  const volumeAttributes: Record<string, string> = {};

  for (const option of FORMATTING_OPTIONS) {
    const entry = params.get(option);
    if (!entry || entry.value === '') continue;
    if (FLAG_OPTIONS.has(option)) {
      if (!isTrue(entry)) continue;
    } else if (!/^[A-Za-z0-9]+$/.test(entry.value)) {
      throw new ParameterError(entry.key, `"${entry.value}" must be letters and digits only (it is passed to mkfs)`);
    }
    if (fsType === undefined) {
      throw new ParameterError(entry.key, 'is a filesystem option and cannot be used with volumeMode Block');
    }
    if (UNSUPPORTED[fsType].has(option)) {
      throw new ParameterError(entry.key, `cannot be used with fstype ${fsType}`);
    }
    volumeAttributes[VOLUME_ATTRIBUTE_KEYS[option]] = entry.value;
  }

  const clusterSize = params.get('ext4ClusterSize');
  if (clusterSize && clusterSize.value !== '' && !isTrue(params.get('ext4BigAlloc'))) {
    throw new ParameterError(clusterSize.key, 'needs ext4BigAlloc: "true" (a cluster size only exists with bigalloc)');
  }
  return fsType === undefined ? { volumeAttributes } : { fsType, volumeAttributes };
}

function fsTypeFor(params: ClassParameters, volumeMode: 'Filesystem' | 'Block'): FsType | undefined {
  const current = params.get('fsType');
  const legacy = params.get('legacyFsType');
  if (current && legacy) {
    throw new ParameterError(legacy.key, `cannot be combined with "${current.key}"; keep only "${current.key}"`);
  }
  if (volumeMode === 'Block') return undefined;
  const entry: ParameterEntry | undefined = current ?? legacy;
  if (!entry || entry.value === '') return DEFAULT_FS_TYPE;
  if (!(FS_TYPES as readonly string[]).includes(entry.value)) {
    throw new ParameterError(
      entry.key,
      `"${entry.value}" is not a filesystem the EBS CSI node plugin mounts (${FS_TYPES.join(', ')}, in lower case)`,
    );
  }
  return entry.value as FsType;
}
