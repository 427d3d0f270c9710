/**
 * What `cluster adopt` prints: a table for a person, or JSON for a script (`--json`), both on
 * stdout; the one-line summary goes to stderr with the CLI's other messages.
 */
import type { AdoptionStatus, DiskAdoption } from './adopt-plan.js';

export interface AdoptionReport {
  clusterId: string;
  region: string;
  /** false: a dry run, nothing was tagged. */
  applied: boolean;
  /** PVs of other drivers and plugins, left out. */
  otherPvs: number;
  disks: DiskAdoption[];
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

/** One row per disk: VOLUME, PV, ACTION, TAGS / DETAIL, columns padded to fit. */
export function adoptionTable(report: AdoptionReport): string {
  const header = ['VOLUME', 'PV', 'ACTION', 'TAGS / DETAIL'];
  const rows = report.disks.map((d) => {
    const tags = Object.entries(d.tags).map(([k, v]) => `${k}=${v}`);
    return [d.volumeId, d.pvs.join(','), ACTION[d.status], [...tags, ...(d.detail ? [d.detail] : [])].join(' ')];
  });
  if (rows.length === 0) return 'no PersistentVolumes of ebs.csi.aws.com or awsElasticBlockStore\n';
  const widths = header.map((h, n) => Math.max(h.length, ...rows.map((r) => r[n]!.length)));
  const line = (cells: string[]) => cells.map((c, n) => (n === cells.length - 1 ? c : c.padEnd(widths[n]!))).join('  ').trimEnd();
  return `${[header, ...rows].map(line).join('\n')}\n`;
}

/** Counts by status, e.g. `{ tag: 3, adopted: 1 }`. */
export function countByStatus(disks: readonly DiskAdoption[]): Partial<Record<AdoptionStatus, number>> {
  const counts: Partial<Record<AdoptionStatus, number>> = {};
  for (const d of disks) counts[d.status] = (counts[d.status] ?? 0) + 1;
  return counts;
}

export function adoptionJson(report: AdoptionReport): string {
  return `${JSON.stringify({ ...report, counts: countByStatus(report.disks) }, null, 2)}\n`;
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
  const head = `cluster "${report.clusterId}" (${report.region}): ${report.disks.length} disk(s) of its PersistentVolumes: ${parts.join(', ')}`;
  const ignored = report.otherPvs ? `; ${report.otherPvs} PV(s) of other drivers ignored` : '';
  const next = report.applied ? '' : n('tag') ? `\ndry run: nothing was tagged; run again with --apply to tag.` : '';
  return `${head}${ignored}.${next}\n`;
}
