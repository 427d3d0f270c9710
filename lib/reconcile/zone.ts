/**
 * Where a new volume goes. WaitForFirstConsumer: the zone of the node the scheduler picked.
 * Immediate: one of the allowed zones, picked by a stable hash of the claim's uid, so that a
 * retry (which cannot remember the first attempt) picks the same zone again.
 *
 * A StorageClass's `allowedTopologies` may name zones by name under any of the zone keys, or
 * by ID under `topology.k8s.aws/zone-id` (IDs become names through the Region's zones). Any
 * other key is refused, naming it — never read as "any zone" — and Outposts, which volhook
 * cannot create volumes on, are refused by name.
 */
import { createHash } from 'node:crypto';
import {
  Annotations,
  nodeZone,
  nodeZoneId,
  TopologyKeys,
  ZONE_LABELS,
  type PersistentVolumeClaimItem,
  type StorageClass,
} from '../contract/index.js';
import type { Zone } from '../ec2/types.js';

/** Keys a zone's name is given under, in allowedTopologies as on nodes. */
export const ZONE_NAME_KEYS: readonly string[] = ZONE_LABELS;

/** The EBS CSI driver's Outpost keys. */
export const OUTPOST_KEYS: readonly string[] = [
  TopologyKeys.ebsOutpostId,
  TopologyKeys.ebsRegion,
  TopologyKeys.ebsPartition,
  TopologyKeys.ebsAccountId,
];

/** The StorageClass parameter that asks the EBS CSI driver for a volume on an Outpost (any case). */
export const OUTPOST_ARN_PARAMETER = 'outpostArn';

/**
 * One allowedTopologies term as zones: the names it allows and the IDs it allows, each the
 * intersection of the term's expressions under those keys (absent: no such expression). A term
 * with neither allows no zone: an empty topology selector term matches nothing.
 */
export interface ZoneTerm {
  names?: string[];
  ids?: string[];
}

/** What a class says about placement: anywhere, some zones, or something volhook will not do. */
export type Placement =
  | { kind: 'any' }
  | { kind: 'terms'; terms: ZoneTerm[] }
  | { kind: 'unsupported'; reason: 'UnsupportedTopologyKey' | 'OutpostNotSupported'; message: string };

/**
 * Reads a class's `allowedTopologies` (and its `outpostArn` parameter). Terms are alternatives
 * (any one may match); within a term every expression must hold.
 */
export function readPlacement(storageClass: StorageClass): Placement {
  const outpostArn = Object.keys(storageClass.parameters ?? {}).find((key) => key.toLowerCase() === OUTPOST_ARN_PARAMETER.toLowerCase());
  if (outpostArn !== undefined) return outposts(`parameter "${outpostArn}"`);
  const terms = storageClass.allowedTopologies ?? [];
  if (terms.length === 0) return { kind: 'any' };
  const read: ZoneTerm[] = [];
  for (const term of terms) {
    const zoneTerm: ZoneTerm = {};
    for (const { key, values } of term.matchLabelExpressions) {
      if (OUTPOST_KEYS.includes(key)) return outposts(`allowedTopologies key "${key}"`);
      const field = ZONE_NAME_KEYS.includes(key) ? 'names' : key === TopologyKeys.zoneId ? 'ids' : undefined;
      if (!field) {
        return {
          kind: 'unsupported',
          reason: 'UnsupportedTopologyKey',
          message:
            `allowedTopologies key "${key}" is not one volhook places volumes by ` +
            `(${[...ZONE_NAME_KEYS, TopologyKeys.zoneId].join(', ')}); refused rather than read as "any zone"`,
        };
      }
      const earlier = zoneTerm[field];
      zoneTerm[field] = earlier ? earlier.filter((v) => values.includes(v)) : [...new Set(values)];
    }
    read.push(zoneTerm);
  }
  return { kind: 'terms', terms: read };
}

function outposts(what: string): Placement {
  return {
    kind: 'unsupported',
    reason: 'OutpostNotSupported',
    message: `${what} asks for a volume on an AWS Outpost, and volhook cannot create volumes on Outposts`,
  };
}

/** The zones a class's terms allow, sorted, with the zone IDs the Region does not have. */
export function termZones(terms: readonly ZoneTerm[], regionZones: readonly Zone[]): { zones: string[]; unknownIds: string[] } {
  const nameOf = new Map(regionZones.map((z) => [z.id, z.name]));
  const zones = new Set<string>();
  const unknownIds = new Set<string>();
  for (const { names, ids } of terms) {
    for (const id of ids ?? []) if (!nameOf.has(id)) unknownIds.add(id);
    const byId = ids?.flatMap((id) => nameOf.get(id) ?? []);
    const allowed = names && byId ? names.filter((n) => byId.includes(n)) : (names ?? byId ?? []);
    for (const zone of allowed) zones.add(zone);
  }
  return { zones: [...zones].sort(), unknownIds: [...unknownIds].sort() };
}

/** An index in [0, n) that depends only on `key`: the first 32 bits of its SHA-256. */
export function stableIndex(key: string, n: number): number {
  return createHash('sha256').update(key).digest().readUInt32BE(0) % n;
}

