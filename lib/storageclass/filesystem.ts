import { ParameterError } from './errors.js';
import { isTrue, type ClassParameters, type ParameterEntry, type ParameterName } from './parameters.js';

/** Filesystems the EBS CSI node plugin formats on Linux. */
export const FS_TYPES = ['ext2', 'ext3', 'ext4', 'xfs'] as const;
export type FsType = (typeof FS_TYPES)[number];

/** The external-provisioner's default `--default-fstype` for the EBS driver. */
export const DEFAULT_FS_TYPE: FsType = 'ext4';

type FormattingOption = Extract<
  ParameterName,
  'blockSize' | 'inodeSize' | 'bytesPerInode' | 'numberOfInodes' | 'ext4BigAlloc' | 'ext4ClusterSize'
>;

/**
 * The `csi.volumeAttributes` key the EBS CSI node plugin reads for each formatting option
 * (aws-ebs-csi-driver pkg/driver/constants.go): lower case, unlike the StorageClass keys.
 */
export const VOLUME_ATTRIBUTE_KEYS: Readonly<Record<FormattingOption, string>> = {
  blockSize: 'blocksize',
  inodeSize: 'inodesize',
  bytesPerInode: 'bytesperinode',
  numberOfInodes: 'numberofinodes',
  ext4BigAlloc: 'ext4bigalloc',
  ext4ClusterSize: 'ext4clustersize',
};

const FORMATTING_OPTIONS = Object.keys(VOLUME_ATTRIBUTE_KEYS) as FormattingOption[];

/**
 * Options mkfs of each filesystem has no flag for (the driver's `FileSystemConfigs`):
 * bigalloc is ext4's alone, and mkfs.xfs takes no bytes-per-inode or inode count.
 */
const UNSUPPORTED: Readonly<Record<FsType, ReadonlySet<FormattingOption>>> = {
  ext2: new Set(['ext4BigAlloc', 'ext4ClusterSize']),
  ext3: new Set(['ext4BigAlloc', 'ext4ClusterSize']),
  ext4: new Set(),
  xfs: new Set(['bytesPerInode', 'numberOfInodes', 'ext4BigAlloc', 'ext4ClusterSize']),
};

export interface FilesystemSpec {
  /** `undefined` for Block: there is nothing to format. */
  fsType?: FsType;
  volumeAttributes: Record<string, string>;
}

/**
 * The filesystem and mkfs options for the PV. The options travel to the node plugin in
 * `csi.volumeAttributes`, which is why they are checked here: a wrong one would otherwise
 * surface only as a mount failure on the node, long after the volume exists.
 *
 * An empty fstype means the default (as in the external-provisioner); an empty formatting
 * option means "not set" (as in the driver). A formatting option is only "set" for
 * ext4BigAlloc when it is "true".
 *
 * @throws ParameterError when both fstype keys are given; for an fstype or formatting option
 * on a Block volume (there is no filesystem to apply it to); for an fstype other than ext2,
 * ext3, ext4, xfs; for a non-alphanumeric option value (it becomes an mkfs argument); for an
 * option the filesystem lacks; and for ext4ClusterSize without ext4BigAlloc: "true".
 */
export function filesystemFor(params: ClassParameters, volumeMode: 'Filesystem' | 'Block'): FilesystemSpec {
  const fsType = fsTypeFor(params, volumeMode);
  const volumeAttributes: Record<string, string> = {};

  for (const option of FORMATTING_OPTIONS) {
    const entry = params.get(option);
    if (!entry || entry.value === '') continue;
    if (option === 'ext4BigAlloc') {
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
  const entry: ParameterEntry | undefined = current ?? legacy;
  if (volumeMode === 'Block') {
    // ebs.md: the fstype is "not for Block". A class that names one was written for
    // filesystems; refusing beats silently ignoring it (the external-provisioner ignores it).
    if (entry && entry.value !== '') {
      throw new ParameterError(entry.key, `"${entry.value}" cannot be used with volumeMode Block (a raw device has no filesystem)`);
    }
    return undefined;
  }
  if (!entry || entry.value === '') return DEFAULT_FS_TYPE;
  if (!(FS_TYPES as readonly string[]).includes(entry.value)) {
    throw new ParameterError(entry.key, `"${entry.value}" is not a supported filesystem (${FS_TYPES.join(', ')})`);
  }
  return entry.value as FsType;
}
