/**
 * Building items from the caches, at send time: each item is one object plus the context the
 * backend needs (its StorageClass, the selected Node and CSINode, whether the PV exists…),
 * read the moment the batch goes out, so it is as fresh as the caches.
 *
 * Pure functions over a `ClusterView`; the forwarder backs the view with its informer caches,
 * tests with plain arrays.
 */
import type {
  KubernetesObject,
  V1CSINode,
  V1Node,
  V1PersistentVolume,
  V1PersistentVolumeClaim,
  V1StorageClass,
  V1VolumeAttachment,
  V1VolumeAttributesClass,
} from '@kubernetes/client-node';
import {
  Annotations,
  claimClassName,
  claimMayMakeVolume,
  ItemKeys,
  nodeZone,
  pvNameForClaim,
  SNAPSHOT_API_GROUP,
  sourceReleasable,
  type ItemInput,
  type NodeInfo,
  type PersistentVolumeClaimDeletedItem,
} from '../contract/index.js';

/** The snapshot objects (`snapshot.storage.k8s.io/v1`, CRDs client-node has no types for), as far as items read them. */
export interface SnapshotContentObject extends KubernetesObject {
  spec?: {
    driver?: string;
    deletionPolicy?: string;
    source?: { volumeHandle?: string; snapshotHandle?: string };
    volumeSnapshotClassName?: string;
    volumeSnapshotRef?: { namespace?: string; name?: string; uid?: string };
  };
  status?: { snapshotHandle?: string; readyToUse?: boolean; error?: unknown };
}
export interface SnapshotClassObject extends KubernetesObject {
  driver?: string;
  deletionPolicy?: string;
  parameters?: Record<string, string>;
}
export interface VolumeSnapshotObject extends KubernetesObject {
  spec?: { source?: { persistentVolumeClaimName?: string; volumeSnapshotContentName?: string }; volumeSnapshotClassName?: string };
  status?: { boundVolumeSnapshotContentName?: string; readyToUse?: boolean };
}

/** The group snapshot objects (`groupsnapshot.storage.k8s.io/v1`), as far as items read them. */
export interface GroupSnapshotContentObject extends KubernetesObject {
  spec?: {
    driver?: string;
    deletionPolicy?: string;
    source?: { volumeHandles?: string[]; groupSnapshotHandles?: unknown };
    volumeGroupSnapshotClassName?: string;
    volumeGroupSnapshotRef?: { namespace?: string; name?: string; uid?: string };
  };
  status?: { volumeGroupSnapshotHandle?: string; readyToUse?: boolean; error?: unknown };
}
export interface GroupSnapshotClassObject extends KubernetesObject {
  driver?: string;
  deletionPolicy?: string;
  parameters?: Record<string, string>;
}

/** Read access to what the forwarder knows of the cluster. */
export interface ClusterView {
  storageClass(name: string): V1StorageClass | undefined;
  node(name: string): V1Node | undefined;
  csiNode(name: string): V1CSINode | undefined;
  pv(name: string): V1PersistentVolume | undefined;
  volumeAttributesClass(name: string): V1VolumeAttributesClass | undefined;
  /** Names of the VolumeAttachments whose `spec.source.persistentVolumeName` is `pvName`. */
  attachmentsOf(pvName: string): string[];
  /** The zones of the cluster's nodes (see `clusterZones`), for Immediate claims. */
  zones(): string[];
  claim(namespace: string, name: string): V1PersistentVolumeClaim | undefined;
  /** The claims of a namespace (the claims made from the same source as another). */
  claims(namespace: string): V1PersistentVolumeClaim[];
  volumeSnapshot(namespace: string, name: string): VolumeSnapshotObject | undefined;
  snapshotContent(name: string): SnapshotContentObject | undefined;
  snapshotClass(name: string): SnapshotClassObject | undefined;
  groupSnapshotClass(name: string): GroupSnapshotClassObject | undefined;
  /** Every PV (the members of a group content are named by their volume handles). */
  pvs(): V1PersistentVolume[];
}

type ClaimItemInput = Extract<ItemInput, { kind: 'PersistentVolumeClaim' }>;
type ClaimDeletedItemInput = Extract<ItemInput, { kind: 'PersistentVolumeClaimDeleted' }>;

/** What a deleted claim leaves behind for its `PersistentVolumeClaimDeleted` item. */
export type DeletedClaim = Pick<PersistentVolumeClaimDeletedItem, 'uid' | 'namespace' | 'name'>;

/** The claim's class, by the contract's rule (the beta annotation wins over `spec.storageClassName`). */
export { claimClassName };

