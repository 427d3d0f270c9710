/**
 * A snapshot's cross-Region copy (a VolumeSnapshotClass's `copyToRegion`), as its
 * VolumeSnapshotContent records it: one annotation whose value is JSON, written by the backend
 * and read by both sides — the backend to carry the copy on, the forwarder to keep sending a
 * ready content while its copy is still under way.
 */
import * as z from 'zod/mini';
import { deferred } from './deferred.js';

/** The content's annotation naming the copy: its Region, its snapshot ID once made, its state. */
export const SNAPSHOT_COPY_ANNOTATION = 'volhook.io/snapshot-copy';

/**
 * - `waiting`: the class asks for a copy; it is made once the snapshot is completed.
 * - `copying`: CopySnapshot may have been sent (written before it is): a copy may exist
 *   without its ID here, found by its name tag in the destination Region.
 * - `pending`: the copy exists (`snapshotId`) and EC2 is still copying.
 * - `completed`: the copy is usable in the destination Region.
 * - `failed`: the copy was refused or failed (`message` says why); the source snapshot stays usable.
 */
export const SnapshotCopyStateSchema = deferred(() => z.enum(['waiting', 'copying', 'pending', 'completed', 'failed']));
export type SnapshotCopyState = z.infer<typeof SnapshotCopyStateSchema>;

export const SnapshotCopyRecordSchema = deferred(() => z.object({
  region: z.string().check(z.minLength(1)),
  state: SnapshotCopyStateSchema,
  snapshotId: z.optional(z.string().check(z.regex(/^snap-[0-9a-f]+$/))),
  message: z.optional(z.string()),
}));
export type SnapshotCopyRecord = z.infer<typeof SnapshotCopyRecordSchema>;

/** The copy a content records; undefined without the annotation, or with one that does not parse. */
export function snapshotCopyOf(content: { metadata?: { annotations?: Record<string, string> | null } }): SnapshotCopyRecord | undefined {
  const text = content.metadata?.annotations?.[SNAPSHOT_COPY_ANNOTATION];
  if (text === undefined) return undefined;
  try {
    const parsed = SnapshotCopyRecordSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** The annotation's value for `record` (stable key order, so an unchanged record is no write). */
export function snapshotCopyText(record: SnapshotCopyRecord): string {
  const { region, state, snapshotId, message } = record;
  return JSON.stringify({ region, state, ...(snapshotId !== undefined && { snapshotId }), ...(message !== undefined && { message }) });
}

/** Nothing left to do for the copy: none asked, or it completed or failed. */
export function isSnapshotCopySettled(content: { metadata?: { annotations?: Record<string, string> | null } }): boolean {
  const text = content.metadata?.annotations?.[SNAPSHOT_COPY_ANNOTATION];
  if (text === undefined) return true;
  const record = snapshotCopyOf(content);
  // An annotation that does not parse is the backend's to answer (it refuses it by name).
  return record !== undefined && (record.state === 'completed' || record.state === 'failed');
}
