/**
 * The cluster's volume report: what the forwarder tells the backend, every resync, about the
 * disks its PersistentVolumes and VolumeAttachments name — the cluster's half of the audit
 * (lib/audit), which compares it with the disks EC2 holds for the cluster. Compact on the
 * wire: a digest alone while nothing changed, the digest and the report when it did — whole
 * when it fits in one part, else in parts ({@link splitReport}) that the backend puts back
 * together ({@link assembleReport}) and keeps only once every part of one digest is in.
 */
import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import * as z from 'zod/mini';
import { deferred } from './deferred.js';
import { SnapshotCopyRecordSchema } from './snapshot-copy.js';

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
  /**
   * A VolumeGroupSnapshotContent, not a VolumeSnapshotContent: every snapshot of the group is
   * tagged with its name (`content`), and it names no one snapshot handle. So the audit never
   * takes a group's snapshots for orphans while their group content is there, whether or not
   * member contents name them yet. (A backend before it reads the entry as a content, by name:
   * the same protection.)
   */
  group: z.optional(z.literal(true)),
  /** Its cross-Region copy, as its `volhook.io/snapshot-copy` annotation records it. */
  copy: z.optional(SnapshotCopyRecordSchema),
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
  /**
   * The report itself, or with `part` one part of it; left out when the backend acknowledged
   * this digest already.
   */
  report: z.optional(VolumeReportSchema),
  /**
   * `report` is part `index` (from 0) of `count` parts of the report whose digest is `digest`.
   * Absent: `report` is the whole report (the one way a forwarder sent it before parts).
   */
  part: z.optional(z.object({ index: z.int().check(z.nonnegative()), count: z.int().check(z.positive(), z.maximum(MAX_REPORT_PARTS)) })),
  /**
   * More parts of the same report in the same item, beside `report` (part `part.index`): how a
   * forwarder whose bodies go gzip'd sends a report of many parts in few requests. Only a
   * backend that accepts gzip'd bodies (body-encoding.ts) reads it, so only such a one gets it.
   */
  more: z.optional(
    z
      .array(z.object({ index: z.int().check(z.nonnegative()), report: VolumeReportSchema }))
      .check(z.minLength(1), z.maxLength(MAX_PARTS_PER_ITEM - 1)),
  ),
}).check(
  z.superRefine((item, ctx) => {
    const problem = reportItemProblem(item);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  }),
));
export type VolumeReportItem = z.infer<typeof VolumeReportItemSchema>;

/**
 * What one part of a report may weigh as JSON: well under a request's 1 MiB with the rest of
 * a batch, and — gzip never makes data more than a few bytes larger — under what one DynamoDB
 * item holds of report (lib/reports/dynamodb.ts) whatever the entries compress to.
 */
export const MAX_REPORT_PART_BYTES = 320 * 1024;
/** Parts of one report at most: 4,096 × 320 KiB is over a gigabyte of report. */
export const MAX_REPORT_PARTS = 4096;

/**
 * A part sent gzip'd may be larger as JSON, as long as it compresses to what one part may be
 * compressed (the store keeps each part gzip'd, lib/reports/dynamodb.ts) and stays within what
 * one request may decode to with two others beside it.
 */
export const MAX_GZIPPED_PART_BYTES = 320 * 1024;
export const MAX_GZIPPED_PART_JSON_BYTES = 2560 * 1024;
/** Parts one item may carry (`report` and `more`): three gzip'd parts fit one request's bytes and decoded bytes. */
export const MAX_PARTS_PER_ITEM = 3;

/**
 * The longest a forwarder goes without sending its report (or the report's digest), whatever
 * the backend's answer (`reportWithinSeconds`) asks: half the scheduled audit's hour, so a mark
 * an audit sets is followed by a report before the next audit — and from then on by one every
 * resync, the backend asking for that while the cluster has marks.
 */
export const REPORT_WITHIN_MAX_SECONDS = 1800;

/** How a report's parts are measured: by their JSON, or (bodies gzip'd) by what they compress to. */
export type PartSizing = 'json' | 'gzip';

/** Why a report item cannot be taken as it is (a part without its report, an index past the count, a part too large); undefined when it can. */
export function reportItemProblem(item: {
  report?: VolumeReport | undefined;
  part?: { index: number; count: number } | undefined;
  more?: readonly { index: number; report: VolumeReport }[] | undefined;
}): string | undefined {
  const { part, report, more = [] } = item;
  if (!part) return more.length > 0 ? 'more parts of a volume report without `part`: which report they belong to is not said' : undefined;
  if (!report) return `part ${part.index} of a volume report carries no report`;
  const indices = [part.index, ...more.map((m) => m.index)];
  for (const index of indices) {
    if (index >= part.count) return `part ${index} of a volume report of ${part.count} parts does not exist (parts are numbered from 0)`;
  }
  if (new Set(indices).size < indices.length) return `parts ${indices.join(', ')} of a volume report: a part is sent twice in one item`;
  for (const [index, body] of [[part.index, report], ...more.map((m) => [m.index, m.report])] as [number, VolumeReport][]) {
    const problem = partProblem(body, index, part.count);
    if (problem) return problem;
  }
  return undefined;
}

