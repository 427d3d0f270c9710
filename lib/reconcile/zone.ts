/**
 * Where a new volume goes. WaitForFirstConsumer: the zone of the node the scheduler picked.
 * Immediate: one of the allowed zones, picked by a stable hash of the claim's uid, so that a
 * retry (which cannot remember the first attempt) picks the same zone again.
 */
import { createHash } from 'node:crypto';
import { Annotations, nodeZone, ZONE_LABELS, type PersistentVolumeClaimItem, type StorageClass } from '../contract/index.js';

/**
 * The zones a class's `allowedTopologies` permit, under either zone key; undefined when they
 * do not restrict the zone. Terms are alternatives (any one may match); within a term, every
 * zone expression must hold, so its zones are the intersection of their values.
 */
export function allowedTopologyZones(storageClass: StorageClass): string[] | undefined {
  const terms = storageClass.allowedTopologies ?? [];
  if (terms.length === 0) return undefined;
  const zones = new Set<string>();
  for (const term of terms) {
    const expressions = term.matchLabelExpressions.filter((e) => ZONE_LABELS.includes(e.key));
    if (expressions.length === 0) return undefined; // this term allows every zone
    const [first, ...rest] = expressions.map((e) => e.values);
    for (const zone of first ?? []) if (rest.every((values) => values.includes(zone))) zones.add(zone);
  }
  return [...zones].sort();
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
  | { kind: 'none'; message: string };

/**
 * The zone for a claim's volume, within the class's allowedTopologies and the cluster
 * registration's `allowedZones` (empty = any).
 */
export function chooseZone(item: PersistentVolumeClaimItem, storageClass: StorageClass, allowedZones: readonly string[]): ZoneChoice {
  const topologyZones = allowedTopologyZones(storageClass);
  const permitted = (zone: string) =>
    (topologyZones === undefined || topologyZones.includes(zone)) && (allowedZones.length === 0 || allowedZones.includes(zone));

  if (storageClass.volumeBindingMode === 'WaitForFirstConsumer') {
    const nodeName = item.pvc.metadata.annotations?.[Annotations.selectedNode];
    if (!nodeName) return { kind: 'wait' };
    if (item.selectedNode === null) return { kind: 'nodeGone', node: nodeName };
    if (item.selectedNode === undefined) {
      return { kind: 'incomplete', message: `the item carries no facts about the selected node "${nodeName}"` };
    }
    const zone = nodeZone(item.selectedNode);
    if (!zone) return { kind: 'none', message: `node "${nodeName}" has no zone label (${ZONE_LABELS.join(', ')}) and no aws:/// providerID` };
    if (!permitted(zone)) return { kind: 'none', message: `zone ${zone} of node "${nodeName}" is not allowed ${whereAllowed(topologyZones, allowedZones)}` };
    return { kind: 'zone', zone };
  }

  const offered = [...new Set(topologyZones ?? item.clusterZones)];
  const candidates = offered.filter(permitted).sort();
  if (candidates.length === 0) {
    const message =
      offered.length === 0
        ? `no zone to create the volume in: ${topologyZones ? "the StorageClass's allowedTopologies allow no zone" : 'the cluster reported no node zones and the StorageClass has no allowedTopologies'}`
        : `no zone to create the volume in: none of [${offered.sort().join(', ')}] is allowed ${whereAllowed(topologyZones, allowedZones)}`;
    return { kind: 'none', message };
  }
  return { kind: 'zone', zone: candidates[stableIndex(item.pvc.metadata.uid, candidates.length)]! };
}

function whereAllowed(topologyZones: string[] | undefined, allowedZones: readonly string[]): string {
  const limits = [
    ...(topologyZones ? [`by the StorageClass's allowedTopologies [${topologyZones.join(', ')}]`] : []),
    ...(allowedZones.length > 0 ? [`by the cluster registration's allowedZones [${allowedZones.join(', ')}]`] : []),
  ];
  return limits.join(' and ');
}
