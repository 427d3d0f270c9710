/** What `cluster audit` and `cluster remove --delete-volumes` print: a table for a person, JSON for a script. */
import type { AuditResult } from './run.js';
import type { LeftBehind, SnapshotLeftBehind } from './teardown.js';

export function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, n) => Math.max(h.length, ...rows.map((r) => (r[n] ?? '').length)));
  const line = (cells: string[]) => cells.map((c, n) => (n === cells.length - 1 ? c : c.padEnd(widths[n]!))).join('  ').trimEnd();
  return `${[header, ...rows].map(line).join('\n')}\n`;
}

const usd = (value: number | undefined) => (value === undefined ? '?' : `$${value.toFixed(2)}`);

/** A duration as a person reads it: 45s, 3m12s, 2h5m, 3d4h. */
export function age(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${s % 60 ? `${s % 60}s` : ''}`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h${Math.floor((s % 3600) / 60) ? `${Math.floor((s % 3600) / 60)}m` : ''}`;
  return `${Math.floor(s / 86_400)}d${Math.floor((s % 86_400) / 3600) ? `${Math.floor((s % 86_400) / 3600)}h` : ''}`;
}

/** The report the audit judged by: of when (dated by when the backend received it), and how old. */
export function reportLine(result: AuditResult): string {
  if (result.reportAt === undefined || result.reportAgeSeconds === undefined) return 'report: none from the cluster yet';
  return `report: of ${result.reportAt} (as the backend received it), ${age(result.reportAgeSeconds)} old`;
}

/** What an orphan's (or orphaned snapshot's) verdict says in the table. */
function verdict(o: { deletable: boolean; why: string; retained?: true; mark?: { at: string; due: boolean } }): string {
  if (!o.deletable) return `${o.retained ? 'kept (retained)' : 'kept'}: ${o.why}`;
  if (o.mark?.due) return `deletable (marked ${o.mark.at}, a report received since names nothing of it): ${o.why}`;
  return `marked ${o.mark?.at ?? 'now'}, deletable once a report received after that still names nothing of it: ${o.why}`;
}

export function auditTable(result: AuditResult): string {
  const rows: string[][] = [
    ...result.orphans.map((o) => [
      'orphan',
      o.volumeId,
      `${o.sizeGiB} GiB ${o.type}`,
      usd(o.monthlyUsd),
      [o.name, o.claim?.namespace && o.claim.name ? `${o.claim.namespace}/${o.claim.name}` : undefined].filter(Boolean).join(' '),
      verdict(o),
    ]),
    ...result.unknown.map((u) => ['unknown', u.volumeId, `${u.sizeGiB} GiB ${u.type}`, usd(u.monthlyUsd), u.name ?? '', `kept: ${u.why}`]),
    ...result.lost.map((l) => ['lost', l.volumeId, '', '', `${l.pv}${l.claim ? ` ${l.claim.namespace}/${l.claim.name}` : ''}`, 'the disk is gone; Warning VolumeLost on the PV and claim']),
    ...result.drift.map((d) => [
      'drift',
      d.volumeId,
      `${d.sizeGiB} GiB ${d.type}`,
      usd(d.monthlyUsd),
      d.instanceId,
      d.direction === 'attached-without-volumeattachment' ? 'attached in EC2, no VolumeAttachment names it' : `VolumeAttachment ${d.volumeAttachment} says attached, EC2 does not`,
    ]),
    ...result.untagged.map((u) => ['untagged', u.volumeId, `${u.sizeGiB} GiB ${u.type}`, usd(u.monthlyUsd), u.name ?? '', `kept: ${u.why}`]),
    ...result.orphanedSnapshots.map((o) => [
      'orphaned snapshot',
      o.snapshotId,
      `${o.sizeGiB} GiB snapshot`,
      usd(o.monthlyUsd),
      [o.name, `of ${o.volumeId}`].filter(Boolean).join(' '),
      verdict(o),
    ]),
    ...result.unknownSnapshots.map((u) => ['unknown snapshot', u.snapshotId, `${u.sizeGiB} GiB snapshot`, '', [u.name, `of ${u.volumeId}`].filter(Boolean).join(' '), `kept: ${u.why}`]),
    ...result.lostSnapshots.map((l) => ['lost snapshot', l.snapshotId, '', '', `${l.content} (${l.deletionPolicy})`, 'the snapshot is gone; Warning SnapshotLost on the content']),
    ...result.untaggedSnapshots.map((u) => ['untagged snapshot', u.snapshotId, `${u.sizeGiB} GiB snapshot`, '', [u.name, `of ${u.volumeId}`].filter(Boolean).join(' '), `kept: ${u.why}`]),
    ...result.snapshotCopies.map((c) => ['snapshot copy', c.recorded.snapshotId ?? c.inEc2[0]?.snapshotId ?? '-', `in ${c.region}`, '', c.content, `${c.verdict}: ${c.why}`]),
  ];
  const body = rows.length === 0 ? 'no findings\n' : table(['FINDING', 'VOLUME', 'SIZE', 'PER MONTH', 'FOR', 'DETAIL'], rows);
  const all = [
    ...result.deletions.map((d) => [d.outcome, d.volumeId, d.outcome === 'deleted' ? '' : d.why]),
    ...result.snapshotDeletions.map((d) => [d.outcome, d.snapshotId, d.outcome === 'deleted' ? '' : d.why]),
  ];
  const deletions = all.length === 0 ? '' : `\n${table(['DELETION', 'RESOURCE', 'WHY'], all)}`;
  return `${reportLine(result)}\n${body}${deletions}`;
}

