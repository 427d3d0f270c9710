/**
 * What the forwarder sends: each item is one object as the cluster has it now, plus the
 * context the backend needs so that it never has to call the cluster.
 */
import { z } from 'zod';
import {
  NodeInfoSchema,
  PersistentVolumeClaimSchema,
  PersistentVolumeSchema,
  StorageClassSchema,
  VolumeAttachmentSchema,
} from './kube-objects.js';
import { VolumeReportItemSchema } from './report.js';

export const PersistentVolumeClaimItemSchema = z.object({
  kind: z.literal('PersistentVolumeClaim'),
  pvc: PersistentVolumeClaimSchema,
  /** The claim's StorageClass; null when the class does not exist (yet). */
  storageClass: StorageClassSchema.nullable(),
  /**
   * WaitForFirstConsumer: the node named by `volume.kubernetes.io/selected-node`, or null
   * when that node (or its CSINode) is gone. Absent when no node is selected.
   */
  selectedNode: NodeInfoSchema.nullable().optional(),
  /** Immediate binding: the zones the cluster's nodes are in, to spread volumes over. */
  clusterZones: z.array(z.string()).default([]),
  /** Whether PV `pvc-<uid>` already exists in the cluster. */
  pvExists: z.boolean(),
  /**
   * `pvExists` was read live from the API server, not from a cache. The disk of a claim being
   * deleted is deleted only on a live `pvExists: false`: a lagging cache must never decide it.
   */
  pvCheckedLive: z.boolean().default(false),
});

export const PersistentVolumeClaimDeletedItemSchema = z.object({
  kind: z.literal('PersistentVolumeClaimDeleted'),
  uid: z.string().min(1),
  namespace: z.string().min(1),
  name: z.string().min(1),
  /** Whether a PV for this claim exists; if so the PV's reclaim path owns the disk. */
  pvExists: z.boolean(),
  /** As for PersistentVolumeClaim items: the disk is deleted only on a live `pvExists: false`. */
  pvCheckedLive: z.boolean().default(false),
});

export const PersistentVolumeItemSchema = z.object({
  kind: z.literal('PersistentVolume'),
  pv: PersistentVolumeSchema,
  /** Names of the VolumeAttachments whose source is this PV. */
  volumeAttachments: z.array(z.string()).default([]),
});

export const VolumeAttachmentItemSchema = z.object({
  kind: z.literal('VolumeAttachment'),
  volumeAttachment: VolumeAttachmentSchema,
  /** The PV named by `spec.source.persistentVolumeName`; null when it is gone. */
  pv: PersistentVolumeSchema.nullable(),
  /** `spec.nodeName` with its CSINode entry; null when the Node is gone. */
  node: NodeInfoSchema.nullable(),
});

export const ItemSchema = z.discriminatedUnion('kind', [
  PersistentVolumeClaimItemSchema,
  PersistentVolumeClaimDeletedItemSchema,
  PersistentVolumeItemSchema,
  VolumeAttachmentItemSchema,
  VolumeReportItemSchema,
]);

export type PersistentVolumeClaimItem = z.infer<typeof PersistentVolumeClaimItemSchema>;
export type PersistentVolumeClaimDeletedItem = z.infer<typeof PersistentVolumeClaimDeletedItemSchema>;
export type PersistentVolumeItem = z.infer<typeof PersistentVolumeItemSchema>;
export type VolumeAttachmentItem = z.infer<typeof VolumeAttachmentItemSchema>;
export type Item = z.infer<typeof ItemSchema>;
/** An item as written by the forwarder, before defaults are applied. */
export type ItemInput = z.input<typeof ItemSchema>;

/** Upper bound on items in one request; the forwarder's batch size must not exceed it. */
export const MAX_ITEMS_PER_REQUEST = 500;

/** Upper bound on a request body; the forwarder splits batches to stay under it. */
export const MAX_REQUEST_BYTES = 1024 * 1024;

export const ReconcileRequestSchema = z.object({
  /** The cluster the request is for, inside the signed body: it must equal the path's. */
  clusterId: z.string().min(1),
  items: z.array(ItemSchema).min(1).max(MAX_ITEMS_PER_REQUEST),
});
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
  /** One per cluster: the forwarder's report of the disks its PVs and attachments name. */
  report: () => 'VolumeReport/cluster',
} as const;

/**
 * A stable identity for an item, used to key the forwarder's queue and echoed in results:
 * `PersistentVolumeClaim/<ns>/<name>`, `PersistentVolume/<name>`, `VolumeAttachment/<name>`,
 * `PersistentVolumeClaimDeleted/<uid>`.
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
    case 'VolumeReport':
      return ItemKeys.report();
  }
}
