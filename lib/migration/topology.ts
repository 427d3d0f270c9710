/**
 * PV node affinity and topology labels across CSI migration, as csi-translation-lib moves
 * them (plugins/in_tree_volume.go and `getAwsRegionFromZones` in plugins/aws_ebs.go, v0.34).
 * The helpers change the PV they are given; callers pass a copy.
 */
import { TopologyKeys, type PersistentVolume } from '../contract/index.js';
import { TranslationError } from './errors.js';

export const BETA_ZONE_LABEL = 'failure-domain.beta.kubernetes.io/zone';
export const BETA_REGION_LABEL = 'failure-domain.beta.kubernetes.io/region';
export const REGION_LABEL = 'topology.kubernetes.io/region';
/** Zones of a multi-zone PV label are joined with this (`labelMultiZoneDelimiter`). */
export const MULTI_ZONE_DELIMITER = '__';

type NodeAffinity = NonNullable<PersistentVolume['spec']['nodeAffinity']>;

/** The parts of a PV that topology translation reads and writes. */
export interface TopologyHolder {
  metadata: { labels?: Record<string, string> };
  spec: { nodeAffinity?: NodeAffinity };
}

const terms = (pv: TopologyHolder) => pv.spec.nodeAffinity?.required.nodeSelectorTerms ?? [];

function hasKey(pv: TopologyHolder, key: string): boolean {
  return terms(pv).some((term) => (term.matchExpressions ?? []).some((e) => e.key === key));
}

/**
 * `getTopologyLabel`: the zone and region keys the PV uses — GA if its node affinity has the GA
 * zone key, else beta if it has the beta one, else by its labels (GA first), else GA.
 */
export function topologyLabels(pv: TopologyHolder): { zone: string; region: string } {
  const ga = { zone: TopologyKeys.wellKnownZone, region: REGION_LABEL };
  const beta = { zone: BETA_ZONE_LABEL, region: BETA_REGION_LABEL };
  if (hasKey(pv, ga.zone)) return ga;
  if (hasKey(pv, beta.zone)) return beta;
  const labels = pv.metadata.labels ?? {};
  if (ga.zone in labels) return ga;
  if (beta.zone in labels) return beta;
  return ga;
}

/** `getTopologyValues`: every value of every expression on `key`, each once, sorted. */
export function topologyValues(pv: TopologyHolder, key: string): string[] {
  const values = new Set<string>();
  for (const term of terms(pv)) for (const e of term.matchExpressions ?? []) if (e.key === key) for (const v of e.values ?? []) values.add(v);
  return [...values].sort();
}

/** `replaceTopology`: every expression on `oldKey`, in every term, now on `newKey`. */
export function replaceTopology(pv: TopologyHolder, oldKey: string, newKey: string): void {
  for (const term of terms(pv)) for (const e of term.matchExpressions ?? []) if (e.key === oldKey) e.key = newKey;
}

/** `addTopology`: `key In [zones]` (trimmed, each once, sorted) appended to every term, making one if none. */
export function addTopology(pv: TopologyHolder, key: string, zones: string[]): void {
  const values = [...new Set(zones.map((z) => z.trim()).filter((z) => z !== ''))].sort();
  if (values.length === 0) return; // upstream returns an error its caller ignores
  pv.spec.nodeAffinity ??= { required: { nodeSelectorTerms: [] } };
  const required = pv.spec.nodeAffinity.required;
  if (required.nodeSelectorTerms.length === 0) required.nodeSelectorTerms.push({});
  for (const term of required.nodeSelectorTerms) (term.matchExpressions ??= []).push({ key, operator: 'In', values: [...values] });
}

/**
 * `translateTopologyFromInTreeToCSI`: the zone expressions (GA or beta) move to `csiKey`; a PV
 * without any gets `csiKey In [zones of its zone label]`; a beta region expression becomes GA.
 * Labels are not changed.
 */
export function topologyInTreeToCsi(pv: TopologyHolder, csiKey: string): void {
  const { zone, region } = topologyLabels(pv);
  if (topologyValues(pv, zone).length > 0) {
    replaceTopology(pv, zone, csiKey);
  } else {
    const label = pv.metadata.labels?.[zone];
    if (label !== undefined) addTopology(pv, csiKey, label.split(MULTI_ZONE_DELIMITER));
  }
  if (region === BETA_REGION_LABEL && topologyValues(pv, region).length > 0) replaceTopology(pv, region, REGION_LABEL);
}

/**
 * `translateTopologyFromCSIToInTree` with the AWS region parser: `csiKey` expressions move to
 * the PV's zone key; each term without a region expression gets `<region key> In [region of
 * its zones]`; the zone label (zones joined with `__`) and the region label (when there is
 * exactly one) are added unless present.
 *
 * @throws TranslationError when a term's zones do not name one AWS region
 */
export function topologyCsiToInTree(pv: TopologyHolder, csiKey: string): void {
  replaceTopology(pv, csiKey, topologyLabels(pv).zone);
  addRegions(pv);
  const { zone } = topologyLabels(pv);
  const zones = topologyValues(pv, zone);
  if (zones.length > 0 && !(zone in (pv.metadata.labels ?? {}))) {
    pv.metadata.labels = { ...pv.metadata.labels, [zone]: zones.join(MULTI_ZONE_DELIMITER) };
  }
}

/** `regionTopologyHandler`. */
function addRegions(pv: TopologyHolder): void {
  if (terms(pv).length === 0) return;
  const { zone, region } = topologyLabels(pv);
  for (const term of terms(pv)) {
    const expressions = term.matchExpressions ?? [];
    const regionAt = expressions.findIndex((e) => e.key === region);
    if (regionAt >= 0) continue;
    const zones = expressions.filter((e) => e.key === zone).flatMap((e) => e.values ?? []);
    term.matchExpressions = [...expressions, { key: region, operator: 'In', values: [awsRegionFromZones(zones)] }];
  }
  const regions = topologyValues(pv, region);
  if (regions.length === 1 && !(region in (pv.metadata.labels ?? {}))) {
    pv.metadata.labels = { ...pv.metadata.labels, [region]: regions[0]! };
  }
}

/**
 * `getAwsRegionFromZones`: the one region of `zones`. Zones come in four forms: `us-west-2a`,
 * `us-gov-east-1a`, `us-west-2-lax-1a` (Local Zone) and `us-east-1-wl1-bos-wlz-1` (Wavelength).
 *
 * @throws TranslationError for no zones, a zone of another form, or zones of several regions
 */
export function awsRegionFromZones(zones: readonly string[]): string {
  if (zones.length < 1) throw new TranslationError('no zones specified');
  const regions = new Set<string>();
  for (const zone of zones) {
    const parts = zone.split('-');
    const last = parts[parts.length - 1]!;
    if ((parts.length === 3 || parts.length === 4) && last.length === 2) {
      regions.add([...parts.slice(0, -1), last.slice(0, 1)].join('-'));
    } else if (parts.length === 5 || parts.length === 7) {
      regions.add(parts.slice(0, 3).join('-'));
    } else {
      throw new TranslationError(`Unexpected zone format: ${zone} is not a valid AWS zone`);
    }
  }
  if (regions.size !== 1) throw new TranslationError(`multiple or no regions gotten from zones, got: [${[...regions].sort().join(' ')}]`);
  return [...regions][0]!;
}
