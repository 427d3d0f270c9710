/**
 * Which disks and snapshots a cluster keeps for its users after their PV or content is gone.
 * Retain is a user's explicit "keep this disk": deleting the PV object is how they take the
 * disk over (the Kubernetes docs' way to re-use it is a static PV made for it later). Once no
 * report names the disk, only the store's memory of it says so — this is what it remembers,
 * taken from each report the backend keeps against the one it replaces.
 */
import type { VolumeReport } from '../contract/index.js';
import { RESOURCE_ID } from './store.js';

/** A policy that keeps its resource when its object goes: Retain, and any that is not Delete (Recycle, or one volhook does not know). */
export const keepsResource = (policy: string) => policy !== 'Delete';

/**
 * What `next` changes in the retained resources, against `previous` (the report it replaces):
 * - retain: what `previous` named under a keeping policy and `next` names no more — its PV or
 *   content went (or its handle changed), and the user keeps it; a report without contents
 *   (an older forwarder) names no snapshot, so every retained snapshot of `previous` stays so;
 * - release: what `next` names under the Delete policy only — its last known PV or content
 *   would delete it.
 */
export function retainedChange(previous: VolumeReport | undefined, next: VolumeReport): { retain: string[]; release: string[] } {
  const volumes = change(
    previous?.volumes.map((v) => ({ id: v.volumeId, policy: v.reclaimPolicy })),
    next.volumes.map((v) => ({ id: v.volumeId, policy: v.reclaimPolicy })),
  );
  const handles = (report: VolumeReport | undefined) =>
    report?.snapshots?.flatMap((c) => (c.snapshotHandle ? [{ id: c.snapshotHandle, policy: c.deletionPolicy }] : []));
  const snapshots = change(handles(previous), next.snapshots ? handles(next) : undefined);
  return { retain: [...volumes.retain, ...snapshots.retain], release: [...volumes.release, ...snapshots.release] };
}

type Named = { id: string; policy: string };

/** `next` undefined: it cannot say what it names (every kept one of `previous` is retained, nothing released). */
function change(previous: readonly Named[] | undefined, next: readonly Named[] | undefined): { retain: string[]; release: string[] } {
  const named = new Set(next?.map((n) => n.id));
  const kept = new Set(next?.filter((n) => keepsResource(n.policy)).map((n) => n.id));
  const retain = new Set(previous?.filter((p) => keepsResource(p.policy) && !named.has(p.id)).map((p) => p.id));
  const release = new Set(next?.filter((n) => !keepsResource(n.policy) && !kept.has(n.id)).map((n) => n.id));
  const ids = (set: Set<string>) => [...set].filter((id) => RESOURCE_ID.test(id)).sort();
  return { retain: ids(retain), release: ids(release) };
}