/** Why one part is too large, or undefined: within {@link MAX_REPORT_PART_BYTES} of JSON, or compressing to within {@link MAX_GZIPPED_PART_BYTES}. */
function partProblem(report: VolumeReport, index: number, count: number): string | undefined {
  const bytes = jsonBytes(report);
  if (bytes <= MAX_REPORT_PART_BYTES) return undefined;
  if (bytes <= MAX_GZIPPED_PART_JSON_BYTES && gzipBytes(report) <= MAX_GZIPPED_PART_BYTES) return undefined;
  const largest = entriesOf(report).reduce((a, b) => (b.bytes > a.bytes ? b : a));
  return largest.bytes + jsonBytes(emptyLike(report)) > MAX_REPORT_PART_BYTES
    ? `the volume report cannot be sent: its ${largest.name} alone is ${largest.bytes} bytes of JSON, more than the ${MAX_REPORT_PART_BYTES} one part may hold ` +
        `(or, gzip'd, compressing to ${MAX_GZIPPED_PART_BYTES})`
    : `part ${index} of ${count} of the volume report is ${bytes} bytes of JSON, more than the ${MAX_REPORT_PART_BYTES} one part may hold ` +
        `(or, gzip'd, ${MAX_GZIPPED_PART_JSON_BYTES} bytes of JSON compressing to ${MAX_GZIPPED_PART_BYTES})`;
}

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
  return canonicalDigest(canonicalReport(report));
}

/** {@link reportDigest} of a report already made canonical ({@link canonicalReport}), without doing that again. */
export function canonicalDigest(canonical: VolumeReport): string {
  return createHash('sha256').update(JSON.stringify(canonical)).digest('hex');
}

/**
 * The canonical report (see {@link canonicalReport}) in parts of at most `maxBytes` of JSON
 * each, its entries in order: volumes, attachments, claims, snapshots. Each part is a report
 * of its own shape (with `snapshots` exactly when the whole has them), so that
 * {@link assembleReport} of the parts in order is the canonical report again. An entry larger
 * than a part alone gets a part of its own, which the item's schema then refuses, naming it.
 */
export function splitReport(report: VolumeReport, maxBytes = MAX_REPORT_PART_BYTES): VolumeReport[] {
  const empty = emptyLike(report);
  const base = jsonBytes(empty);
  const parts: VolumeReport[] = [];
  let current = structuredClone(empty);
  let size = base;
  let entries = 0;
  for (const entry of entriesOf(report)) {
    const cost = entry.bytes + (entries > 0 ? 1 : 0);
    if (entries > 0 && size + cost > maxBytes) {
      parts.push(current);
      current = structuredClone(empty);
      size = base;
      entries = 0;
    }
    size += entry.bytes + (entries > 0 ? 1 : 0);
    entries += 1;
    entry.add(current);
  }
  parts.push(current);
  return parts;
}

/**
 * {@link splitReport} for bodies that go gzip'd: parts of at most {@link MAX_GZIPPED_PART_JSON_BYTES}
 * of JSON that each compress to at most `maxGzipBytes`. The JSON bound of a part comes from how
 * well the whole report compresses, with a tenth to spare; a part that still compresses to more
 * is split again, so every part is within both bounds whatever its entries are.
 */
export function splitReportGzipped(report: VolumeReport, maxGzipBytes = MAX_GZIPPED_PART_BYTES): VolumeReport[] {
  const ratio = Math.max(gzipBytes(report) / Math.max(jsonBytes(report), 1), 1 / 64);
  const target = Math.max(MAX_REPORT_PART_BYTES, Math.min(MAX_GZIPPED_PART_JSON_BYTES, Math.floor((0.9 * maxGzipBytes) / ratio)));
  return splitReport(report, target).flatMap((part) => fitGzipped(part, maxGzipBytes, target));
}

function fitGzipped(part: VolumeReport, maxGzipBytes: number, target: number): VolumeReport[] {
  if (target <= MAX_REPORT_PART_BYTES || gzipBytes(part) <= maxGzipBytes) return [part];
  const half = Math.max(MAX_REPORT_PART_BYTES, Math.floor(target / 2));
  return splitReport(part, half).flatMap((p) => fitGzipped(p, maxGzipBytes, half));
}

/** The parts of a report, in order, put back together: the inverse of {@link splitReport}. */
export function assembleReport(parts: readonly VolumeReport[]): VolumeReport {
  const first = parts[0];
  if (!first) throw new Error('a volume report of no parts');
  return {
    volumes: parts.flatMap((p) => p.volumes),
    attachments: parts.flatMap((p) => p.attachments),
    claims: parts.flatMap((p) => p.claims),
    ...(first.snapshots && { snapshots: parts.flatMap((p) => p.snapshots ?? []) }),
  };
}

function emptyLike(report: VolumeReport): VolumeReport {
  return { volumes: [], attachments: [], claims: [], ...(report.snapshots && { snapshots: [] }) };
}

function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value));
}

function gzipBytes(value: unknown): number {
  return gzipSync(JSON.stringify(value)).length;
}

/** Every entry of the report in its order, with its size as JSON and a name for messages. */
function entriesOf(report: VolumeReport): { name: string; bytes: number; add(to: VolumeReport): void }[] {
  return [
    ...report.volumes.map((v) => ({ name: `PersistentVolume "${shown(v.pv)}"`, bytes: jsonBytes(v), add: (to: VolumeReport) => void to.volumes.push(v) })),
    ...report.attachments.map((a) => ({ name: `VolumeAttachment "${shown(a.name)}"`, bytes: jsonBytes(a), add: (to: VolumeReport) => void to.attachments.push(a) })),
    ...report.claims.map((c) => ({ name: `claim uid "${shown(c)}"`, bytes: jsonBytes(c), add: (to: VolumeReport) => void to.claims.push(c) })),
    ...(report.snapshots ?? []).map((c) => ({ name: `VolumeSnapshotContent "${shown(c.content)}"`, bytes: jsonBytes(c), add: (to: VolumeReport) => void to.snapshots?.push(c) })),
  ];
}

/** A name as a message shows it: the start of an enormous one. */
function shown(name: string): string {
  return name.length > 100 ? `${name.slice(0, 100)}… (${name.length} characters)` : name;
}