/** The zones the cluster's nodes are in (the contract's `nodeZone`: labels, then providerID), sorted, each once. */
export function clusterZones(nodes: readonly V1Node[]): string[] {
  const zones = new Set<string>();
  for (const node of nodes) {
    const zone = nodeZone({ labels: node.metadata?.labels, providerID: node.spec?.providerID });
    if (zone) zones.add(zone);
  }
  return [...zones].sort();
}

/** A Node's facts, with its CSINode entry for `driver` when there is one. */
export function nodeInfo(node: V1Node, csiNode: V1CSINode | undefined, driver: string): NodeInfo {
  const entry = csiNode?.spec?.drivers?.find((d) => d.name === driver);
  const info: NodeInfo = {
    name: node.metadata?.name ?? '',
    labels: { ...(node.metadata?.labels ?? {}) },
  };
  if (node.spec?.providerID) info.providerID = node.spec.providerID;
  if (entry?.nodeID) {
    info.csiNode = { nodeID: entry.nodeID };
    if (entry.topologyKeys) info.csiNode.topologyKeys = [...entry.topologyKeys];
    if (entry.allocatable?.count !== undefined) info.csiNode.allocatableCount = entry.allocatable.count;
  }
  return info;
}

/**
 * A plain-JSON copy: list results carry `Date`s where watch events carry strings, and the
 * item must be the latter. `managedFields` is dropped — large, and of no use to the backend.
 */
export function plain<T>(object: T): T {
  return JSON.parse(
    JSON.stringify(object, (key, value: unknown) => (key === 'managedFields' ? undefined : value)),
  ) as T;
}

export function buildClaimItem(pvc: V1PersistentVolumeClaim, view: ClusterView, driver: string): ClaimItemInput {
  const className = claimClassName(pvc);
  const storageClass = className ? view.storageClass(className) : undefined;
  const item: ClaimItemInput = {
    kind: 'PersistentVolumeClaim',
    pvc: plain(pvc) as never,
    storageClass: storageClass ? (plain(storageClass) as never) : null,
    pvExists: view.pv(pvNameForClaim(pvc.metadata?.uid ?? '')) !== undefined,
  };
  const selected = pvc.metadata?.annotations?.[Annotations.selectedNode];
  if (selected) {
    // Node or CSINode gone: null, so the backend can hand the claim back to the scheduler.
    const node = view.node(selected);
    const csiNode = view.csiNode(selected);
    item.selectedNode = node && csiNode ? nodeInfo(node, csiNode, driver) : null;
  }
  if (storageClass?.volumeBindingMode !== 'WaitForFirstConsumer') {
    item.clusterZones = [...view.zones()];
  }
  const vacName = pvc.spec?.volumeAttributesClassName;
  if (vacName) {
    const vac = view.volumeAttributesClass(vacName);
    item.volumeAttributesClass = vac ? (plain(vac) as never) : null;
  }
  const volumeName = pvc.spec?.volumeName;
  if (volumeName) {
    const pv = view.pv(volumeName);
    item.pv = pv ? (plain(pv) as never) : null;
  }
  const source = claimSource(pvc, view);
  if (source) item.source = source;
  return item;
}

/** What the claim source context is read from. */
export type SourceView = Pick<ClusterView, 'claim' | 'claims' | 'volumeSnapshot' | 'snapshotContent' | 'pv'>;

/** The claim's data source that the backend restores or clones from, as the caches have it. */
export function claimSource(pvc: V1PersistentVolumeClaim, view: SourceView): ClaimItemInput['source'] {
  const source = supportedSource(pvc);
  if (!source) return undefined;
  const { kind, namespace, name } = source;
  const holders = sourceHolders(pvc, view);
  if (kind === 'VolumeSnapshot') {
    const snapshot = view.volumeSnapshot(namespace, name);
    const bound = snapshot?.status?.boundVolumeSnapshotContentName;
    const content = bound ? view.snapshotContent(bound) : undefined;
    return { kind, snapshot: snapshot ? (plain(snapshot) as never) : null, content: content ? (plain(content) as never) : null, holders };
  }
  const claim = view.claim(namespace, name);
  const volumeName = claim?.spec?.volumeName;
  const pv = volumeName ? view.pv(volumeName) : undefined;
  return { kind, claim: claim ? (plain(claim) as never) : null, pv: pv ? (plain(pv) as never) : null, holders };
}

