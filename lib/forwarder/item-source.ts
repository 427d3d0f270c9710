/**
 * The item for a queue key, built the moment its batch goes out: from the informer caches
 * (through a `ClusterView`), with the PV's absence confirmed by a live read for the items
 * that may delete a disk.
 */
import { BackendFeatures, claimReleasesDisk, pvNameForClaim, type BackendFeature, type ItemInput, type VolumeReport } from '../contract/index.js';
import type { KubeClients } from '../kube/clients.js';
import { isApiError } from '../kube/errors.js';
import type { Dependents } from './dependents.js';
import { isOurAttachment, isOurClaim, isOurGroupSnapshotContent, isOurSnapshotContent, isOurVolume, type Ownership } from './filter.js';
import {
  buildAttachmentItem,
  buildClaimDeletedItem,
  buildClaimItem,
  buildGroupSnapshotContentItem,
  buildSnapshotContentItem,
  buildVolumeItem,
  parseItemKey,
  sourceAwaitsRelease,
  withLiveClassCheck,
  withLivePvCheck,
  type ClusterView,
  type DeletedClaim,
  type LiveClassRead,
  type LivePvRead,
} from './items.js';
import type { Logger } from './logger.js';
import { buildVolumeReport, type ReportTracker } from './report.js';
import type { WatchContext } from './watches.js';

/** The `ClusterView` the item builders read: the caches and the dependents index. */
export function cacheView({ caches, dependents }: Pick<WatchContext, 'caches' | 'dependents'>): ClusterView {
  return {
    storageClass: (name) => caches.storageclasses.get(name),
    node: (name) => caches.nodes.get(name),
    csiNode: (name) => caches.csinodes.get(name),
    pv: (name) => caches.persistentvolumes.get(name),
    volumeAttributesClass: (name) => caches.volumeattributesclasses.get(name),
    attachmentsOf: (pvName) => dependents.attachmentsOf(pvName),
    zones: () => [...dependents.zones],
    claim: (namespace, name) => caches.persistentvolumeclaims.get(name, namespace),
    claims: (namespace) => caches.persistentvolumeclaims.list(namespace),
    volumeSnapshot: (namespace, name) => caches.volumesnapshots.get(name, namespace),
    snapshotContent: (name) => caches.volumesnapshotcontents.get(name),
    snapshotClass: (name) => caches.volumesnapshotclasses.get(name),
    groupSnapshotClass: (name) => caches.volumegroupsnapshotclasses.get(name),
    pvs: () => caches.persistentvolumes.list(),
  };
}

/** Reads a PV live from the API server; a failed read is logged and answers undefined. */
export function livePvRead(clients: KubeClients, logger: Logger): LivePvRead {
  return async (name) => {
    try {
      await clients.core.readPersistentVolume({ name });
      return true;
    } catch (err) {
      if (isApiError(err, 404)) return false;
      logger.warn('live read of a PersistentVolume failed; the item goes without it', { name, err: err instanceof Error ? err.message : String(err) });
      return undefined;
    }
  };
}

/** Reads a VolumeAttributesClass live; a failed read is logged and answers undefined. */
export function liveClassRead(clients: KubeClients, logger: Logger): LiveClassRead {
  return async (name) => {
    try {
      return await clients.storage.readVolumeAttributesClass({ name });
    } catch (err) {
      if (isApiError(err, 404)) return null;
      logger.warn('live read of a VolumeAttributesClass failed; the claim waits for its next turn', { name, err: err instanceof Error ? err.message : String(err) });
      return undefined;
    }
  };
}

/**
 * The item for `key` from the caches now; undefined when its object is gone or not ours.
 * Items that may delete a disk get the PV's absence confirmed live.
 */
