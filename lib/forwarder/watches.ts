/**
 * The table of watched resources: for each, where its informer lists and watches, what of an
 * object is news (changes.ts), and which item keys an event makes worth a look — the shape of
 * the local controllers' `watches` (lib/local/controllers/controller.ts), as one table
 * instead of an informer block per resource. Keys only: the items are built from the caches
 * when a batch goes out (items.ts), so an event never says what to send, only what to look at.
 */
import type * as k8s from '@kubernetes/client-node';
import { claimClassName, GROUP_SNAPSHOT_API_GROUP, GROUP_SNAPSHOT_API_VERSION, isClaimFor, isOurContent, isSettledContent, ItemKeys, SNAPSHOT_API_GROUP, SNAPSHOT_API_VERSION } from '../contract/index.js';
import { attachmentNews, claimNews, groupSnapshotContentNews, snapshotContentNews, volumeNews, withoutVolhookWrites, type EventType } from './changes.js';
import { csiNodeNews, nodeNews, type Dependents } from './dependents.js';
import { isOurAttachment, isOurClaim, isOurGroupSnapshotContent, isOurSnapshotContent, isOurVolume, isSettledAttachment, isSettledVolume, type Ownership } from './filter.js';
import type { ObjectCache } from './informers.js';
import {
  sameSourceClaims,
  type GroupSnapshotClassObject,
  type GroupSnapshotContentObject,
  sourceAwaitsRelease,
  sourceRef,
  type DeletedClaim,
  type SnapshotClassObject,
  type SnapshotContentObject,
  type SourceView,
  type VolumeSnapshotObject,
} from './items.js';
import { reportedDiskOf } from './report.js';

/** The objects of each watched resource. */
export interface WatchedObjects {
  persistentvolumeclaims: k8s.V1PersistentVolumeClaim;
  persistentvolumes: k8s.V1PersistentVolume;
  volumeattachments: k8s.V1VolumeAttachment;
  storageclasses: k8s.V1StorageClass;
  nodes: k8s.V1Node;
  csinodes: k8s.V1CSINode;
  volumeattributesclasses: k8s.V1VolumeAttributesClass;
  volumesnapshotcontents: SnapshotContentObject;
  volumesnapshotclasses: SnapshotClassObject;
  volumesnapshots: VolumeSnapshotObject;
  volumegroupsnapshotcontents: GroupSnapshotContentObject;
  volumegroupsnapshotclasses: GroupSnapshotClassObject;
}
export type Resource = keyof WatchedObjects;

/** A key worth a look, with the payload of one whose object is in no cache (a deleted claim). */
export interface Offer {
  key: string;
  payload?: DeletedClaim;
}

/** What the keys of an event are computed from. */
export interface WatchContext {
  ownership: Ownership;
  caches: { [R in Resource]: Pick<ObjectCache<WatchedObjects[R]>, 'get' | 'list'> };
  dependents: Dependents;
  /**
   * Every cache has synced. Until then the initial lists offer every object of ours anyway,
   * and dependents are not looked up in caches still filling.
   */
  ready(): boolean;
}

export interface Watch<T extends k8s.KubernetesObject> {
  /** The list and watch path, e.g. `/api/v1/persistentvolumeclaims`. */
  path: string;
  /**
   * A resource a cluster may not serve: its list answering 404 means none (the informer lists
   * it again now and then, so one served later is picked up) rather than a forwarder that never
   * gets ready. `whileAbsent` is what is off until it is served, said once at info.
   */
  optional?: { whileAbsent: string };
  /** What of an object is news: an update that leaves it as it was offers nothing. */
  news(object: T, ownership: Ownership): unknown;
  /** Bookkeeping every event needs, news or not: the dependents index. */
  track?(type: EventType, object: T, ctx: WatchContext): void;
  /** The keys an event that is news makes worth a look. */
  keys(type: EventType, object: T, ctx: WatchContext): Iterable<Offer>;
  /** The keys a periodic resync offers for an object: ours and not settled. */
  resync?(object: T, ctx: WatchContext): Iterable<Offer>;
}

/** The three snapshot resources come and go together, with the CRDs. */
const SNAPSHOTS_OPTIONAL = { whileAbsent: `snapshots are off until the snapshot CRDs (${SNAPSHOT_API_GROUP}/${SNAPSHOT_API_VERSION}) are installed` };

/** The two group snapshot resources come and go together, with their CRDs. */
const GROUP_SNAPSHOTS_OPTIONAL = { whileAbsent: `group snapshots are off until the group snapshot CRDs (${GROUP_SNAPSHOT_API_GROUP}/${GROUP_SNAPSHOT_API_VERSION}) are installed` };

