/**
 * volhook's own marks on a cluster's storage objects, as `cluster release` removes them, and the
 * claims whose mark may not go yet. Pure: from one read of the cluster (ClusterView).
 *
 * A mark is a finalizer or an annotation in volhook's own domain (`volhook.io/`, subdomains
 * too) on a claim, PV, VolumeAttachment or VolumeSnapshotContent: what the CSI sidecars never
 * write nor read. Every other mark volhook writes is the sidecars' own name, written as they
 * write it (lib/contract/wellknown.ts), so it stays for them. Today the one mark of volhook's
 * own is the claim's `volhook.io/provisioning-protection`; any other found in the domain (an
 * older or newer volhook's) is listed and removed the same way. volhook writes no labels.
 *
 * The claim's protection is held from before its first CreateVolume until its PV exists or its
 * disk is gone (Finalizers.claimProtection). It may go at once where volhook itself would drop
 * it without asking EC2: the PV `pvc-<uid>` exists (its reclaim policy owns the disk now), or
 * the claim is bound to that PV. Otherwise volhook may have a disk in flight for the claim that
 * nothing in the cluster names, and release refuses rather than lose it:
 * - a claim still pending: the EBS CSI controller would provision it afresh — its CreateVolume
 *   token is a hash of the PV name alone, volhook's one of the cluster id and the PV name, and
 *   it looks for no disk by tag first — so volhook's disk would be left behind, unseen;
 * - a claim being deleted (or bound to another PV): only volhook deletes a disk it made for a
 *   claim no PV names; with the finalizer gone the claim vanishes and the disk leaks, and with
 *   the finalizer kept and volhook gone the claim stays Terminating for good.
 * Either settles once the forwarder runs again: volhook writes the PV or deletes the disk, and
 * drops the finalizer itself.
 */
import { CLAIM_TAG_ANNOTATION_PREFIX, Finalizers, pvNameForClaim, type ObjectRef, type Write } from '../contract/index.js';
import type { ClusterView } from './release-view.js';

/**
 * A key in volhook's own domain: `volhook.io/…` or `<sub>.volhook.io/…`. Not a claim's
 * `tag.volhook.io/…`: the claim's owner writes those to ask for volume tags, and they stay.
 */
export function isVolhookKey(key: string): boolean {
  return /^(?:[a-z0-9-]+\.)*volhook\.io\//.test(key) && !key.startsWith(CLAIM_TAG_ANNOTATION_PREFIX);
}

export interface Mark {
  target: ObjectRef & { uid: string };
  type: 'finalizer' | 'annotation';
  key: string;
  /** Why it may go without losing anything. */
  why: string;
}

/** A claim whose protection may not go yet; release --apply refuses while there is one. */
export interface HeldClaim {
  namespace: string;
  name: string;
  uid: string;
  why: string;
}

export interface MarksPlan {
  /** What --apply removes, in a stable order: by kind, then object, then key. */
  marks: Mark[];
  held: HeldClaim[];
}

type Meta = { name: string; namespace?: string | null; uid: string; finalizers?: string[] | null; annotations?: Record<string, string> | null };

/** Pure: volhook's marks in `view`, and the claims whose protection must wait. */
export function planMarks(view: ClusterView): MarksPlan {
  const marks: Mark[] = [];
  const held: HeldClaim[] = [];
  const pvNames = new Set(view.volumes.map((pv) => pv.metadata.name));

  const scan = (kind: ObjectRef['kind'], meta: Meta, finalizerWhy: (key: string) => string | undefined) => {
    const target = { kind, name: meta.name, uid: meta.uid, ...(meta.namespace ? { namespace: meta.namespace } : {}) };
    for (const key of meta.finalizers ?? []) {
      if (!isVolhookKey(key)) continue;
      const why = finalizerWhy(key);
      if (why !== undefined) marks.push({ target, type: 'finalizer', key, why });
    }
    for (const key of Object.keys(meta.annotations ?? {})) {
      if (isVolhookKey(key)) marks.push({ target, type: 'annotation', key, why: OWN });
    }
  };

  for (const claim of view.claims) {
    scan('PersistentVolumeClaim', claim.metadata, (key) => {
      if (key !== Finalizers.claimProtection) return OWN;
      const verdict = claimProtection(claim, pvNames);
      if (verdict.settled) return verdict.why;
      held.push({ namespace: claim.metadata.namespace, name: claim.metadata.name, uid: claim.metadata.uid, why: verdict.why });
      return undefined;
    });
  }
  for (const pv of view.volumes) scan('PersistentVolume', pv.metadata, () => OWN);
  for (const va of view.attachments) scan('VolumeAttachment', va.metadata, () => OWN);
  for (const content of view.snapshotContents ?? []) scan('VolumeSnapshotContent', content.metadata, () => OWN);

  marks.sort((a, b) => KIND_ORDER.indexOf(a.target.kind) - KIND_ORDER.indexOf(b.target.kind) || objectName(a.target).localeCompare(objectName(b.target)) || a.key.localeCompare(b.key));
  held.sort((a, b) => `${a.namespace}/${a.name}`.localeCompare(`${b.namespace}/${b.name}`));
  return { marks, held };
}

const OWN = "volhook's own; no CSI sidecar writes or reads it";
const KIND_ORDER: ReadonlyArray<ObjectRef['kind']> = ['PersistentVolumeClaim', 'PersistentVolume', 'VolumeAttachment', 'VolumeSnapshotContent'];

/** `namespace/name`, or `name` for a cluster-scoped object. */
export function objectName(ref: Pick<ObjectRef, 'name' | 'namespace'>): string {
  return ref.namespace ? `${ref.namespace}/${ref.name}` : ref.name;
}

/** Pure: whether a claim's protection may go now (see the file comment). */
export function claimProtection(
  claim: ClusterView['claims'][number],
  pvNames: ReadonlySet<string>,
): { settled: true; why: string } | { settled: false; why: string } {
  const pvName = pvNameForClaim(claim.metadata.uid);
  if (pvNames.has(pvName)) return { settled: true, why: `PV ${pvName} exists: its reclaim policy owns the disk` };
  const volumeName = claim.spec.volumeName;
  if (volumeName === pvName) return { settled: true, why: `bound to ${pvName}` };
  if (claim.metadata.deletionTimestamp || volumeName) {
    const how = claim.metadata.deletionTimestamp ? 'is being deleted' : `is bound to another PV (${volumeName})`;
    return { settled: false, why: `${how} and no PV ${pvName} exists: volhook has yet to delete the disk it may have made for it` };
  }
  return { settled: false, why: `volhook is provisioning it: a disk it asked EC2 for may exist or still land, and no PV ${pvName} names it yet` };
}

/** The write that removes `mark` (uid-guarded: never from a namesake made since). */
export function removal(mark: Mark): Write {
  return mark.type === 'finalizer' ? { op: 'removeFinalizer', target: mark.target, finalizer: mark.key } : { op: 'removeAnnotation', target: mark.target, key: mark.key };
}

/** Identifies a mark across two reads of the cluster. */
export function markKey(mark: Pick<Mark, 'target' | 'type' | 'key'>): string {
  return `${mark.target.kind}/${mark.target.uid}/${mark.type}/${mark.key}`;
}