/** The VolumeSnapshot or claim the claim is made from, in its own namespace; undefined for anything else. */
export function supportedSource(pvc: V1PersistentVolumeClaim): { kind: 'VolumeSnapshot' | 'PersistentVolumeClaim'; namespace: string; name: string } | undefined {
  const ref = sourceRef(pvc);
  const namespace = pvc.metadata?.namespace ?? '';
  if (!ref || (ref.namespace && ref.namespace !== namespace)) return undefined;
  if (ref.kind === 'VolumeSnapshot' && ref.apiGroup === SNAPSHOT_API_GROUP) return { kind: 'VolumeSnapshot', namespace, name: ref.name };
  if (ref.kind === 'PersistentVolumeClaim' && !ref.apiGroup) return { kind: 'PersistentVolumeClaim', namespace, name: ref.name };
  return undefined;
}

/** The other claims of the namespace made from the same source. */
export function sameSourceClaims(pvc: V1PersistentVolumeClaim, claims: readonly V1PersistentVolumeClaim[]): V1PersistentVolumeClaim[] {
  const source = supportedSource(pvc);
  if (!source) return [];
  return claims.filter((other) => {
    if (other.metadata?.uid === pvc.metadata?.uid) return false;
    const theirs = supportedSource(other);
    return theirs?.kind === source.kind && theirs.namespace === source.namespace && theirs.name === source.name;
  });
}

/** Names of the other claims made from the claim's source that may still make their volume from it (sorted). */
function sourceHolders(pvc: V1PersistentVolumeClaim, view: SourceView): string[] {
  return sameSourceClaims(pvc, view.claims(pvc.metadata?.namespace ?? ''))
    .filter((other) => claimMayMakeVolume(other, view.pv(pvNameForClaim(other.metadata?.uid ?? '')) !== undefined))
    .map((other) => other.metadata?.name ?? '')
    .sort();
}

/**
 * The claim's source carries external-provisioner's source protection that nothing needs any
 * more (the contract's `sourceReleasable`): the claim is sent, whatever else it asks, so that
 * the backend lets the source go.
 */
export function sourceAwaitsRelease(pvc: V1PersistentVolumeClaim, view: SourceView): boolean {
  const source = claimSource(pvc, view);
  if (!source) return false;
  const object = source.kind === 'VolumeSnapshot' ? source.snapshot : source.claim;
  const selfHolds = claimMayMakeVolume(pvc, view.pv(pvNameForClaim(pvc.metadata?.uid ?? '')) !== undefined);
  return sourceReleasable(object, source.kind, source.holders ?? [], selfHolds);
}

/** `dataSourceRef`, else `dataSource`: the reference the backend reads too. */
export function sourceRef(pvc: V1PersistentVolumeClaim): { kind: string; name: string; apiGroup?: string; namespace?: string } | undefined {
  return pvc.spec?.dataSourceRef ?? pvc.spec?.dataSource ?? undefined;
}

export function buildSnapshotContentItem(content: SnapshotContentObject, view: ClusterView): ItemInput {
  const className = content.spec?.volumeSnapshotClassName;
  const snapshotClass = className ? view.snapshotClass(className) : undefined;
  return {
    kind: 'VolumeSnapshotContent',
    content: plain(content) as never,
    snapshotClass: snapshotClass ? (plain(snapshotClass) as never) : null,
  };
}

/**
 * A group content's item: the content, its class, and for each volume handle the PV of our
 * driver whose CSI volume handle it is and the claim bound to that PV (by the PV's claimRef).
 */
export function buildGroupSnapshotContentItem(content: GroupSnapshotContentObject, view: Pick<ClusterView, 'groupSnapshotClass' | 'pvs'>, driver: string): ItemInput {
  const className = content.spec?.volumeGroupSnapshotClassName;
  const groupSnapshotClass = className ? view.groupSnapshotClass(className) : undefined;
  const handles = content.spec?.source?.volumeHandles ?? [];
  const pvs = handles.length > 0 ? view.pvs().filter((pv) => pv.spec?.csi?.driver === driver) : [];
  const members = handles.map((volumeHandle) => {
    const pv = pvs.find((v) => v.spec?.csi?.volumeHandle === volumeHandle);
    const ref = pv?.spec?.claimRef;
    return {
      volumeHandle,
      persistentVolume: pv?.metadata?.name ?? null,
      claim: ref?.namespace && ref.name ? { namespace: ref.namespace, name: ref.name } : null,
    };
  });
  return {
    kind: 'VolumeGroupSnapshotContent',
    content: plain(content) as never,
    groupSnapshotClass: groupSnapshotClass ? (plain(groupSnapshotClass) as never) : null,
    members,
  };
}

