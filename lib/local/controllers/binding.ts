/**
 * Which existing PV a claim takes: `FindMatchingVolume` of Kubernetes' storage helpers, in
 * the order of volhook's Kubernetes reference ("The PV controller"). Pure, so the whole
 * table of cases is tested with plain objects.
 */
import { claimClass, isDeleting, volumeClass, volumeModeOf } from './objects.js';
import type { NodeInfo, PersistentVolume, PersistentVolumeClaim } from './objects.js';
import { tryParseQuantity } from './quantity.js';
import { matchesLabelSelector, matchesNodeSelectorTerms } from './selectors.js';

export interface MatchOptions {
  /**
   * The claim's class is WaitForFirstConsumer and no node is chosen yet: only a PV
   * pre-bound to the claim may be taken, the rest waits for the scheduler.
   */
  delayBinding?: boolean;
  /** The node chosen for the claim's first consumer: PVs whose nodeAffinity excludes it do not fit. */
  node?: NodeInfo;
}

/**
 * The PV the claim should bind to, or `undefined`. Per candidate: skip if bound to another
 * claim, if too small, if its volumeMode differs, if it is being deleted; a PV pre-bound to
 * this claim wins at once; skip if not Available, if the claim's selector does not match its
 * labels, if the class differs, if it lacks a requested access mode; of the rest the
 * smallest wins (ties by name, so the answer does not depend on list order).
 */
export function findBestMatch(
  claim: PersistentVolumeClaim,
  volumes: readonly PersistentVolume[],
  options: MatchOptions = {},
): PersistentVolume | undefined {
  const requested = tryParseQuantity(claim.spec.resources?.requests?.storage ?? 0);
  if (requested === undefined) return undefined;
  let best: { volume: PersistentVolume; size: number } | undefined;
  for (const volume of volumes) {
    if (volume.spec.claimRef && !isPreBoundTo(volume, claim)) continue;
    const size = tryParseQuantity(volume.spec.capacity?.storage);
    if (size === undefined || size < requested) continue;
    if (volumeModeOf(volume.spec) !== volumeModeOf(claim.spec)) continue;
    if (isDeleting(volume)) continue;
    const fitsNode = !options.node || volumeFitsNode(volume, options.node);
    if (isPreBoundTo(volume, claim)) return fitsNode ? volume : undefined;
    if (options.delayBinding) continue;
    if (volume.status?.phase !== 'Available') continue;
    if (claim.spec.selector && !matchesLabelSelector(claim.spec.selector, volume.metadata.labels ?? {})) continue;
    if (volumeClass(volume) !== claimClass(claim)) continue;
    if (!fitsNode) continue;
    if (!hasAccessModes(volume, claim.spec.accessModes ?? [])) continue;
    if (!best || size < best.size || (size === best.size && volume.metadata.name < best.volume.metadata.name)) {
      best = { volume, size };
    }
  }
  return best?.volume;
}

/**
 * The PV's claimRef names this claim (`IsVolumeBoundToClaim`): same namespace and name, and
 * a uid that is either empty (pre-bound by a user before the claim existed) or the claim's.
 */
export function isPreBoundTo(volume: PersistentVolume, claim: PersistentVolumeClaim): boolean {
  const ref = volume.spec.claimRef;
  if (!ref) return false;
  if (ref.name !== claim.metadata.name || ref.namespace !== claim.metadata.namespace) return false;
  return !ref.uid || ref.uid === claim.metadata.uid;
}

/** A PV without nodeAffinity is reachable from every node. */
export function volumeFitsNode(volume: PersistentVolume, node: NodeInfo): boolean {
  const terms = volume.spec.nodeAffinity?.required?.nodeSelectorTerms;
  if (!volume.spec.nodeAffinity?.required) return true;
  return matchesNodeSelectorTerms(terms ?? [], node);
}

function hasAccessModes(volume: PersistentVolume, wanted: readonly string[]): boolean {
  const offered = volume.spec.accessModes ?? [];
  return wanted.every((mode) => offered.includes(mode));
}
