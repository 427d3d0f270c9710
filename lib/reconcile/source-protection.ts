/**
 * A restore's VolumeSnapshot and a clone's source claim carry external-provisioner's
 * source-protection finalizer while a volume may still be made from them
 * (lib/contract/source-protection.ts): written before the CreateVolume (or CopyVolumes) from
 * the source, removed once no claim of the namespace may still make its volume from it — its
 * PV written, or the claim deleted or bound elsewhere first (external-provisioner #1507).
 *
 * Pure: from the claim item to the writes.
 */
import {
  claimMayMakeVolume,
  sourceFinalizer,
  sourceReleasable,
  type ObjectRef,
  type PersistentVolumeClaimItem,
  type Write,
} from '../contract/index.js';
import { addFinalizer, removeFinalizer } from './writes.js';

/** The source of a claim's volume as the item has it, and who else may still need it. */
export interface SourceProtection {
  kind: 'VolumeSnapshot' | 'PersistentVolumeClaim';
  ref: ObjectRef;
  finalizer: string;
  /** The source carries the finalizer now. */
  present: boolean;
  /** Other claims of the namespace that may still make their volume from it. */
  holders: readonly string[];
  source: { metadata: { finalizers?: string[] | null } };
}

/** The claim's source object, when the item carries one (undefined: no source, or it does not exist). */
export function sourceProtectionOf(item: PersistentVolumeClaimItem): SourceProtection | undefined {
  const context = item.source;
  if (!context) return undefined;
  const object = context.kind === 'VolumeSnapshot' ? context.snapshot : context.claim;
  if (!object) return undefined;
  const { name, namespace, uid } = object.metadata;
  const finalizer = sourceFinalizer(context.kind);
  return {
    kind: context.kind,
    ref: { kind: context.kind, name, ...(namespace !== undefined && { namespace }), uid },
    finalizer,
    present: object.metadata.finalizers?.includes(finalizer) ?? false,
    holders: context.holders,
    source: object,
  };
}

/** Before a volume is made from the source: its finalizer, when it lacks it. */
export function protectSource(protection: SourceProtection | undefined): Write[] {
  return protection && !protection.present ? [addFinalizer(protection.ref, protection.finalizer)] : [];
}

/**
 * The finalizer's removal, when the source carries it and neither this claim (`selfHolds`) nor
 * any other may still make a volume from it.
 */
export function releaseSource(protection: SourceProtection | undefined, selfHolds: boolean): Write[] {
  if (!protection || !sourceReleasable(protection.source, protection.kind, protection.holders, selfHolds)) return [];
  return [removeFinalizer(protection.ref, protection.finalizer)];
}

/** Whether this claim may still make its volume from its source (the contract's rule, over the item). */
export function claimHoldsSource(item: PersistentVolumeClaimItem): boolean {
  return claimMayMakeVolume(item.pvc, item.pvExists);
}
