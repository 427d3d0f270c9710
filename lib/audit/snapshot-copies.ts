/**
 * The audit's view of cross-Region snapshot copies (a VolumeSnapshotClass's copyToRegion): for
 * each content of the cluster's latest report whose annotation records a copy, what EC2 holds of
 * it in that Region, found as the backend finds it (the cluster's snapshots tagged with the
 * content's name there). Pure: the report's contents and the look-ups in, findings out.
 *
 * - `ok`: the recorded copy is there, and nothing else of that name.
 * - `lost`: the content records a copy EC2 no longer has in that Region.
 * - `duplicated`: more than one copy of that name: the content's is the recorded one (or the
 *   oldest), the others are left over.
 * - `unrecorded`: a copy is there that the content has not recorded yet (a copy under way, or
 *   one whose answer was lost: the next reconcile records it).
 * - `unreadable`: EC2 refused the look-up in that Region (its message).
 *
 * Copies are judged only while their content is reported: the Region of a copy whose content is
 * gone is nowhere recorded, so the audit does not look for such copies (see docs/audit.md).
 */
import type { ReportedSnapshotContent } from '../contract/index.js';
import type { Snapshot } from '../ec2/types.js';

export interface SnapshotCopyFinding {
  content: string;
  region: string;
  /** What the content's annotation records. */
  recorded: { state: string; snapshotId?: string };
  /** The cluster's copies of that name in the Region, as EC2 reports them. */
  inEc2: { snapshotId: string; state: string }[];
  verdict: 'ok' | 'lost' | 'duplicated' | 'unrecorded' | 'unreadable';
  why: string;
}

/** The contents whose copy may exist: CopySnapshot may have been sent for them. */
export function copiesToLookUp(contents: readonly ReportedSnapshotContent[] | undefined): { content: string; region: string }[] {
  return (contents ?? []).flatMap((c) => (c.copy && c.copy.state !== 'waiting' && !(c.copy.state === 'failed' && !c.copy.snapshotId) ? [{ content: c.content, region: c.copy.region }] : []));
}

export function snapshotCopyFindings(contents: readonly ReportedSnapshotContent[] | undefined, found: ReadonlyMap<string, readonly Snapshot[] | { error: string }>): SnapshotCopyFinding[] {
  return copiesToLookUp(contents).map(({ content, region }) => {
    const copy = (contents ?? []).find((c) => c.content === content)?.copy;
    const recorded = { state: copy?.state ?? '?', ...(copy?.snapshotId && { snapshotId: copy.snapshotId }) };
    const about = { content, region, recorded };
    const there = found.get(content) ?? [];
    if ('error' in there) return { ...about, inEc2: [], verdict: 'unreadable' as const, why: `the copies in ${region} could not be listed: ${there.error}` };
    const inEc2 = there.map((s) => ({ snapshotId: s.snapshotId, state: s.state }));
    if (recorded.snapshotId && !inEc2.some((s) => s.snapshotId === recorded.snapshotId)) {
      return { ...about, inEc2, verdict: 'lost' as const, why: `the content records copy ${recorded.snapshotId}, which ${region} no longer has` };
    }
    if (inEc2.length > 1) {
      const kept = recorded.snapshotId ?? inEc2[0]?.snapshotId;
      return { ...about, inEc2, verdict: 'duplicated' as const, why: `${inEc2.length} copies named ${content} in ${region}; the content's is ${kept}` };
    }
    if (!recorded.snapshotId && inEc2.length === 1) return { ...about, inEc2, verdict: 'unrecorded' as const, why: `copy ${inEc2[0]?.snapshotId} is in ${region}; the content records it on its next reconcile` };
    return { ...about, inEc2, verdict: 'ok' as const, why: inEc2.length === 0 ? `no copy in ${region} yet` : `copy ${recorded.snapshotId} in ${region} is ${inEc2[0]?.state}` };
  });
}
