/**
 * In-tree `kubernetes.io/aws-ebs` StorageClasses as CSI migration reads them: csi-translation-lib's
 * `TranslateInTreeStorageClassToCSI` (plugins/aws_ebs.go, v0.34), which external-provisioner
 * applies before provisioning a claim of such a class.
 *
 * Where upstream's answer depends on Go's random map order, volhook decides one way and says
 * so: `zone` with `zones`, and two spellings of the filesystem type, are refused;
 * `allowAutoIOPSPerGBIncrease` already in the class is set to "true" under its own spelling
 * instead of getting a second, lower-case twin. `zones` entries are trimmed, as the in-tree
 * plugin trimmed them (upstream keeps `" us-east-1b"` and asks for a zone of that name).
 */
import { EBS_DRIVER, IN_TREE_EBS_PLUGIN, TopologyKeys, type StorageClass } from '../contract/index.js';
import { TranslationError } from './errors.js';
import { BETA_ZONE_LABEL } from './topology.js';

type TopologyTerm = NonNullable<StorageClass['allowedTopologies']>[number];

/** The topology key zone(s) and zone allowedTopologies become (`AWSEBSTopologyKey`). */
export const MIGRATED_TOPOLOGY_KEY = TopologyKeys.ebsZone;
const CSI_FS_TYPE_KEY = 'csi.storage.k8s.io/fstype';
const ALLOW_IOPS_INCREASE_KEY = 'allowautoiopspergbincrease';

/**
 * The CSI form of an in-tree class; the class given is not changed. Parameter keys match
 * case-insensitively:
 *
 * - `fsType` → `csi.storage.k8s.io/fstype`, value unchanged;
 * - `zone` / `zones` (comma-separated) → removed, and `allowedTopologies` becomes one term
 *   `topology.ebs.csi.aws.com/zone In [zones]`; with `allowedTopologies` as well: an error;
 * - `iopsPerGB` → kept as spelled, plus `allowautoiopspergbincrease: "true"` (the in-tree
 *   plugin raised IOPS to the type's minimum rather than fail);
 * - everything else (`type`, `encrypted`, `kmsKeyId`, unknown keys) → unchanged;
 * - `allowedTopologies` without zone(s): `topology.kubernetes.io/zone` and
 *   `failure-domain.beta.kubernetes.io/zone` expressions → `topology.ebs.csi.aws.com/zone`,
 *   other keys and the terms' structure unchanged.
 *
 * A class without `type` stays without: see {@link withInTreeVolumeType} for that.
 *
 * @throws TranslationError naming the parameters at fault
 */
export function translateInTreeStorageClassToCsi(sc: StorageClass): StorageClass {
  const params: Record<string, string> = {};
  const fsTypeKeys: string[] = [];
  const zoneKeys: string[] = [];
  let generated: TopologyTerm[] | undefined;
  let iopsPerGB = false;

  for (const [key, value] of Object.entries(sc.parameters ?? {})) {
    switch (key.toLowerCase()) {
      case 'fstype':
      case CSI_FS_TYPE_KEY:
        fsTypeKeys.push(key);
        params[CSI_FS_TYPE_KEY] = value;
        break;
      case 'zone':
        zoneKeys.push(key);
        generated = zoneTerms(key, [value]);
        break;
      case 'zones':
        zoneKeys.push(key);
        generated = zoneTerms(key, value.split(','));
        break;
      case 'iopspergb':
        params[key] = value;
        iopsPerGB = true;
        break;
      default:
        params[key] = value;
    }
  }
  if (fsTypeKeys.length > 1) {
    throw new TranslationError(`parameters ${fsTypeKeys.map((k) => `"${k}"`).join(' and ')} both set the filesystem type; give one`);
  }
  if (zoneKeys.length > 1) {
    throw new TranslationError(`both ${zoneKeys.join(' and ')} StorageClass parameters must not be used at the same time`);
  }
  if (iopsPerGB) {
    const spelling = Object.keys(params).find((k) => k.toLowerCase() === ALLOW_IOPS_INCREASE_KEY) ?? ALLOW_IOPS_INCREASE_KEY;
    params[spelling] = 'true';
  }

  const given = sc.allowedTopologies ?? [];
  let allowedTopologies = sc.allowedTopologies;
  if (generated && given.length > 0) {
    throw new TranslationError('cannot simultaneously set allowed topologies and zone/zones parameters');
  } else if (generated) {
    allowedTopologies = generated;
  } else if (given.length > 0) {
    allowedTopologies = translateAllowedTopologies(given);
  }

  const translated: StorageClass = { ...structuredClone(sc), parameters: params };
  if (allowedTopologies === undefined) delete translated.allowedTopologies;
  else translated.allowedTopologies = allowedTopologies;
  return translated;
}

