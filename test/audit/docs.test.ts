/** docs/audit.md against the code: every finding and deletion outcome the table prints, and every audit option, is described there. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { auditTable, FRESH_REPORT_MS, REPORT_RESYNC_SECONDS, type AuditResult } from '../../lib/audit/index.js';
import { REFUSAL_RECORD_INTERVAL_MS, refusalOf } from '../../lib/reports/index.js';
import { commandUsage } from '../../lib/cli/usage.js';

const docs = readFileSync(new URL('../../docs/audit.md', import.meta.url), 'utf8');

/** A result with one finding of each kind and one deletion of each outcome. */
const everything: AuditResult = {
  clusterId: 'c1',
  region: 'us-east-1',
  at: '2026-06-01T12:00:00.000Z',
  graceSeconds: 3600,
  reportObservedAt: '2026-06-01T11:59:00.000Z',
  reportAt: '2026-06-01T11:59:00.000Z',
  reportAgeSeconds: 60,
  pricesAsOf: '2025-01',
  disks: 4,
  orphans: [{ volumeId: 'vol-1', sizeGiB: 1, type: 'gp3', zone: 'a', createdAt: '', deletable: true, why: 'w', mark: { at: '', due: true } }],
  unknown: [{ volumeId: 'vol-2', sizeGiB: 1, type: 'gp3', zone: 'a', createdAt: '', why: 'w' }],
  lost: [{ volumeId: 'vol-3', pv: 'pv' }],
  drift: [{ volumeId: 'vol-4', sizeGiB: 1, type: 'gp3', zone: 'a', direction: 'attached-without-volumeattachment', instanceId: 'i-1' }],
  untagged: [{ volumeId: 'vol-8', sizeGiB: 1, type: 'gp3', zone: 'a', ownership: 'needs-adopt', why: 'w' }],
  totals: { orphanedVolumes: 1, orphanedGiB: 1, orphanedMonthlyUsd: 0, unpriced: 0 },
  notes: [],
  snapshots: 3,
  orphanedSnapshots: [{ snapshotId: 'snap-1', volumeId: 'vol-1', sizeGiB: 1, startTime: '', deletable: false, why: 'w', retained: true }],
  unknownSnapshots: [{ snapshotId: 'snap-2', volumeId: 'vol-1', sizeGiB: 1, startTime: '', why: 'w' }],
  lostSnapshots: [{ snapshotId: 'snap-3', content: 'c', deletionPolicy: 'Delete' }],
  untaggedSnapshots: [{ snapshotId: 'snap-4', volumeId: 'vol-1', sizeGiB: 1, ownership: 'needs-adopt', why: 'w' }],
  snapshotTotals: { orphanedSnapshots: 1, orphanedSnapshotGiB: 1, orphanedSnapshotMonthlyUsd: 0 },
  snapshotCopies: [{ content: 'c', region: 'us-west-2', recorded: { state: 'completed', snapshotId: 'snap-5' }, inEc2: [], verdict: 'lost', why: 'w' }],
  deletions: [
    { volumeId: 'vol-1', outcome: 'deleted' },
    { volumeId: 'vol-5', outcome: 'marked', markedAt: '', why: 'w' },
    { volumeId: 'vol-6', outcome: 'kept', why: 'w' },
    { volumeId: 'vol-7', outcome: 'failed', why: 'w' },
  ],
  snapshotDeletions: [],
};

describe('docs/audit.md', () => {
  it('names every finding and every deletion outcome the table prints', () => {
    const [, ...lines] = auditTable(everything).trim().split('\n');
    const findings = lines.slice(1, 11).map((line) => line.split(/\s{2,}/)[0]);
    expect(findings).toEqual(['orphan', 'unknown', 'lost', 'drift', 'untagged', 'orphaned snapshot', 'unknown snapshot', 'lost snapshot', 'untagged snapshot', 'snapshot copy']);
    for (const verdict of ['ok', 'lost', 'duplicated', 'unrecorded', 'unreadable']) expect(docs, verdict).toContain(`\`${verdict}\``);
    const outcomes = lines.slice(13).map((line) => line.split(/\s{2,}/)[0]);
    expect(outcomes).toEqual(['deleted', 'marked', 'kept', 'failed']);
    for (const name of [...findings, ...outcomes]) expect(docs, name).toContain(`\`${name}\``);
  });

  it("describes every option of the audit the CLI's usage lists", () => {
    const options = [...commandUsage('audit').matchAll(/^ {2}(--[a-z-]+)(?= |$)/gm)].map((m) => m[1]!);
    const audit = ['--delete', '--delete-snapshots', '--volume', '--snapshot', '--grace', '--json'];
    for (const option of audit) expect(options, option).toContain(option);
    for (const option of audit) expect(docs, option).toContain(option);
  });

  it('states the freshness bound a deletion needs, and the resync period it is tied to, as the code has them', () => {
    expect(docs).toContain(`at most **${FRESH_REPORT_MS / 1000} s** before`);
    expect(docs).toContain(`two resync periods of the forwarder (\`resyncSeconds\`, default ${REPORT_RESYNC_SECONDS} s`);
  });

  it('states the refusal rule as the code has it: the interval, the routes, and the one refusal that does not count', () => {
    expect(docs).toContain(`report is dated more than **${REFUSAL_RECORD_INTERVAL_MS / 1000} s** after that refusal`);
    expect(docs).toContain(`at most one write per cluster a minute`);
    expect(REFUSAL_RECORD_INTERVAL_MS).toBe(60_000);
    expect(docs).toContain('request on the cluster\'s `reconcile` or `check` route counts');
    for (const route of ['reconcile', 'check']) expect(refusalOf(`/v1/clusters/c1/${route}`, 400, 'malformed_json', 1)).toBeDefined();
    expect(docs).toContain('**except `409 replayed`**');
    expect(refusalOf('/v1/clusters/c1/reconcile', 409, 'replayed', 1)).toBeUndefined();
    for (const status of [400, 401, 403, 404, 413, 422, 426, 500, 503]) expect(refusalOf('/v1/clusters/c1/reconcile', status, 'x', 1), String(status)).toBeDefined();
    expect(docs).toContain('`<cluster>.refused.json`');
  });
});
