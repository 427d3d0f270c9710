/**
 * What the forwarder sends: each item is one object as the cluster has it now, plus the
 * context the backend needs so that it never has to call the cluster.
 */
import * as z from 'zod/mini';
import { deferred } from './deferred.js';
import {
  NodeInfoSchema,
  PersistentVolumeClaimSchema,
  PersistentVolumeSchema,
  StorageClassSchema,
  VolumeAttachmentSchema,
  VolumeAttributesClassSchema,
} from './kube-objects.js';
import { VolumeSnapshotClassSchema, VolumeSnapshotContentSchema, VolumeSnapshotSchema } from './snapshots.js';
import { VolumeGroupSnapshotClassSchema, VolumeGroupSnapshotContentSchema } from './group-snapshots.js';

/**
 * What the claim's data source is now, as the cluster has it: for a restore the VolumeSnapshot
 * and the content it is bound to, for a clone the source claim and its PV. Each null when
 * it does not exist (yet). Absent when the claim has no data source of these kinds.
 * `holders`: the other claims of the namespace with the same source that may still make their
 * volume from it (`claimMayMakeVolume`), by name — while there are any, the source keeps its
 * protection (lib/contract/source-protection.ts).
 */
export const ClaimSourceSchema = deferred(() => z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('VolumeSnapshot'),
    snapshot: z.nullable(VolumeSnapshotSchema),
    content: z.nullable(VolumeSnapshotContentSchema),
    holders: z._default(z.array(z.string()), []),
  }),
  z.object({
    kind: z.literal('PersistentVolumeClaim'),
    claim: z.nullable(PersistentVolumeClaimSchema),
    pv: z.nullable(PersistentVolumeSchema),
    holders: z._default(z.array(z.string()), []),
  }),
]));
export type ClaimSource = z.infer<typeof ClaimSourceSchema>;
import { VolumeReportItemSchema } from './report.js';

export const PersistentVolumeClaimItemSchema = deferred(() => z.object({
  kind: z.literal('PersistentVolumeClaim'),
  pvc: PersistentVolumeClaimSchema,
  /** The claim's StorageClass; null when the class does not exist (yet). */
  storageClass: z.nullable(StorageClassSchema),
  /**
   * WaitForFirstConsumer: the node named by `volume.kubernetes.io/selected-node`, or null
   * when that node (or its CSINode) is gone. Absent when no node is selected.
   */
  selectedNode: z.optional(z.nullable(NodeInfoSchema)),
  /** Immediate binding: the zones the cluster's nodes are in, to spread volumes over. */
  clusterZones: z._default(z.array(z.string()), []),
  /** Whether PV `pvc-<uid>` already exists in the cluster. */
  pvExists: z.boolean(),
  /**
   * `pvExists` was read live from the API server, not from a cache. The disk of a claim being
   * deleted is deleted only on a live `pvExists: false`: a lagging cache must never decide it.
   */
  pvCheckedLive: z._default(z.boolean(), false),
  /** The claim's VolumeSnapshot or PersistentVolumeClaim data source, with what a restore or clone needs. */
  source: z.optional(ClaimSourceSchema),
  /**
   * The VolumeAttributesClass named by `spec.volumeAttributesClassName`; null when it does not
   * exist (confirmed by a live read), absent when the claim names none.
   */
  volumeAttributesClass: z.optional(z.nullable(VolumeAttributesClassSchema)),
  /** A bound claim: its PV (`spec.volumeName`); null when that PV is not known. Absent while unbound. */
  pv: z.optional(z.nullable(PersistentVolumeSchema)),
}));

export const PersistentVolumeClaimDeletedItemSchema = deferred(() => z.object({
  kind: z.literal('PersistentVolumeClaimDeleted'),
  uid: z.string().check(z.minLength(1)),
  namespace: z.string().check(z.minLength(1)),
  name: z.string().check(z.minLength(1)),
  /** Whether a PV for this claim exists; if so the PV's reclaim path owns the disk. */
  pvExists: z.boolean(),
  /** As for PersistentVolumeClaim items: the disk is deleted only on a live `pvExists: false`. */
  pvCheckedLive: z._default(z.boolean(), false),
}));

export const PersistentVolumeItemSchema = deferred(() => z.object({
  kind: z.literal('PersistentVolume'),
  pv: PersistentVolumeSchema,
  /** Names of the VolumeAttachments whose source is this PV. */
  volumeAttachments: z._default(z.array(z.string()), []),
}));

export const VolumeAttachmentItemSchema = deferred(() => z.object({
  kind: z.literal('VolumeAttachment'),
  volumeAttachment: VolumeAttachmentSchema,
  /**
   * The PV named by `spec.source.persistentVolumeName`; null when it is gone, and for an inline
   * volume (`spec.source.inlineVolumeSpec`, which carries the disk itself).
   */
  pv: z.nullable(PersistentVolumeSchema),
  /** `spec.nodeName` with its CSINode entry; null when the Node is gone. */
  node: z.nullable(NodeInfoSchema),
}));

/** A VolumeSnapshotContent of our driver (the source PV's volume handle is its `spec.source.volumeHandle`). */
export const VolumeSnapshotContentItemSchema = deferred(() => z.object({
  kind: z.literal('VolumeSnapshotContent'),
  content: VolumeSnapshotContentSchema,
  /** The content's VolumeSnapshotClass; null when it names none or the class does not exist (yet). */
  snapshotClass: z.nullable(VolumeSnapshotClassSchema),
}));