/** Reads a VolumeAttributesClass live; null when it does not exist, undefined when the read failed. */
export type LiveClassRead = (name: string) => Promise<V1VolumeAttributesClass | null | undefined>;

/**
 * The item with a VolumeAttributesClass the cache does not hold confirmed absent by a live
 * read (a class created a moment ago may not be in the cache yet): the backend marks the
 * claim's change Pending only on a live "does not exist". Undefined when the read failed: the
 * item waits for the next offer rather than go with a guess.
 */
export async function withLiveClassCheck<T extends ClaimItemInput>(item: T, readClass: LiveClassRead): Promise<T | undefined> {
  const name = item.pvc.spec.volumeAttributesClassName;
  if (!name || item.volumeAttributesClass !== null) return item;
  const vac = await readClass(name);
  if (vac === undefined) return undefined;
  return { ...item, volumeAttributesClass: vac ? (plain(vac) as never) : null };
}

export function buildClaimDeletedItem(claim: DeletedClaim, view: ClusterView): ClaimDeletedItemInput {
  return {
    kind: 'PersistentVolumeClaimDeleted',
    uid: claim.uid,
    namespace: claim.namespace,
    name: claim.name,
    pvExists: view.pv(pvNameForClaim(claim.uid)) !== undefined,
  };
}

export function buildVolumeItem(pv: V1PersistentVolume, view: ClusterView): ItemInput {
  return {
    kind: 'PersistentVolume',
    pv: plain(pv) as never,
    volumeAttachments: [...view.attachmentsOf(pv.metadata?.name ?? '')].sort(),
  };
}

export function buildAttachmentItem(va: V1VolumeAttachment, view: ClusterView, driver: string): ItemInput {
  const pvName = va.spec?.source?.persistentVolumeName;
  const pv = pvName ? view.pv(pvName) : undefined;
  const nodeName = va.spec?.nodeName ?? '';
  const node = view.node(nodeName);
  return {
    kind: 'VolumeAttachment',
    volumeAttachment: plain(va) as never,
    pv: pv ? (plain(pv) as never) : null,
    node: node ? nodeInfo(node, view.csiNode(nodeName), driver) : null,
  };
}

/** Whether a PV exists, read live from the API server; undefined when the read failed. */
export type LivePvRead = (name: string) => Promise<boolean | undefined>;

/**
 * The item with `pvExists` confirmed by a live read when the cache says the PV is absent: the
 * backend deletes a claim's disk only on a live `pvExists: false`, never on a cache that may
 * lag. A PV in the cache did exist, so `true` needs no confirmation to keep a disk. When the
 * read fails the item goes as it was, and the backend waits.
 */
export async function withLivePvCheck<T extends ClaimItemInput | ClaimDeletedItemInput>(item: T, pvName: string, readPv: LivePvRead): Promise<T> {
  if (item.pvExists) return item;
  const exists = await readPv(pvName);
  return exists === undefined ? item : { ...item, pvExists: exists, pvCheckedLive: true };
}

/** A queue key taken apart: which cache holds its object. */
export type ParsedKey =
  | { kind: 'PersistentVolumeClaim'; namespace: string; name: string }
  | { kind: 'PersistentVolume'; name: string }
  | { kind: 'VolumeAttachment'; name: string }
  | { kind: 'PersistentVolumeClaimDeleted'; uid: string }
  | { kind: 'VolumeSnapshotContent'; name: string }
  | { kind: 'VolumeGroupSnapshotContent'; name: string }
  | { kind: 'VolumeReport' };

/** The inverse of `itemKey`; undefined for a key no item has. */
export function parseItemKey(key: string): ParsedKey | undefined {
  const [kind, ...rest] = key.split('/');
  switch (kind) {
    case 'PersistentVolumeClaim':
      return rest.length === 2 ? { kind, namespace: rest[0] as string, name: rest[1] as string } : undefined;
    case 'PersistentVolume':
    case 'VolumeAttachment':
    case 'VolumeSnapshotContent':
    case 'VolumeGroupSnapshotContent':
      return rest.length === 1 ? { kind, name: rest[0] as string } : undefined;
    case 'PersistentVolumeClaimDeleted':
      return rest.length === 1 ? { kind, uid: rest[0] as string } : undefined;
    case 'VolumeReport':
      return key === ItemKeys.report() ? { kind } : undefined;
    default:
      return undefined;
  }
}

/** Keys, the same as `itemKey` gives for the items built from these objects: the contract's `ItemKeys`. */
export const keys = ItemKeys;