const groupContentOffer = (content: GroupSnapshotContentObject): Offer => ({ key: ItemKeys.groupSnapshotContent(content.metadata?.name ?? '') });

export const WATCHES: { readonly [R in Resource]: Watch<WatchedObjects[R]> } = {
  persistentvolumeclaims: {
    path: '/api/v1/persistentvolumeclaims',
    news: claimNews,
    *keys(type, pvc, ctx) {
      if (type === 'delete') yield* claimDeleted(pvc, ctx.ownership);
      else yield* claimOffers([pvc], ctx);
      if (!ctx.ready()) return;
      // Claims cloning this one carry it as context.
      yield* claimOffers(dependentClaims(ctx, pvc.metadata?.namespace ?? '', 'PersistentVolumeClaim', '', pvc.metadata?.name ?? ''), ctx);
      // Claims made from the same source carry whether this one may still need it: the last
      // to need it lets it go.
      yield* claimOffers(sameSourceClaims(pvc, ctx.caches.persistentvolumeclaims.list(pvc.metadata?.namespace ?? '')), ctx);
    },
    resync: (pvc, ctx) => claimOffers([pvc], ctx),
  },
  persistentvolumes: {
    path: '/api/v1/persistentvolumes',
    news: volumeNews,
    *keys(type, pv, ctx) {
      const name = pv.metadata?.name ?? '';
      // A PV gone for good leaves nothing to do (its reclaim happened before the delete).
      if (type !== 'delete' && isOurVolume(pv, ctx.ownership)) yield { key: ItemKeys.volume(name) };
      // Kept here rather than in `track`: a PV's disk changes only with its spec, which is news,
      // and every add and delete is news too (the initial list's adds included).
      const diskChanged = ctx.dependents.trackVolumeDisk(name, type === 'delete' ? undefined : reportedDiskOf(pv, ctx.ownership));
      if (!ctx.ready()) return;
      // A PV that names a disk it did not name before (added, or its handle changed): the audit
      // must not judge that disk by a report from before it (a Retain disk re-used by a static
      // PV made for it) — as for a content added, the report goes now, not at the next resync.
      // A PV gone too, or the audit takes it, still in the report, for one whose disk was lost.
      if (diskChanged) yield { key: ItemKeys.report() };
      // Its attachments carry the PV as context (attach is refused while it is being deleted).
      const ref = pv.spec?.claimRef;
      if (ref?.namespace && ref.name) {
        // Its bound claim carries it too: a resize is judged against the PV's capacity.
        const claim = ctx.caches.persistentvolumeclaims.get(ref.name, ref.namespace);
        if (claim && claim.spec?.volumeName === name) yield* claimOffers([claim], ctx);
        // So do the clones of its claim.
        yield* claimOffers(dependentClaims(ctx, ref.namespace, 'PersistentVolumeClaim', '', ref.name), ctx);
      }
      const attachments = ctx.dependents.attachmentsOf(name).map((vaName) => ctx.caches.volumeattachments.get(vaName));
      yield* attachmentOffers(attachments, ctx);
    },
    resync: (pv, ctx) => (isOurVolume(pv, ctx.ownership) && !isSettledVolume(pv) ? [{ key: ItemKeys.volume(pv.metadata?.name ?? '') }] : []),
  },
  volumeattachments: {
    path: '/apis/storage.k8s.io/v1/volumeattachments',
    news: attachmentNews,
    track: (type, va, ctx) => ctx.dependents.trackAttachment(va, type === 'delete'),
    *keys(type, va, ctx) {
      if (type !== 'delete') yield* attachmentOffers([va], ctx);
      // The PV's list of attachments changed: a Released PV may now be deletable.
      const pvName = va.spec?.source?.persistentVolumeName;
      if (!pvName || !ctx.ready()) return;
      const pv = ctx.caches.persistentvolumes.get(pvName);
      if (pv && isOurVolume(pv, ctx.ownership) && !isSettledVolume(pv)) yield { key: ItemKeys.volume(pvName) };
    },
    resync: (va, ctx) => (isOurAttachment(va, ctx.ownership) && !isSettledAttachment(va, ctx.ownership) ? [{ key: ItemKeys.attachment(va.metadata?.name ?? '') }] : []),
  },
  storageclasses: {
    path: '/apis/storage.k8s.io/v1/storageclasses',
    news: withoutVolhookWrites,
    *keys(_type, sc, ctx) {
      if (!ctx.ready()) return; // before sync every claim is offered anyway
      const name = sc.metadata?.name;
      yield* claimOffers(ctx.caches.persistentvolumeclaims.list().filter((pvc) => claimClassName(pvc) === name), ctx);
    },
  },
  nodes: {
    path: '/api/v1/nodes',
    news: nodeNews,
    *keys(_type, node, ctx) {
      if (!ctx.ready()) return;
      yield* nodeDependents(node.metadata?.name ?? '', ctx);
      // Immediate claims may go to any zone of the cluster: a zone came or went.
      if (ctx.dependents.refreshZones(ctx.caches.nodes.list())) {
        const { storageclasses, persistentvolumeclaims } = ctx.caches;
        const immediate = persistentvolumeclaims.list().filter((pvc) => storageclasses.get(claimClassName(pvc) ?? '')?.volumeBindingMode !== 'WaitForFirstConsumer');
        yield* claimOffers(immediate, ctx);
      }
    },
  },
  volumeattributesclasses: {
    path: '/apis/storage.k8s.io/v1/volumeattributesclasses',
    // A cluster before Kubernetes 1.34 serves no storage.k8s.io/v1 VolumeAttributesClass: then
    // there are none, and the forwarder must still become ready.
    optional: { whileAbsent: 'VolumeAttributesClasses are off until the API server serves storage.k8s.io/v1 volumeattributesclasses' },
    news: withoutVolhookWrites,
    *keys(_type, vac, ctx) {
      if (!ctx.ready()) return; // before sync every claim is offered anyway
      const name = vac.metadata?.name;
      yield* claimOffers(ctx.caches.persistentvolumeclaims.list().filter((pvc) => pvc.spec?.volumeAttributesClassName === name), ctx);
    },
  },
  csinodes: {
    path: '/apis/storage.k8s.io/v1/csinodes',
    news: (csiNode, ownership) => csiNodeNews(csiNode, ownership.driver),
    *keys(_type, csiNode, ctx) {
      if (ctx.ready()) yield* nodeDependents(csiNode.metadata?.name ?? '', ctx);
    },
  },
  volumesnapshotcontents: {
    path: `/apis/${SNAPSHOT_API_GROUP}/${SNAPSHOT_API_VERSION}/volumesnapshotcontents`,
    // A cluster without the snapshot CRDs has no snapshots.
    optional: SNAPSHOTS_OPTIONAL,
    news: snapshotContentNews,
    *keys(type, content, ctx) {
      if (type !== 'delete' && isOurSnapshotContent(content, ctx.ownership)) yield { key: ItemKeys.snapshotContent(content.metadata?.name ?? '') };
      // A new content may name an old snapshot (pre-provisioned): the audit learns of it now, not at the next resync.
      if (type === 'add' && ctx.ready() && isOurContent(content, ctx.ownership.driver)) yield { key: ItemKeys.report() };
      // Claims restoring from its VolumeSnapshot carry it as context.
      const ref = content.spec?.volumeSnapshotRef;
      if (ctx.ready() && ref?.namespace && ref.name) yield* claimOffers(dependentClaims(ctx, ref.namespace, 'VolumeSnapshot', SNAPSHOT_API_GROUP, ref.name), ctx);
    },
    resync: (content, ctx) =>
      isOurSnapshotContent(content, ctx.ownership) && !isSettledContent(content) ? [{ key: ItemKeys.snapshotContent(content.metadata?.name ?? '') }] : [],
  },
  volumesnapshotclasses: {
    path: `/apis/${SNAPSHOT_API_GROUP}/${SNAPSHOT_API_VERSION}/volumesnapshotclasses`,
    // A cluster without the snapshot CRDs has no snapshots.
    optional: SNAPSHOTS_OPTIONAL,
    news: (object) => object,
    *keys(_type, snapshotClass, ctx) {
      if (!ctx.ready()) return;
      const name = snapshotClass.metadata?.name;
      for (const content of ctx.caches.volumesnapshotcontents.list()) {
        if (content.spec?.volumeSnapshotClassName === name && isOurSnapshotContent(content, ctx.ownership) && !isSettledContent(content)) {
          yield { key: ItemKeys.snapshotContent(content.metadata?.name ?? '') };
        }
      }
    },
  },
  volumesnapshots: {
    path: `/apis/${SNAPSHOT_API_GROUP}/${SNAPSHOT_API_VERSION}/volumesnapshots`,
    // A cluster without the snapshot CRDs has no snapshots.
    optional: SNAPSHOTS_OPTIONAL,
    // All but the source protection volhook puts on it (an echo).
    news: withoutVolhookWrites,
    *keys(_type, snapshot, ctx) {
      if (ctx.ready()) yield* claimOffers(dependentClaims(ctx, snapshot.metadata?.namespace ?? '', 'VolumeSnapshot', SNAPSHOT_API_GROUP, snapshot.metadata?.name ?? ''), ctx);
    },
  },
  volumegroupsnapshotcontents: {
    path: `/apis/${GROUP_SNAPSHOT_API_GROUP}/${GROUP_SNAPSHOT_API_VERSION}/volumegroupsnapshotcontents`,
    optional: GROUP_SNAPSHOTS_OPTIONAL,
    news: groupSnapshotContentNews,
    *keys(type, content, ctx) {
      if (type !== 'delete' && isOurGroupSnapshotContent(content, ctx.ownership)) yield groupContentOffer(content);
      // The audit learns of it now: its snapshots are named by it (the report's group entries).
      if (type === 'add' && ctx.ready() && isOurGroupSnapshotContent(content, ctx.ownership)) yield { key: ItemKeys.report() };
    },
    resync: (content, ctx) => (isOurGroupSnapshotContent(content, ctx.ownership) && !isSettledContent(content) ? [groupContentOffer(content)] : []),
  },
  volumegroupsnapshotclasses: {
    path: `/apis/${GROUP_SNAPSHOT_API_GROUP}/${GROUP_SNAPSHOT_API_VERSION}/volumegroupsnapshotclasses`,
    optional: GROUP_SNAPSHOTS_OPTIONAL,
    news: (object) => object,
    *keys(_type, groupClass, ctx) {
      if (!ctx.ready()) return;
      const name = groupClass.metadata?.name;
      for (const content of ctx.caches.volumegroupsnapshotcontents.list()) {
        if (content.spec?.volumeGroupSnapshotClassName === name && isOurGroupSnapshotContent(content, ctx.ownership) && !isSettledContent(content)) yield groupContentOffer(content);
      }
    },
  },
};

