/** The audit's two phases as pure functions (lib/audit/marks.ts). */
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { FRESH_REPORT_MS, isDue, markChanges, newMarkTime, refusedSinceWhy, REPORT_RESYNC_SECONDS, staleReportWhy } from '../../lib/audit/index.js';
import { parseConfig } from '../../lib/forwarder/config.js';
import { REFUSAL_RECORD_INTERVAL_MS, type StoredReport } from '../../lib/reports/index.js';

const NOW = Date.UTC(2026, 5, 1, 12);
const report = (observedAt: number, receivedAt = observedAt): StoredReport => ({
  clusterId: 'c1',
  digest: 'd'.repeat(64),
  observedAt,
  receivedAt,
  report: { volumes: [], attachments: [], claims: [] },
});
const isVolume = (id: string) => id.startsWith('vol-');

describe('marks', () => {
  it('the provably orphaned not marked yet -> marked now; marked ones keep their mark; marks of disks no longer provable -> dropped; snapshot marks untouched', () => {
    const marks = new Map([
      ['vol-000000000000000a1', NOW - 5_000],
      ['vol-000000000000000b2', NOW - 5_000],
      ['snap-00000000000000c3', NOW - 5_000],
    ]);
    const { mark, unmark } = markChanges(marks, ['vol-000000000000000a1', 'vol-000000000000000d4'], isVolume, report(NOW - 60_000), NOW);
    expect([...mark]).toEqual([['vol-000000000000000d4', NOW]]);
    expect(unmark).toEqual(['vol-000000000000000b2']);
  });

  it('no report -> nothing marked, every mark of the kind dropped', () => {
    const { mark, unmark } = markChanges(new Map([['vol-000000000000000a1', NOW]]), [], isVolume, undefined, NOW);
    expect(mark.size).toBe(0);
    expect(unmark).toEqual(['vol-000000000000000a1']);
  });

  it("a mark is never earlier than the report it was judged by (an auditor's clock behind the backend's)", () => {
    expect(newMarkTime(report(NOW + 30_000), NOW)).toBe(NOW + 30_000);
    expect(newMarkTime(report(NOW - 30_000), NOW)).toBe(NOW);
  });

  it('due only by a report dated after the mark: received after it and, by the forwarder, read after it', () => {
    expect(isDue(NOW, report(NOW + 1))).toBe(true);
    expect(isDue(NOW, report(NOW))).toBe(false);
    // Read after the mark by a fast clock, received before it: not due.
    expect(isDue(NOW, report(NOW + 200_000, NOW - 1))).toBe(false);
    // Received after it, read before it by the forwarder's clock (a slow one): not due yet.
    expect(isDue(NOW, report(NOW - 1, NOW + 10_000))).toBe(false);
  });

  it("fresh for deletion: received within two resyncs, as the backend's clock dates it", () => {
    expect(staleReportWhy(report(NOW - FRESH_REPORT_MS), NOW)).toBeUndefined();
    expect(staleReportWhy(report(NOW - FRESH_REPORT_MS - 1), NOW)).toMatch(/older than 600 s \(two resyncs of 300 s\)/);
    // The forwarder's time cannot make it fresher than its receipt.
    expect(staleReportWhy(report(NOW, NOW - FRESH_REPORT_MS - 1), NOW)).toMatch(/older than/);
    // A report kept before receipts were recorded speaks for no time: never fresh.
    expect(staleReportWhy(report(NOW, 0), NOW)).toMatch(/older than/);
  });

  it("the bound is tied to the forwarder's resync: its default, and the chart's", () => {
    expect(FRESH_REPORT_MS).toBe(2 * REPORT_RESYNC_SECONDS * 1000);
    const defaults = parseConfig({ clusterId: 'c1', apiUrl: 'https://backend.example', secret: `whsec_${Buffer.alloc(32, 1).toString('base64')}` });
    expect(defaults.resyncSeconds).toBe(REPORT_RESYNC_SECONDS);
    const values = readFileSync(new URL('../../charts/volhook-forwarder/values.yaml', import.meta.url), 'utf8');
    expect(values).toMatch(new RegExp(`^resyncSeconds: ${REPORT_RESYNC_SECONDS}$`, 'm'));
  });

  it('a request of the cluster refused since the report (or within the recording interval before it) -> no deletion on it, the reason naming what and when; a report over the interval after the refusal -> none', () => {
    const refusal = { at: NOW, status: 401, code: 'bad_signature' };
    const why = refusedSinceWhy(report(NOW - 60_000), refusal);
    expect(why).toContain('a request of the cluster was refused (401 bad_signature) at 2026-06-01T12:00:00.000Z');
    expect(why).toContain('(of 2026-06-01T11:59:00.000Z)');
    // The stores record at most one refusal a minute: one up to that long after the held one may be unrecorded.
    expect(refusedSinceWhy(report(NOW + REFUSAL_RECORD_INTERVAL_MS), refusal)).toMatch(/was refused/);
    // Dated as the audit dates it: a forwarder's clock behind its receipt keeps it older.
    expect(refusedSinceWhy(report(NOW + REFUSAL_RECORD_INTERVAL_MS, NOW + 2 * REFUSAL_RECORD_INTERVAL_MS), refusal)).toMatch(/was refused/);
    // The control: a report dated after the refusal and its interval, or no refusal at all -> no reason.
    expect(refusedSinceWhy(report(NOW + REFUSAL_RECORD_INTERVAL_MS + 1), refusal)).toBeUndefined();
    expect(refusedSinceWhy(report(NOW), undefined)).toBeUndefined();
  });
});
