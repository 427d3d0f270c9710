/**
 * A claim's data source, as external-provisioner reads it: `dataSourceRef` (else `dataSource`)
 * of kind VolumeSnapshot (`snapshot.storage.k8s.io`) restores a snapshot, of kind
 * PersistentVolumeClaim (core group) clones a claim; both in the claim's namespace. Anything
 * else — a populator, another API group, another namespace — is refused naming it: never a
 * blank disk where data was asked for.
 *
 * Pure: from the claim item and its `source` context to what the volume must be made from, or
 * the end of the reconcile.
 */
import {
  claimClassName,
  SNAPSHOT_API_GROUP,
  SourceFinalizers,
  ZONE_LABELS,
  type PersistentVolume,
  type PersistentVolumeClaim,
  type PersistentVolumeClaimItem,
} from '../contract/index.js';
import { parseQuantity } from '../storageclass/index.js';
import { Requeue } from './outcomes.js';
import { failed, requeue, type Settled } from './plan.js';

/** What the new volume is made from. */
export type VolumeSource =
  | { kind: 'snapshot'; snapshotId: string; what: string; restoreSizeBytes: number | undefined }
  | { kind: 'clone'; sourceVolumeId: string; zone: string; what: string };

type Reference = { kind: string; name: string; apiGroup?: string | null; namespace?: string | null };

/** The claim's source reference (`dataSourceRef` wins), or undefined. */
export function sourceReference(pvc: PersistentVolumeClaim): Reference | undefined {
  return pvc.spec.dataSourceRef ?? pvc.spec.dataSource ?? undefined;
}

/** `<apiGroup>/<Kind> "<namespace>/<name>"`, the core group left out. */
export function describeReference(source: Reference): string {
  const namespace = source.namespace ? `${source.namespace}/` : '';
  return `${source.apiGroup ? `${source.apiGroup}/` : ''}${source.kind} "${namespace}${source.name}"`;
}

export type SourceKind = 'VolumeSnapshot' | 'PersistentVolumeClaim';

/** Which supported source the reference names, or why it is refused. */
export function classifyReference(pvc: PersistentVolumeClaim, source: Reference): { kind: SourceKind } | { refused: string } {
  const what = describeReference(source);
  if (source.namespace && source.namespace !== pvc.metadata.namespace) {
    return { refused: `the claim's data source ${what} is in another namespace; volhook restores and clones only within the claim's namespace` };
  }
  if (source.kind === 'VolumeSnapshot' && source.apiGroup === SNAPSHOT_API_GROUP) return { kind: 'VolumeSnapshot' };
  if (source.kind === 'PersistentVolumeClaim' && !source.apiGroup) return { kind: 'PersistentVolumeClaim' };
  return {
    refused: `the claim's data source ${what} is not supported: volhook makes volumes from a ${SNAPSHOT_API_GROUP}/VolumeSnapshot or a PersistentVolumeClaim of the same namespace only (no volume populators, no other kinds)`,
  };
}

type Refuse = (reason: string, message: string, requeueAfterSeconds?: number) => Settled;
/** A wait that the user should see: requeue, with a Warning on the claim. */
type Wait = (message: string) => Settled;

/**
 * What a claim with a supported source is made from, or the end of this reconcile: the source
 * missing, not ready, not ours or too large → refused (ProvisioningFailed) or waited for.
 */