/**
 * One volume a group content names (`spec.source.volumeHandles`), with the PV whose CSI volume
 * handle it is and the claim bound to that PV, as the cluster has them: each null when there is
 * none (the messages then name the volume alone).
 */
export const GroupMemberVolumeSchema = deferred(() => z.object({
  volumeHandle: z.string().check(z.minLength(1)),
  persistentVolume: z.nullable(z.string().check(z.minLength(1))),
  claim: z.nullable(z.object({ namespace: z.string().check(z.minLength(1)), name: z.string().check(z.minLength(1)) })),
}));
export type GroupMemberVolume = z.infer<typeof GroupMemberVolumeSchema>;

/**
 * A VolumeGroupSnapshotContent of our driver. Sent only to a backend whose check answer says it
 * serves group snapshots (`BackendFeatures.groupSnapshots`, lib/contract/check.ts): a backend
 * before them refuses a whole request with an item kind it does not know.
 */
export const VolumeGroupSnapshotContentItemSchema = deferred(() => z.object({
  kind: z.literal('VolumeGroupSnapshotContent'),
  content: VolumeGroupSnapshotContentSchema,
  /** The content's VolumeGroupSnapshotClass; null when it names none or the class does not exist (yet). */
  groupSnapshotClass: z.nullable(VolumeGroupSnapshotClassSchema),
  /** One per `spec.source.volumeHandles` entry. */
  members: z._default(z.array(GroupMemberVolumeSchema), []),
}));

export const ItemSchema = deferred(() => z.discriminatedUnion('kind', [
  PersistentVolumeClaimItemSchema,
  PersistentVolumeClaimDeletedItemSchema,
  PersistentVolumeItemSchema,
  VolumeAttachmentItemSchema,
  VolumeSnapshotContentItemSchema,
  VolumeGroupSnapshotContentItemSchema,
  VolumeReportItemSchema,
]));

export type PersistentVolumeClaimItem = z.infer<typeof PersistentVolumeClaimItemSchema>;
export type PersistentVolumeClaimDeletedItem = z.infer<typeof PersistentVolumeClaimDeletedItemSchema>;
export type PersistentVolumeItem = z.infer<typeof PersistentVolumeItemSchema>;
export type VolumeAttachmentItem = z.infer<typeof VolumeAttachmentItemSchema>;
export type VolumeSnapshotContentItem = z.infer<typeof VolumeSnapshotContentItemSchema>;
export type VolumeGroupSnapshotContentItem = z.infer<typeof VolumeGroupSnapshotContentItemSchema>;
export type Item = z.infer<typeof ItemSchema>;
/** An item as written by the forwarder, before defaults are applied. */
export type ItemInput = z.input<typeof ItemSchema>;

/** Upper bound on items in one request; the forwarder's batch size must not exceed it. */
export const MAX_ITEMS_PER_REQUEST = 500;

/** Upper bound on a request body; the forwarder splits batches to stay under it. */
export const MAX_REQUEST_BYTES = 1024 * 1024;

export const ReconcileRequestSchema = deferred(() => z.object({
  /** The cluster the request is for, inside the signed body: it must equal the path's. */
  clusterId: z.string().check(z.minLength(1)),
  items: z.array(ItemSchema).check(z.minLength(1)).check(z.maxLength(MAX_ITEMS_PER_REQUEST)),
}));
export type ReconcileRequest = z.infer<typeof ReconcileRequestSchema>;

/**
 * The keys of items, by what the forwarder knows when it queues one: the key of the item it
 * will build from an object, before building it. {@link itemKey} is these over an item.
 */
export const ItemKeys = {
  claim: (namespace: string, name: string) => `PersistentVolumeClaim/${namespace}/${name}`,
  claimDeleted: (uid: string) => `PersistentVolumeClaimDeleted/${uid}`,
  volume: (name: string) => `PersistentVolume/${name}`,
  attachment: (name: string) => `VolumeAttachment/${name}`,
  snapshotContent: (name: string) => `VolumeSnapshotContent/${name}`,
  groupSnapshotContent: (name: string) => `VolumeGroupSnapshotContent/${name}`,
  /** One per cluster: the forwarder's report of the disks its PVs and attachments name. */
  report: () => 'VolumeReport/cluster',
} as const;

/**
 * A stable identity for an item, used to key the forwarder's queue and echoed in results:
 * `PersistentVolumeClaim/<ns>/<name>`, `PersistentVolume/<name>`, `VolumeAttachment/<name>`,
 * `PersistentVolumeClaimDeleted/<uid>`, `VolumeSnapshotContent/<name>`, `VolumeGroupSnapshotContent/<name>`.
 */
export function itemKey(item: ItemInput): string {
  switch (item.kind) {
    case 'PersistentVolumeClaim':
      return ItemKeys.claim(item.pvc.metadata.namespace, item.pvc.metadata.name);
    case 'PersistentVolumeClaimDeleted':
      return ItemKeys.claimDeleted(item.uid);
    case 'PersistentVolume':
      return ItemKeys.volume(item.pv.metadata.name);
    case 'VolumeAttachment':
      return ItemKeys.attachment(item.volumeAttachment.metadata.name);
    case 'VolumeSnapshotContent':
      return ItemKeys.snapshotContent(item.content.metadata.name);
    case 'VolumeGroupSnapshotContent':
      return ItemKeys.groupSnapshotContent(item.content.metadata.name);
    case 'VolumeReport':
      return ItemKeys.report();
  }
}
