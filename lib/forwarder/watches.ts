/**
 * The table of watched resources: for each, where its informer lists and watches, what of an
 * object is news (changes.ts), and which item keys an event makes worth a look — the shape of
 * the local controllers' `watches` (lib/local/controllers/controller.ts), as one table
 * instead of an informer block per resource. Keys only: the items are built from the caches
 * when a batch goes out (items.ts), so an event never says what to send, only what to look at.
 */
import type * as k8s from '@kubernetes/client-node';
import { claimClassName, isClaimFor, ItemKeys, type Ownership } from '../contract/index.js';
import { isApiError, type KubeClients } from '../kube/index.js';
import { attachmentNews, claimNews, volumeNews, withoutVolhookWrites, type EventType } from './changes.js';
import { csiNodeNews, nodeNews, type Dependents } from './dependents.js';
import { isOurAttachment, isOurClaim, isOurVolume, isSettledAttachment, isSettledVolume } from './filter.js';
import type { DeletedClaim } from './items.js';

/** The objects of each watched resource. */
export interface WatchedObjects {
  persistentvolumeclaims: k8s.V1PersistentVolumeClaim;
  persistentvolumes: k8s.V1PersistentVolume;
  volumeattachments: k8s.V1VolumeAttachment;
  storageclasses: k8s.V1StorageClass;
  nodes: k8s.V1Node;
  csinodes: k8s.V1CSINode;
  volumeattributesclasses: k8s.V1VolumeAttributesClass;
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
  caches: { [R in Resource]: Pick<k8s.ObjectCache<WatchedObjects[R]>, 'get' | 'list'> };
  dependents: Dependents;
  /**
   * Every cache has synced. Until then the initial lists offer every object of ours anyway,
   * and dependents are not looked up in caches still filling.
   */
  ready(): boolean;
}

export interface Watch<T extends k8s.KubernetesObject> {
  /** The watch path, e.g. `/api/v1/persistentvolumeclaims`. */
  path: string;
  list(clients: KubeClients): Promise<k8s.KubernetesListObject<T>>;
  /** What of an object is news: an update that leaves it as it was offers nothing. */
  news(object: T, ownership: Ownership): unknown;
  /** Bookkeeping every event needs, news or not: the dependents index. */
  track?(type: EventType, object: T, ctx: WatchContext): void;
  /** The keys an event that is news makes worth a look. */
  keys(type: EventType, object: T, ctx: WatchContext): Iterable<Offer>;
  /** The keys a periodic resync offers for an object: ours and not settled. */
  resync?(object: T, ctx: WatchContext): Iterable<Offer>;
}

export const WATCHES: { readonly [R in Resource]: Watch<WatchedObjects[R]> } = {
  persistentvolumeclaims: {
    path: '/api/v1/persistentvolumeclaims',
    list: (clients) => clients.core.listPersistentVolumeClaimForAllNamespaces(),
    news: claimNews,
    *keys(type, pvc, ctx) {
      if (type === 'delete') yield* claimDeleted(pvc, ctx.ownership);
      else yield* claimOffers([pvc], ctx);
    },
    resync: (pvc, ctx) => claimOffers([pvc], ctx),
  },
  persistentvolumes: {
    path: '/api/v1/persistentvolumes',
    list: (clients) => clients.core.listPersistentVolume(),
    news: volumeNews,
    *keys(type, pv, ctx) {
      const name = pv.metadata?.name ?? '';
      // A PV gone for good leaves nothing to do (its reclaim happened before the delete).
      if (type !== 'delete' && isOurVolume(pv, ctx.ownership)) yield { key: ItemKeys.volume(name) };
      // Its attachments carry the PV as context (attach is refused while it is being deleted).
      if (!ctx.ready()) return;
      // Its bound claim carries it too: a resize is judged against the PV's capacity.
      const ref = pv.spec?.claimRef;
      const claim = ref?.name && ref.namespace ? ctx.caches.persistentvolumeclaims.get(ref.name, ref.namespace) : undefined;
      if (claim && claim.spec?.volumeName === name) yield* claimOffers([claim], ctx);
      const attachments = ctx.dependents.attachmentsOf(name).map((vaName) => ctx.caches.volumeattachments.get(vaName));
      yield* attachmentOffers(attachments, ctx);
    },
    resync: (pv, ctx) => (isOurVolume(pv, ctx.ownership) && !isSettledVolume(pv) ? [{ key: ItemKeys.volume(pv.metadata?.name ?? '') }] : []),
  },
  volumeattachments: {
    path: '/apis/storage.k8s.io/v1/volumeattachments',
    list: (clients) => clients.storage.listVolumeAttachment(),
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
    list: (clients) => clients.storage.listStorageClass(),
    news: withoutVolhookWrites,
    *keys(_type, sc, ctx) {
      if (!ctx.ready()) return; // before sync every claim is offered anyway
      const name = sc.metadata?.name;
      yield* claimOffers(ctx.caches.persistentvolumeclaims.list().filter((pvc) => claimClassName(pvc) === name), ctx);
    },
  },
  nodes: {
    path: '/api/v1/nodes',
    list: (clients) => clients.core.listNode(),
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
    // there are none, and the forwarder must still become ready (its watch retries quietly).
    list: async (clients) => {
      try {
        return await clients.storage.listVolumeAttributesClass();
      } catch (err) {
        if (!isApiError(err, 404)) throw err;
        return { apiVersion: 'storage.k8s.io/v1', kind: 'VolumeAttributesClassList', metadata: {}, items: [] };
      }
    },
    news: withoutVolhookWrites,
    *keys(_type, vac, ctx) {
      if (!ctx.ready()) return; // before sync every claim is offered anyway
      const name = vac.metadata?.name;
      yield* claimOffers(ctx.caches.persistentvolumeclaims.list().filter((pvc) => pvc.spec?.volumeAttributesClassName === name), ctx);
    },
  },
  csinodes: {
    path: '/apis/storage.k8s.io/v1/csinodes',
    list: (clients) => clients.storage.listCSINode(),
    news: (csiNode, ownership) => csiNodeNews(csiNode, ownership.driver),
    *keys(_type, csiNode, ctx) {
      if (ctx.ready()) yield* nodeDependents(csiNode.metadata?.name ?? '', ctx);
    },
  },
};

/** Every watched resource, in the order of the table. */
export const RESOURCES = Object.keys(WATCHES) as Resource[];

function* claimOffers(claims: Iterable<k8s.V1PersistentVolumeClaim>, ctx: WatchContext): Generator<Offer> {
  for (const pvc of claims) {
    if (isOurClaim(pvc, ctx.ownership, (name) => ctx.caches.persistentvolumes.get(name))) yield { key: ItemKeys.claim(pvc.metadata?.namespace ?? '', pvc.metadata?.name ?? '') };
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