export type ZoneChoice =
  | { kind: 'zone'; zone: string }
  /** WaitForFirstConsumer and no node selected yet: nothing to do until the scheduler picks one. */
  | { kind: 'wait' }
  /** The item lacks the selected node's facts (a forwarder out of step): ask again later. */
  | { kind: 'incomplete'; message: string }
  /** The selected node (or its CSINode) is gone: the scheduler must pick again. */
  | { kind: 'nodeGone'; node: string }
  /** No zone can be used; `message` says why. */
  | { kind: 'none'; message: string }
  /** The class asks for a placement volhook does not make; `message` names the key or parameter. */
  | { kind: 'unsupported'; reason: string; message: string }
  /** Zone IDs are involved: ask again with the Region's zones. */
  | { kind: 'needZones' };

/**
 * The zone for a claim's volume, within the class's allowedTopologies and the cluster
 * registration's `allowedZones` (empty = any). `regionZones` (the gateway's `zones()`) is
 * needed only where a zone ID must become a name; without it such a claim answers `needZones`,
 * after every refusal that needs no cloud.
 */
export function chooseZone(
  item: PersistentVolumeClaimItem,
  storageClass: StorageClass,
  allowedZones: readonly string[],
  regionZones?: readonly Zone[],
  /** A clone's source volume's zone: the only zone the clone can be in (CopyVolumes copies in place). */
  sourceZone?: string,
): ZoneChoice {
  const placement = readPlacement(storageClass);
  if (placement.kind === 'unsupported') return placement;
  const terms = placement.kind === 'terms' ? placement.terms : undefined;

  let node: { name: string; zone: string | undefined; zoneId: string | undefined } | undefined;
  if (storageClass.volumeBindingMode === 'WaitForFirstConsumer') {
    const nodeName = item.pvc.metadata.annotations?.[Annotations.selectedNode];
    if (!nodeName) return { kind: 'wait' };
    if (item.selectedNode === null) return { kind: 'nodeGone', node: nodeName };
    if (item.selectedNode === undefined) {
      return { kind: 'incomplete', message: `the item carries no facts about the selected node "${nodeName}"` };
    }
    node = { name: nodeName, zone: nodeZone(item.selectedNode), zoneId: nodeZoneId(item.selectedNode) };
  }

  const needsIds = (terms?.some((t) => t.ids !== undefined) ?? false) || (node !== undefined && !node.zone && node.zoneId !== undefined);
  if (needsIds && !regionZones) return { kind: 'needZones' };
  const zonesOfRegion = regionZones ?? [];
  const allowed = terms && termZones(terms, zonesOfRegion);
  const permitted = (zone: string) =>
    (allowed === undefined || allowed.zones.includes(zone)) && (allowedZones.length === 0 || allowedZones.includes(zone));

  if (node) {
    const zone = node.zone ?? zonesOfRegion.find((z) => z.id === node.zoneId)?.name;
    if (!zone) {
      const byId = node.zoneId ? `; its ${TopologyKeys.zoneId} ${node.zoneId} is not a zone of the Region` : '';
      return { kind: 'none', message: `node "${node.name}" has no zone label (${ZONE_LABELS.join(', ')}) and no aws:/// providerID${byId}` };
    }
    if (!permitted(zone)) return { kind: 'none', message: `zone ${zone} of node "${node.name}" is not allowed ${whereAllowed(allowed, allowedZones)}` };
    if (sourceZone !== undefined && zone !== sourceZone) {
      return { kind: 'none', message: `the clone's source volume is in zone ${sourceZone}, but the selected node "${node.name}" is in zone ${zone}: a clone is made in its source's zone` };
    }
    return { kind: 'zone', zone };
  }
  if (sourceZone !== undefined) {
    if (permitted(sourceZone)) return { kind: 'zone', zone: sourceZone };
    return { kind: 'none', message: `the clone's source volume is in zone ${sourceZone}, which is not allowed ${whereAllowed(allowed, allowedZones)}` };
  }

  const offered = [...new Set(allowed?.zones ?? item.clusterZones)];
  const candidates = offered.filter(permitted).sort();
  if (candidates.length === 0) {
    const message =
      offered.length === 0
        ? `no zone to create the volume in: ${allowed ? `the StorageClass's allowedTopologies allow no zone${unknownIdsNote(allowed.unknownIds, zonesOfRegion)}` : 'the cluster reported no node zones and the StorageClass has no allowedTopologies'}`
        : `no zone to create the volume in: none of [${offered.sort().join(', ')}] is allowed ${whereAllowed(allowed, allowedZones)}`;
    return { kind: 'none', message };
  }
  return { kind: 'zone', zone: candidates[stableIndex(item.pvc.metadata.uid, candidates.length)]! };
}

function whereAllowed(allowed: { zones: string[]; unknownIds: string[] } | undefined, allowedZones: readonly string[]): string {
  const limits = [
    ...(allowed ? [`by the StorageClass's allowedTopologies [${allowed.zones.join(', ')}]`] : []),
    ...(allowedZones.length > 0 ? [`by the cluster registration's allowedZones [${allowedZones.join(', ')}]`] : []),
  ];
  return limits.join(' and ');
}

function unknownIdsNote(unknownIds: readonly string[], regionZones: readonly Zone[]): string {
  if (unknownIds.length === 0) return '';
  const known = regionZones.map((z) => `${z.id} (${z.name})`).join(', ');
  return ` (zone IDs not in the Region: ${unknownIds.join(', ')}; the Region has ${known || 'no zones'})`;
}
