import { ParameterError } from './errors.js';

/**
 * Every StorageClass key of the EBS CSI driver v1.64, by the name the code uses, spelled as
 * the driver documents it: its docs/parameters.md list plus the keys its CreateVolume accepts
 * without documenting them (`blockExpress`, `blockAttachUntilInitialized`, the legacy
 * `fstype`). Matched as the driver and the external-provisioner match them: case-insensitively,
 * except `csi.storage.k8s.io/fstype`, which the external-provisioner reads case-sensitively
 * (see {@link CASE_SENSITIVE_KEYS}).
 */
export const PARAMETER_KEYS = {
  type: 'type',
  iops: 'iops',
  iopsPerGB: 'iopsPerGB',
  allowAutoIOPSPerGBIncrease: 'allowAutoIOPSPerGBIncrease',
  allowAutoIOPSIncreaseOnModify: 'allowAutoIOPSIncreaseOnModify',
  throughput: 'throughput',
  encrypted: 'encrypted',
  kmsKeyId: 'kmsKeyId',
  volumeInitializationRate: 'volumeInitializationRate',
  blockAttachUntilInitialized: 'blockAttachUntilInitialized',
  blockExpress: 'blockExpress',
  fsType: 'csi.storage.k8s.io/fstype',
  legacyFsType: 'fstype',
  blockSize: 'blockSize',
  inodeSize: 'inodeSize',
  bytesPerInode: 'bytesPerInode',
  numberOfInodes: 'numberOfInodes',
  ext4BigAlloc: 'ext4BigAlloc',
  ext4ClusterSize: 'ext4ClusterSize',
  ext4EncryptionSupport: 'ext4EncryptionSupport',
} as const;

export type ParameterName = keyof typeof PARAMETER_KEYS;

/**
 * Keys matched exactly. The external-provisioner strips `csi.storage.k8s.io/` keys with a
 * case-sensitive prefix test, so `CSI.Storage.K8s.io/FSType` reaches the driver, which has
 * no such key and refuses it.
 */
const CASE_SENSITIVE_KEYS: ReadonlySet<ParameterName> = new Set(['fsType']);

/**
 * The driver's tag prefix, matched case-sensitively and with nothing required after it:
 * `tagSpecification_1`, `tagSpecification1` and `tagSpecification` are tags;
 * `tagspecification_1` is an unknown key (pkg/driver/controller.go, `strings.HasPrefix`).
 */
export const TAG_SPECIFICATION_PREFIX = 'tagSpecification';

/**
 * Secret references the external-provisioner reads and strips before CreateVolume, so the
 * driver never sees them (kubernetes-csi/external-provisioner `removePrefixedParameters`).
 * volhook uses no secrets; accepting and ignoring them keeps classes that name them — shared
 * with other tooling, or migrated from a driver that used them — working as they did.
 * Matched exactly, as the external-provisioner matches them; any other `csi.storage.k8s.io/`
 * key is refused, as the external-provisioner refuses it.
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
  /** The `tagSpecification*` entries, in the class's order. */
  tagSpecifications: ParameterEntry[];
}

const BY_LOWER_KEY = new Map<string, ParameterName>(
  (Object.entries(PARAMETER_KEYS) as [ParameterName, string][])
    .filter(([name]) => !CASE_SENSITIVE_KEYS.has(name))
    .map(([name, key]) => [key.toLowerCase(), name]),
);
const BY_EXACT_KEY = new Map<string, ParameterName>([...CASE_SENSITIVE_KEYS].map((name) => [PARAMETER_KEYS[name], name]));
const IGNORED = new Set(IGNORED_PARAMETER_KEYS);

/**
 * Sorts a class's parameters by key, with the driver's case rules.
 *
 * @throws ParameterError for an unknown key (nothing is sent to EC2 for a class we do not
 * fully understand), and for one key given twice in different case with different values —
 * the driver would take either one, by Go's random map order. Given twice with the same
 * value (as a CSI-migration translation can produce), there is nothing to choose.
 */
export function readParameters(parameters: Record<string, string> | undefined): ClassParameters {
  const known = new Map<ParameterName, ParameterEntry>();
  const tagSpecifications: ParameterEntry[] = [];

  for (const [key, value] of Object.entries(parameters ?? {})) {
    const name = BY_EXACT_KEY.get(key) ?? BY_LOWER_KEY.get(key.toLowerCase());
    if (name) {
      const earlier = known.get(name);
      // Two legacy fstype keys are refused whatever their values, as the external-provisioner does.
      if (earlier && (earlier.value !== value || name === 'legacyFsType')) {
        throw new ParameterError(key, `is the same key as "${earlier.key}" (keys are case-insensitive); give it once`);
      }
      if (!earlier) known.set(name, { key, value });
    } else if (key.startsWith(TAG_SPECIFICATION_PREFIX)) {
      tagSpecifications.push({ key, value });
    } else if (!IGNORED.has(key)) {
      throw new ParameterError(key, `is not a StorageClass parameter of the EBS CSI driver (${describeKnownKeys()})`);
    }
  }
  return { get: (name) => known.get(name), tagSpecifications };
}

function describeKnownKeys(): string {
  return `known: ${Object.values(PARAMETER_KEYS).join(', ')}, ${TAG_SPECIFICATION_PREFIX}* (case-sensitive), csi.storage.k8s.io/*-secret-*`;
}

/**
 * A boolean flag's value: only the exact string "true" is true, anything else ("True", "yes",
 * "1") is false — the reference driver's `value == "true"`, kept so a class behaves the same
 * under volhook as under the driver.
 */
export function isTrue(entry: ParameterEntry | undefined): boolean {
  return entry?.value === 'true';
}

const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;

/**
 * A number parameter as the driver reads it, `strconv.ParseInt(value, 10, 32)`: decimal, an
 * optional sign, no spaces, within int32. `undefined` when the key is absent. An empty value
 * is an error (ParseInt's "invalid syntax"); zero or less parses, and the caller treats it as
 * "not set", as the driver's `> 0` checks do.
 *
 * @throws ParameterError naming the key.
 */
export function int32Parameter(entry: ParameterEntry | undefined): number | undefined {
  if (!entry) return undefined;
  if (!/^[+-]?\d+$/.test(entry.value)) {
    throw new ParameterError(entry.key, `"${entry.value}" is not a whole number`);
  }
  const n = Number(entry.value);
  if (n < INT32_MIN || n > INT32_MAX) {
    throw new ParameterError(entry.key, `${entry.value} is out of range (the driver reads a 32-bit integer)`);
  }
  return n;
}

/**
 * A number parameter that only has an effect when above zero (iops, iopsPerGB, throughput,
 * volumeInitializationRate): the entry and its value, or `undefined` when absent or ≤ 0.
 */
export function positiveInt32Parameter(entry: ParameterEntry | undefined): { entry: ParameterEntry; value: number } | undefined {
  const value = int32Parameter(entry);
  return entry && value !== undefined && value > 0 ? { entry, value } : undefined;
}
