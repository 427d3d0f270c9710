/**
 * The cluster's volume report: what the forwarder tells the backend, every resync, about the
 * disks its PersistentVolumes and VolumeAttachments name — the cluster's half of the audit
 * (lib/audit), which compares it with the disks EC2 holds for the cluster. Compact on the
 * wire: a digest alone while nothing changed, the digest and the whole report when it did.
 */
import { createHash } from 'node:crypto';
import * as z from 'zod/mini';
import { deferred } from './deferred.js';

export const ReportedVolumeSchema = deferred(() => z.object({
  /** The PV's name. */
  pv: z.string().check(z.minLength(1)),
  pvUid: z.optional(z.string()),
  /** The EBS volume ID the PV names (`csi.volumeHandle`, or an in-tree PV's `vol-…`). */
  volumeId: z.string().check(z.minLength(1)),
  /** `spec.persistentVolumeReclaimPolicy` (Retain when unset, as the API server defaults it). */
  reclaimPolicy: z.string().check(z.minLength(1)),
  /** `status.phase`: a Released PV of the Delete policy is about to lose its disk on purpose. */
  phase: z.optional(z.string()),
  /** The claim the PV is bound to (`spec.claimRef`). */
  claim: z.optional(z.object({ namespace: z.string().check(z.minLength(1)), name: z.string().check(z.minLength(1)), uid: z.optional(z.string()) })),
}));
export type ReportedVolume = z.infer<typeof ReportedVolumeSchema>;

export const ReportedAttachmentSchema = deferred(() => z.object({
  /** The VolumeAttachment's name. */
  name: z.string().check(z.minLength(1)),
  volumeId: z.string().check(z.minLength(1)),
  /** The node's EC2 instance ID (its CSINode entry for the driver); absent when unknown. */
  instanceId: z.optional(z.string()),
  /** `status.attached`. */
  attached: z.boolean(),
}));
export type ReportedAttachment = z.infer<typeof ReportedAttachmentSchema>;

export const ReportedSnapshotContentSchema = deferred(() => z.object({
  /** The VolumeSnapshotContent's name: what its snapshot's `CSIVolumeSnapshotName` tag names. */
  content: z.string().check(z.minLength(1)),
  contentUid: z.optional(z.string()),
  /**
   * The EBS snapshot the content names: `status.snapshotHandle`, or `spec.source.snapshotHandle`
   * for a pre-provisioned content; absent while a dynamic content has none yet.
   */
  snapshotHandle: z.optional(z.string().check(z.minLength(1))),
  /** `spec.deletionPolicy`. */
  deletionPolicy: z.string().check(z.minLength(1)),
  /** `status.readyToUse`: the snapshot was found (and, pre-provisioned, checked to be ours) and completed. */
  readyToUse: z._default(z.boolean(), false),
  /** The being-created annotation is set: a CreateSnapshot for it may be in flight. */
  beingCreated: z._default(z.boolean(), false),
  /** It has a deletion timestamp. */
  deleting: z._default(z.boolean(), false),
}));
export type ReportedSnapshotContent = z.infer<typeof ReportedSnapshotContentSchema>;

export const VolumeReportSchema = deferred(() => z.object({
  volumes: z.array(ReportedVolumeSchema),
  /** VolumeAttachments of our driver that are not being deleted. */
  attachments: z.array(ReportedAttachmentSchema),
  /** The uids of the cluster's claims of ours: a disk made for one of them is not orphaned. */
  claims: z.array(z.string().check(z.minLength(1))),
  /**
   * Every VolumeSnapshotContent of our driver. Absent from the reports of forwarders that
   * predate it: then the audit judges no snapshot (it cannot tell which ones a content names).
   */
  snapshots: z.optional(z.array(ReportedSnapshotContentSchema)),
}));
export type VolumeReport = z.infer<typeof VolumeReportSchema>;

const DIGEST = /^[0-9a-f]{64}$/;

export const VolumeReportItemSchema = deferred(() => z.object({
  kind: z.literal('VolumeReport'),
  /** {@link reportDigest} of the report as the forwarder sees it now. */
  digest: z.string().check(z.regex(DIGEST, 'a report digest is 64 lower-case hex characters')),
  /**
   * When the forwarder read the report from its caches (epoch ms, its clock). Items of a batch
   * are built before the batch is signed, so this may be earlier than the signature: the
   * backend takes the earlier of the two as the time the report speaks for.
   */
  observedAt: z.int().check(z.positive()),
  /** The report itself; left out when the backend acknowledged this digest already. */
  report: z.optional(VolumeReportSchema),
}));
export type VolumeReportItem = z.infer<typeof VolumeReportItemSchema>;

/** The report in one order whatever order the caches listed it in: what the digest is taken over. */
export function canonicalReport(input: VolumeReport): VolumeReport {
  // Parsed again so every object's keys come in the schema's order, whoever built it.
  const report = VolumeReportSchema.parse(input);
  const by = <T>(key: (t: T) => string) => (a: T, b: T) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0);
  return {
    volumes: [...report.volumes].sort(by((v) => `${v.pv}\0${v.volumeId}`)),
    attachments: [...report.attachments].sort(by((a) => a.name)),
    claims: [...new Set(report.claims)].sort(),
    // Only when sent, so a report without them keeps the digest older forwarders computed.
    ...(report.snapshots && { snapshots: [...report.snapshots].sort(by((c) => c.content)) }),
  };
}

/** Hex SHA-256 of the canonical report's JSON: equal reports, equal digests, on both sides. */
export function reportDigest(report: VolumeReport): string {
  return createHash('sha256').update(JSON.stringify(canonicalReport(report))).digest('hex');
}