export function resolveSource(
  item: PersistentVolumeClaimItem,
  kind: SourceKind,
  reference: Reference,
  names: { driverName: string },
  refuse: Refuse,
  wait: Wait,
): VolumeSource | Settled {
  const { pvc } = item;
  const what = describeReference(reference);
  const context = item.source;
  if (!context || context.kind !== kind) return requeue(Requeue.waitForCluster, `the item carries no facts about the claim's data source ${what} (yet)`);
  // Parsed already (volumeSpecFor refused a malformed request before this is called).
  const requested = parseQuantity(pvc.spec.resources.requests.storage);

  if (context.kind === 'VolumeSnapshot') {
    const { snapshot, content } = context;
    if (!snapshot) return refuse('SnapshotNotFound', `the claim's data source ${what} does not exist in namespace ${pvc.metadata.namespace}`, Requeue.failed);
    // As external-provisioner: a snapshot being deleted is restored from only by a restore
    // begun before (its source protection on): never a new restore from it.
    if (snapshot.metadata.deletionTimestamp && !snapshot.metadata.finalizers?.includes(SourceFinalizers.snapshot)) {
      return refuse('SnapshotBeingDeleted', `snapshot ${what} is being deleted`, Requeue.failed);
    }
    const bound = snapshot.status?.boundVolumeSnapshotContentName;
    if (!bound || !content || content.metadata.name !== bound) return wait(`snapshot ${what} is not bound to a VolumeSnapshotContent yet`);
    const ref = content.spec.volumeSnapshotRef;
    if (ref.name !== snapshot.metadata.name || ref.namespace !== snapshot.metadata.namespace || (ref.uid && ref.uid !== snapshot.metadata.uid)) {
      return refuse('SnapshotNotBound', `VolumeSnapshotContent "${content.metadata.name}" is not bound to snapshot ${what}`);
    }
    if (content.spec.driver !== names.driverName) {
      return refuse('SnapshotNotOurs', `snapshot ${what} is of driver "${content.spec.driver}", not "${names.driverName}"`);
    }
    const handle = content.status?.snapshotHandle;
    if (!handle || content.status?.readyToUse !== true || snapshot.status?.readyToUse !== true) {
      return wait(`snapshot ${what} is not ready to use yet`);
    }
    const restoreSize = content.status?.restoreSize ?? undefined;
    if (restoreSize !== undefined && restoreSize !== null && requested < BigInt(restoreSize)) {
      return refuse('SnapshotTooLarge', `requested volume size ${requested} is less than the size ${restoreSize} for the source snapshot ${what}`);
    }
    return { kind: 'snapshot', snapshotId: handle, what, restoreSizeBytes: restoreSize ?? undefined };
  }

  const { claim, pv } = context;
  if (!claim) return refuse('SourceNotFound', `the claim's data source ${what} does not exist in namespace ${pvc.metadata.namespace}`, Requeue.failed);
  // A clone begun before the source claim's deletion (its cloning protection on) goes on: its
  // volume is what lets the source go.
  if (claim.metadata.deletionTimestamp && !claim.metadata.finalizers?.includes(SourceFinalizers.claim)) {
    return refuse('SourceBeingDeleted', `source claim ${what} is being deleted`, Requeue.failed);
  }
  const volumeName = claim.spec.volumeName;
  if (!volumeName || claim.status?.phase !== 'Bound' || !pv || pv.metadata.name !== volumeName) {
    return wait(`the source claim ${what} is not bound to a PersistentVolume yet`);
  }
  if (pv.spec.csi?.driver !== names.driverName || !pv.spec.csi.volumeHandle) {
    return refuse('SourceNotOurs', `the source claim ${what} is bound to PersistentVolume "${pv.metadata.name}", which is not a volume of driver "${names.driverName}"`);
  }
  if ((claimClassName(claim) ?? '') !== (claimClassName(pvc) ?? '')) {
    return refuse('StorageClassMismatch', 'the source PVC and destination PVCs must be in the same storage class for cloning');
  }
  if ((claim.spec.volumeMode ?? 'Filesystem') !== (pvc.spec.volumeMode ?? 'Filesystem')) {
    return refuse('VolumeModeMismatch', `the source PVC and destination PVCs must have the same volume mode for cloning (source ${claim.spec.volumeMode ?? 'Filesystem'})`);
  }
  let sizeBytes: bigint;
  try {
    sizeBytes = parseQuantity(pv.spec.capacity.storage);
  } catch {
    return refuse('SourceSizeUnknown', `PersistentVolume "${pv.metadata.name}" of the source claim ${what} has capacity "${pv.spec.capacity.storage}", not a quantity`);
  }
  if (requested < sizeBytes) {
    return refuse('SourceTooLarge', `requested volume size ${requested} is less than the size ${sizeBytes} for the source PVC ${what}`);
  }
  const zone = pvZone(pv);
  if (!zone) return refuse('SourceZoneUnknown', `PersistentVolume "${pv.metadata.name}" of the source claim ${what} names no zone in its node affinity`);
  return { kind: 'clone', sourceVolumeId: pv.spec.csi.volumeHandle, zone, what };
}

/** The zone a PV's node affinity requires (one `In` value under a zone label). */
export function pvZone(pv: PersistentVolume): string | undefined {
  for (const term of pv.spec.nodeAffinity?.required.nodeSelectorTerms ?? []) {
    for (const expression of term.matchExpressions ?? []) {
      if (ZONE_LABELS.includes(expression.key) && expression.operator === 'In' && expression.values?.length === 1) return expression.values[0];
    }
  }
  return undefined;
}