/** `generateToplogySelectors`: one term, one expression on the EBS topology key. */
function zoneTerms(key: string, zones: string[]): TopologyTerm[] {
  const values = zones.map((zone) => zone.trim());
  if (values.some((zone) => zone === '')) {
    throw new TranslationError(`${key}: "${zones.join(',')}" must be zone names separated by commas, with none empty`);
  }
  return [{ matchLabelExpressions: [{ key: MIGRATED_TOPOLOGY_KEY, values }] }];
}

/** `translateAllowedTopologies`: the GA and beta zone keys become the EBS one; nothing else changes. */
function translateAllowedTopologies(terms: TopologyTerm[]): TopologyTerm[] {
  return terms.map((term) => ({
    ...structuredClone(term),
    matchLabelExpressions: term.matchLabelExpressions.map((expression) =>
      expression.key === TopologyKeys.wellKnownZone || expression.key === BETA_ZONE_LABEL
        ? { key: MIGRATED_TOPOLOGY_KEY, values: [...expression.values] }
        : structuredClone(expression),
    ),
  }));
}

/** The in-tree plugin's volume type when a class names none (the EBS CSI driver's is gp3). */
export const IN_TREE_DEFAULT_VOLUME_TYPE = 'gp2';

/**
 * The class with `type: gp2` when it has no `type` or an empty one. The in-tree plugin made
 * gp2 disks for such a class; upstream migration leaves `type` out and the EBS CSI driver
 * then makes gp3. volhook keeps the disk type users had before migration: a cluster moving
 * to volhook must not change what an existing class makes.
 */
export function withInTreeVolumeType(sc: StorageClass): StorageClass {
  const params = { ...sc.parameters };
  const key = Object.keys(params).find((k) => k.toLowerCase() === 'type');
  if (key !== undefined && params[key] !== '') return sc;
  params[key ?? 'type'] = IN_TREE_DEFAULT_VOLUME_TYPE;
  return { ...sc, parameters: params };
}

/** The class a provisioner provisions with, and the in-tree plugin it took over, if any. */
export interface ProvisioningClass {
  storageClass: StorageClass;
  /** `kubernetes.io/aws-ebs` for a migrated in-tree class: its PVs are written in-tree. */
  migratedFrom?: typeof IN_TREE_EBS_PLUGIN;
}

/**
 * What provisioner `provisionerName` makes of claims of `sc`: the class itself when it names
 * the provisioner; for the EBS CSI driver, an in-tree `kubernetes.io/aws-ebs` class translated
 * (and given its in-tree volume type), as external-provisioner does with
 * `--supports-migration-from-in-tree`; otherwise undefined (not ours).
 *
 * @throws TranslationError for an in-tree class that cannot be translated
 */
export function provisioningClass(sc: StorageClass, provisionerName: string): ProvisioningClass | undefined {
  if (sc.provisioner === provisionerName) return { storageClass: sc };
  if (sc.provisioner === IN_TREE_EBS_PLUGIN && provisionerName === EBS_DRIVER) {
    return { storageClass: withInTreeVolumeType(translateInTreeStorageClassToCsi(sc)), migratedFrom: IN_TREE_EBS_PLUGIN };
  }
  return undefined;
}
