import { ParameterError } from './errors.js';

/**
 * The StorageClass keys volhook understands, by the name the code uses, spelled as
 * documented. Matching is case-insensitive (`IOPS` is `iops`), as in the reference driver.
 */
export const PARAMETER_KEYS = {
  type: 'type',
  iops: 'iops',
  iopsPerGB: 'iopsPerGB',
  allowAutoIOPSPerGBIncrease: 'allowAutoIOPSPerGBIncrease',
  throughput: 'throughput',
  encrypted: 'encrypted',
  kmsKeyId: 'kmsKeyId',
  fsType: 'csi.storage.k8s.io/fstype',
  legacyFsType: 'fstype',
  blockSize: 'blockSize',
  inodeSize: 'inodeSize',
  bytesPerInode: 'bytesPerInode',
  numberOfInodes: 'numberOfInodes',
  ext4BigAlloc: 'ext4BigAlloc',
  ext4ClusterSize: 'ext4ClusterSize',
} as const;

export type ParameterName = keyof typeof PARAMETER_KEYS;

/** `tagSpecification_<anything>`: one tag per key, the suffix only keeps the keys apart. */
export const TAG_SPECIFICATION_PREFIX = 'tagSpecification_';

/**
 * Secret references the external-provisioner reads and strips before CreateVolume, so the
 * driver never sees them (kubernetes-csi/external-provisioner `removePrefixedParameters`).
 * volhook uses no secrets; accepting and ignoring them keeps classes that name them — shared
 * with other tooling, or migrated from a driver that used them — working as they did.
 * Any other `csi.storage.k8s.io/` key is refused, as the external-provisioner refuses it.
 */
export const IGNORED_PARAMETER_KEYS: readonly string[] = [
  'secret-name',
  'secret-namespace',
  'provisioner-secret-name',
  'provisioner-secret-namespace',
  'controller-publish-secret-name',
  'controller-publish-secret-namespace',
  'node-stage-secret-name',
  'node-stage-secret-namespace',
  'node-publish-secret-name',
  'node-publish-secret-namespace',
  'controller-expand-secret-name',
  'controller-expand-secret-namespace',
  'node-expand-secret-name',
  'node-expand-secret-namespace',
  'controller-modify-secret-name',
  'controller-modify-secret-namespace',
].map((name) => `csi.storage.k8s.io/${name}`);

/** One StorageClass entry: the key exactly as the class spells it, and its value. */
export interface ParameterEntry {
  key: string;
  value: string;
}

/** A StorageClass's parameters, sorted into known keys and tag specifications. */
export interface ClassParameters {
  get(name: ParameterName): ParameterEntry | undefined;
  /** The `tagSpecification_*` entries, in the class's order. */
  tagSpecifications: ParameterEntry[];
}

const BY_LOWER_KEY = new Map<string, ParameterName>(
  (Object.entries(PARAMETER_KEYS) as [ParameterName, string][]).map(([name, key]) => [key.toLowerCase(), name]),
);
const IGNORED = new Set(IGNORED_PARAMETER_KEYS.map((key) => key.toLowerCase()));
const TAG_PREFIX = TAG_SPECIFICATION_PREFIX.toLowerCase();

/**
 * Sorts a class's parameters by key, case-insensitively.
 *
 * @throws ParameterError for an unknown key (nothing is sent to EC2 for a class we do not
 * fully understand) and for a key given twice in different case, which would otherwise be
 * resolved by map order.
 */
export function readParameters(parameters: Record<string, string> | undefined): ClassParameters {
  const known = new Map<ParameterName, ParameterEntry>();
  const tagSpecifications: ParameterEntry[] = [];
  const seen = new Map<string, string>();

  for (const [key, value] of Object.entries(parameters ?? {})) {
    const lower = key.toLowerCase();
    const earlier = seen.get(lower);
    if (earlier !== undefined) {
      throw new ParameterError(key, `is the same key as "${earlier}" (keys are case-insensitive); give it once`);
    }
    seen.set(lower, key);

    const name = BY_LOWER_KEY.get(lower);
    if (name) {
      known.set(name, { key, value });
    } else if (lower.startsWith(TAG_PREFIX) && lower.length > TAG_PREFIX.length) {
      tagSpecifications.push({ key, value });
    } else if (!IGNORED.has(lower)) {
      throw new ParameterError(key, `is not a StorageClass parameter volhook knows (${describeKnownKeys()})`);
    }
  }
  return { get: (name) => known.get(name), tagSpecifications };
}

function describeKnownKeys(): string {
  return `known: ${Object.values(PARAMETER_KEYS).join(', ')}, ${TAG_SPECIFICATION_PREFIX}N`;
}

/**
 * A boolean flag's value: only the exact string "true" is true, anything else ("True", "yes",
 * "1") is false — the reference driver's `value == "true"`, kept so a class behaves the same
 * under volhook as under the driver.
 */
export function isTrue(entry: ParameterEntry | undefined): boolean {
  return entry?.value === 'true';
}

/** Largest value EC2 takes for an Integer field (and the driver's int32 parse). */
const MAX_INT32 = 2 ** 31 - 1;

/**
 * A positive whole number in decimal ("3000"), as the driver's `strconv.ParseInt` reads it
 * but without a sign and never zero.
 */
export function positiveInteger(entry: ParameterEntry, unit: string): number {
  if (!/^\d+$/.test(entry.value)) {
    throw new ParameterError(entry.key, `"${entry.value}" is not a positive whole number of ${unit}`);
  }
  const n = Number(entry.value);
  if (n < 1) throw new ParameterError(entry.key, `must be at least 1 ${unit}, not ${entry.value}`);
  if (n > MAX_INT32) throw new ParameterError(entry.key, `${entry.value} ${unit} is more than EC2 accepts`);
  return n;
}
