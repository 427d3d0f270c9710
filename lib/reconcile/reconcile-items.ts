import { itemKey, KUBERNETES_UID, type Item, type Result } from '../contract/index.js';
import { Ec2Error } from '../ec2/types.js';
import { reconcileAttach } from './attach.js';
import { reconcileClaimDeleted } from './claim-deleted.js';
import { scopeFor, type ReconcileContext, type Scope } from './context.js';
import { reconcileDetach } from './detach.js';
import { toResult, verdictForError } from './outcomes.js';
import { Requeue } from './outcomes.js';
import { done, failed, type Settled } from './plan.js';
import { reconcileProvision } from './provision.js';
import { reconcileReclaim } from './reclaim.js';
import { reconcileSnapshotContent } from './snapshot-content.js';
import { reconcileGroupSnapshotContent } from './group-snapshot-job.js';
import { reconcileReport } from './report.js';

/**
 * Reconciles a request's items against EC2, all at once — so that the gateway batches their
 * Describe calls — and answers one Result per item, in order. One item's error never fails
 * another: an item whose identifiers are malformed is refused alone, before any EC2 call; a
 * gateway error becomes that item's outcome (transient ones a requeue), anything else a
 * requeue with the error's message, reported (`reportError`) so that a bug is not a quiet loop.
 */
export async function reconcileItems(items: Item[], ctx: ReconcileContext): Promise<Result[]> {
  const scope = scopeFor(ctx);
  return Promise.all(
    items.map(async (item) => {
      const key = itemKey(item);
      try {
        const { verdict, writes } = await reconcileItem(item, scope);
        return toResult(key, verdict, writes);
      } catch (error) {
        // EC2 errors are the cloud's answer, classified; anything else is a bug to be seen.
        if (!(error instanceof Ec2Error)) ctx.reportError?.(key, error);
        return toResult(key, verdictForError(error), []);
      }
    }),
  );
}

/** The uid that volhook turns into EC2 names and tokens, for the items that carry one. */
function claimUid(item: Item): string | undefined {
  switch (item.kind) {
    case 'PersistentVolumeClaim':
      return item.pvc.metadata.uid;
    case 'PersistentVolumeClaimDeleted':
      return item.uid;
    default:
      return undefined;
  }
}

function reconcileItem(item: Item, scope: Scope): Promise<Settled> {
  const uid = claimUid(item);
  if (uid !== undefined && !KUBERNETES_UID.test(uid)) {
    const message = `claim uid ${JSON.stringify(uid)} is not a Kubernetes uid (a lower-case RFC 4122 UUID); this item is refused, the others go on`;
    return Promise.resolve(failed('InvalidItem', message, Requeue.failedSlow));
  }
  switch (item.kind) {
    case 'PersistentVolumeClaim':
      return reconcileProvision(item, scope);
    case 'PersistentVolumeClaimDeleted':
      return reconcileClaimDeleted(item, scope);
    case 'PersistentVolume':
      return reconcileReclaim(item, scope);
    case 'VolumeAttachment': {
      const va = item.volumeAttachment;
      if (va.spec.attacher !== scope.driverName) return Promise.resolve(done());
      return va.metadata.deletionTimestamp ? reconcileDetach(item, scope) : reconcileAttach(item, scope);
    }
    case 'VolumeSnapshotContent':
      return reconcileSnapshotContent(item, scope);
    case 'VolumeGroupSnapshotContent':
      return reconcileGroupSnapshotContent(item, scope);
    case 'VolumeReport':
      return reconcileReport(item, scope);
  }
}
