/**
 * What `cluster adopt` prints: a table for a person, or JSON for a script (`--json`), both on
 * stdout; the one-line summary goes to stderr with the CLI's other messages.
 */
import type { AdoptionStatus, DiskAdoption, SnapshotAdoption } from './adopt-plan.js';

export interface AdoptionReport {
  clusterId: string;
  region: string;
  /** false: a dry run, nothing was tagged. */
  applied: boolean;
  /** PVs of other drivers and plugins, left out. */
  otherPvs: number;
  disks: DiskAdoption[];
  /** The cluster's snapshots that need adopting (those adopted already are no row). */
  snapshots: SnapshotAdoption[];
}

const ACTION: Record<AdoptionStatus, string> = {
  tag: 'would tag',
  tagged: 'tagged',
  failed: 'FAILED',
  adopted: 'already adopted',
  'other-cluster': 'LEFT ALONE: another cluster',
  conflict: 'LEFT ALONE: conflicting tag',
  'not-found': 'no such disk',
  'invalid-id': 'no EBS volume ID',
};

/** One row per disk: VOLUME, PV, ACTION, TAGS / DETAIL, columns padded to fit; then one per snapshot, if any. */
export function adoptionTable(report: AdoptionReport): string {
  const detail = (d: { tags: Record<string, string>; detail?: string }) => [...Object.entries(d.tags).map(([k, v]) => `${k}=${v}`), ...(d.detail ? [d.detail] : [])].join(' ');
  const disks =
    report.disks.length === 0
      ? 'no PersistentVolumes of ebs.csi.aws.com or awsElasticBlockStore\n'
      : table(['VOLUME', 'PV', 'ACTION', 'TAGS / DETAIL'], report.disks.map((d) => [d.volumeId, d.pvs.join(',') || '(none)', ACTION[d.status], detail(d)]));
  const snapshots =
    report.snapshots.length === 0
      ? ''
      : `\n${table(['SNAPSHOT', 'OF VOLUME', 'ACTION', 'TAGS / DETAIL'], report.snapshots.map((s) => [s.snapshotId, s.volumeId, ACTION[s.status], detail(s)]))}`;
  return `${disks}${snapshots}`;
}

function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, n) => Math.max(h.length, ...rows.map((r) => r[n]!.length)));
  const line = (cells: string[]) => cells.map((c, n) => (n === cells.length - 1 ? c : c.padEnd(widths[n]!))).join('  ').trimEnd();
  return `${[header, ...rows].map(line).join('\n')}\n`;
}

/** Counts by status, e.g. `{ tag: 3, adopted: 1 }`. */
export function countByStatus(disks: readonly (DiskAdoption | SnapshotAdoption)[]): Partial<Record<AdoptionStatus, number>> {
  const counts: Partial<Record<AdoptionStatus, number>> = {};
  for (const d of disks) counts[d.status] = (counts[d.status] ?? 0) + 1;
  return counts;
}

export function adoptionJson(report: AdoptionReport): string {
  return `${JSON.stringify({ ...report, counts: countByStatus(report.disks), snapshotCounts: countByStatus(report.snapshots) }, null, 2)}\n`;
}

/** The line for stderr: what happened, and what to do next. */
export function adoptionSummary(report: AdoptionReport): string {
  const c = countByStatus(report.disks);
  const n = (status: AdoptionStatus) => c[status] ?? 0;
  const parts = [
    report.applied ? `${n('tagged')} tagged` : `${n('tag')} to tag`,
    ...(n('failed') ? [`${n('failed')} failed`] : []),
    `${n('adopted')} already adopted`,
    ...(n('other-cluster') + n('conflict') ? [`${n('other-cluster') + n('conflict')} left alone`] : []),
    ...(n('not-found') + n('invalid-id') ? [`${n('not-found') + n('invalid-id')} without a disk`] : []),
  ];
  const s = countByStatus(report.snapshots);
  const m = (status: AdoptionStatus) => s[status] ?? 0;
  const snapshotParts = [
    report.applied ? `${m('tagged')} tagged` : `${m('tag')} to tag`,
    ...(m('failed') ? [`${m('failed')} failed`] : []),
    ...(m('other-cluster') + m('conflict') ? [`${m('other-cluster') + m('conflict')} left alone`] : []),
  ];
  const head = `cluster "${report.clusterId}" (${report.region}): ${report.disks.length} disk(s) of its PersistentVolumes or tagged for it: ${parts.join(', ')}`;
  const ofSnapshots = report.snapshots.length ? `; ${report.snapshots.length} snapshot(s) not adopted: ${snapshotParts.join(', ')}` : '';
  const ignored = report.otherPvs ? `; ${report.otherPvs} PV(s) of other drivers ignored` : '';
  const next = report.applied ? '' : n('tag') + m('tag') ? `\ndry run: nothing was tagged; run again with --apply to tag.` : '';
  return `${head}${ofSnapshots}${ignored}.${next}\n`;
}