/** The cached claims in `namespace` whose data source is the object `kind`/`name` of `apiGroup` (core: ''). */
function dependentClaims(ctx: WatchContext, namespace: string, kind: string, apiGroup: string, name: string): k8s.V1PersistentVolumeClaim[] {
  if (!namespace || !name) return [];
  return ctx.caches.persistentvolumeclaims.list(namespace).filter((pvc) => {
    if (pvc.metadata?.namespace !== namespace) return false;
    const ref = sourceRef(pvc);
    return ref?.kind === kind && (ref.apiGroup ?? '') === apiGroup && ref.name === name && (!ref.namespace || ref.namespace === namespace);
  });
}

/** Every watched resource, in the order of the table. */
export const RESOURCES = Object.keys(WATCHES) as Resource[];

function* claimOffers(claims: Iterable<k8s.V1PersistentVolumeClaim>, ctx: WatchContext): Generator<Offer> {
  const { caches } = ctx;
  const view: SourceView = {
    claim: (namespace, name) => caches.persistentvolumeclaims.get(name, namespace),
    claims: (namespace) => caches.persistentvolumeclaims.list(namespace),
    volumeSnapshot: (namespace, name) => caches.volumesnapshots.get(name, namespace),
    snapshotContent: (name) => caches.volumesnapshotcontents.get(name),
    pv: (name) => caches.persistentvolumes.get(name),
  };
  for (const pvc of claims) {
    if (isOurClaim(pvc, ctx.ownership, view.pv, (claim) => sourceAwaitsRelease(claim, view))) yield { key: ItemKeys.claim(pvc.metadata?.namespace ?? '', pvc.metadata?.name ?? '') };
  }
}

function* attachmentOffers(attachments: Iterable<k8s.V1VolumeAttachment | undefined>, ctx: WatchContext): Generator<Offer> {
  for (const va of attachments) {
    if (va && isOurAttachment(va, ctx.ownership)) yield { key: ItemKeys.attachment(va.metadata?.name ?? '') };
  }
}

/** A claim of ours deleted before it got a PV: the backend must not leak a disk made meanwhile. */
function* claimDeleted(pvc: k8s.V1PersistentVolumeClaim, ownership: Ownership): Generator<Offer> {
  const meta = pvc.metadata;
  if (!meta?.uid || !meta.name || !meta.namespace) return;
  if (!isClaimFor(pvc, ownership.provisioner) || pvc.spec?.volumeName) return;
  yield { key: ItemKeys.claimDeleted(meta.uid), payload: { uid: meta.uid, namespace: meta.namespace, name: meta.name } };
}

function* nodeDependents(nodeName: string, ctx: WatchContext): Generator<Offer> {
  const { claims, attachments } = ctx.dependents.ofNode(nodeName);
  yield* claimOffers(claims, ctx);
  yield* attachmentOffers(attachments, ctx);
}