export function auditSummary(result: AuditResult): string {
  const t = result.totals;
  const deleted = result.deletions.filter((d) => d.outcome === 'deleted').length;
  const marked = result.deletions.filter((d) => d.outcome === 'marked').length;
  const deletedSnapshots = result.snapshotDeletions.filter((d) => d.outcome === 'deleted').length;
  const markedSnapshots = result.snapshotDeletions.filter((d) => d.outcome === 'marked').length;
  const s = result.snapshotTotals;
  const parts = [
    `${result.orphans.length} orphan(s) (${t.orphanedGiB} GiB, ${usd(t.orphanedMonthlyUsd)}/month at ${result.pricesAsOf} list prices${t.unpriced ? `, ${t.unpriced} unpriced` : ''})`,
    ...(result.unknown.length > 0 ? [`${result.unknown.length} unknown (newer than the report)`] : []),
    `${result.lost.length} lost`,
    `${result.drift.length} drift`,
    `${s.orphanedSnapshots} orphaned snapshot(s) (${s.orphanedSnapshotGiB} GiB, at most ${usd(s.orphanedSnapshotMonthlyUsd)}/month)`,
    `${result.lostSnapshots.length} lost snapshot(s)`,
    ...(result.snapshotCopies.length > 0 ? [`${result.snapshotCopies.length} cross-Region cop(ies), ${result.snapshotCopies.filter((c) => c.verdict !== 'ok').length} not ok`] : []),
    ...(result.untagged.length + result.untaggedSnapshots.length > 0
      ? [`${result.untagged.length} untagged disk(s) and ${result.untaggedSnapshots.length} untagged snapshot(s) left alone (see DETAIL)`]
      : []),
    ...(result.deletions.length > 0 ? [`${deleted} deleted`, `${marked} marked`] : []),
    ...(result.snapshotDeletions.length > 0 ? [`${deletedSnapshots} snapshot(s) deleted`, `${markedSnapshots} snapshot(s) marked`] : []),
  ];
  const notes = result.notes.map((n) => `note: ${n}\n`).join('');
  const report = result.reportAgeSeconds === undefined ? 'no report' : `report ${age(result.reportAgeSeconds)} old`;
  return `cluster "${result.clusterId}" (${result.region}): ${result.disks} disk(s), ${result.snapshots} snapshot(s), grace ${result.graceSeconds}s, ${report}: ${parts.join(', ')}.\n${notes}`;
}

export function leftBehindTable(entries: readonly LeftBehind[]): string {
  if (entries.length === 0) return 'no disks tagged for the cluster\n';
  return table(
    ['VOLUME', 'SIZE', 'PER MONTH', 'STATE', 'NAME', 'ACTION'],
    entries.map((e) => [e.volumeId, `${e.sizeGiB} GiB ${e.type}`, usd(e.monthlyUsd), e.state, e.name ?? '', e.action === 'delete' ? 'delete' : `keep: ${e.why}`]),
  );
}

export function snapshotsLeftBehindTable(entries: readonly SnapshotLeftBehind[]): string {
  if (entries.length === 0) return 'no snapshots tagged for the cluster\n';
  return table(
    ['SNAPSHOT', 'SIZE', 'PER MONTH', 'STATE', 'NAME', 'ACTION'],
    entries.map((e) => [e.snapshotId, `${e.sizeGiB} GiB of ${e.volumeId}`, usd(e.monthlyUsd), e.state, e.name ?? '', e.action === 'delete' ? 'delete' : `keep: ${e.why}`]),
  );
}