/** The volume report as the caches hold it now. */
export function reportOfCaches(caches: WatchContext['caches'], ownership: Ownership): VolumeReport {
  return buildVolumeReport(
    {
      claims: () => caches.persistentvolumeclaims.list(),
      volumes: () => caches.persistentvolumes.list(),
      attachments: () => caches.volumeattachments.list(),
      csiNode: (name) => caches.csinodes.get(name),
      snapshotContents: () => caches.volumesnapshotcontents.list(),
      groupSnapshotContents: () => caches.volumegroupsnapshotcontents.list(),
    },
    ownership,
  );
}

export function itemSource(options: {
  ctx: Pick<WatchContext, 'caches' | 'dependents'>;
  ownership: Ownership;
  readPv: LivePvRead;
  /** Confirms a VolumeAttributesClass the cache lacks; without it, the cache's word goes. */
  readClass?: LiveClassRead;
  /** Which report digest the backend holds; without one, no report is sent. */
  reports?: ReportTracker;
  /**
   * Whether the backend in use said (in its check answer) that it serves a feature; the items
   * of a feature it does not serve are not built — a backend without them refuses a whole
   * request with an item kind it does not know. Without it, none is served.
   */
  serves?: (feature: BackendFeature) => boolean;
  logger?: Pick<Logger, 'info'>;
}) {
  const { ctx, ownership, readPv, readClass } = options;
  const { caches } = ctx;
  const view = cacheView(ctx);
  let saidUnserved = false;
  const served = (feature: BackendFeature): boolean => {
    if (options.serves?.(feature)) return true;
    if (!saidUnserved) options.logger?.info('the backend does not serve group snapshots (its check answer does not name them): group snapshot contents are not sent', { feature });
    saidUnserved = true;
    return false;
  };
  return async function buildItem(key: string, payload: DeletedClaim | undefined): Promise<ItemInput | undefined> {
    const parsed = parseItemKey(key);
    switch (parsed?.kind) {
      case 'PersistentVolumeClaim': {
        const pvc = caches.persistentvolumeclaims.get(parsed.name, parsed.namespace);
        if (!pvc || !isOurClaim(pvc, ownership, view.pv, (claim) => sourceAwaitsRelease(claim, view))) return undefined;
        const built = buildClaimItem(pvc, view, ownership.driver);
        const item = readClass ? await withLiveClassCheck(built, readClass) : built;
        if (!item) return undefined;
        return claimReleasesDisk(pvc) ? withLivePvCheck(item, pvNameForClaim(pvc.metadata?.uid ?? ''), readPv) : item;
      }
      case 'PersistentVolumeClaimDeleted':
        return payload ? withLivePvCheck(buildClaimDeletedItem(payload, view), pvNameForClaim(payload.uid), readPv) : undefined;
      case 'PersistentVolume': {
        const pv = caches.persistentvolumes.get(parsed.name);
        return pv && isOurVolume(pv, ownership) ? buildVolumeItem(pv, view) : undefined;
      }
      case 'VolumeAttachment': {
        const va = caches.volumeattachments.get(parsed.name);
        return va && isOurAttachment(va, ownership) ? buildAttachmentItem(va, view, ownership.driver) : undefined;
      }
      case 'VolumeSnapshotContent': {
        const content = caches.volumesnapshotcontents.get(parsed.name);
        return content && isOurSnapshotContent(content, ownership) ? buildSnapshotContentItem(content, view) : undefined;
      }
      case 'VolumeGroupSnapshotContent': {
        const content = caches.volumegroupsnapshotcontents.get(parsed.name);
        if (!content || !isOurGroupSnapshotContent(content, ownership) || !served(BackendFeatures.groupSnapshots)) return undefined;
        return buildGroupSnapshotContentItem(content, view, ownership.driver);
      }
      case 'VolumeReport': {
        const observedAt = Date.now();
        // Read only when needed: a report going out in parts sends the parts of one earlier reading.
        return options.reports?.item(() => reportOfCaches(caches, ownership), observedAt);
      }
      default:
        return undefined;
    }
  };
}
