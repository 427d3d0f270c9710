import { describe, expect, it } from 'vitest';
import {
  assembleReport,
  canonicalReport,
  ItemSchema,
  MAX_REPORT_PART_BYTES,
  reportDigest,
  splitReport,
  type VolumeReport,
} from '../../lib/contract/index.js';
import { bigReport, incompressible } from './big-report.js';

const bytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value));

describe('a volume report in parts', () => {
  it('20,000 PVs, claims and attachments -> parts each within MAX_REPORT_PART_BYTES that assemble to exactly the canonical report', () => {
    const canonical = canonicalReport(bigReport(20_000));
    expect(bytes(canonical)).toBeGreaterThan(4 * 1024 * 1024);
    const parts = splitReport(canonical);
    expect(parts.length).toBeGreaterThan(10);
    for (const part of parts) expect(bytes(part)).toBeLessThanOrEqual(MAX_REPORT_PART_BYTES);
    // Filled, not cut at a fixed count: every part but the last holds more than half of what it may.
    for (const part of parts.slice(0, -1)) expect(bytes(part)).toBeGreaterThan(MAX_REPORT_PART_BYTES / 2);
    const assembled = assembleReport(parts);
    expect(assembled).toEqual(canonical);
    expect(reportDigest(assembled)).toBe(reportDigest(canonical));
  });

  it('a small report -> one part, the report itself; without snapshots -> no part has any (the digest older forwarders computed)', () => {
    const small = canonicalReport(bigReport(10, false));
    expect(splitReport(small)).toEqual([small]);
    const parts = splitReport(canonicalReport(bigReport(3000, false)), 64 * 1024);
    expect(parts.length).toBeGreaterThan(1);
    for (const part of parts) expect(part).not.toHaveProperty('snapshots');
    expect(reportDigest(assembleReport(parts))).toBe(reportDigest(bigReport(3000, false)));
  });

  it('an empty report -> one empty part', () => {
    const empty: VolumeReport = { volumes: [], attachments: [], claims: [], snapshots: [] };
    expect(splitReport(empty)).toEqual([empty]);
    expect(assembleReport(splitReport(empty))).toEqual(empty);
  });

  it('one part missing or of another report -> another digest (what the backend checks); the digest is of the content, whatever the order', () => {
    const canonical = canonicalReport(bigReport(4000));
    const parts = splitReport(canonical, 100 * 1024);
    expect(reportDigest(assembleReport([...parts].reverse()))).toBe(reportDigest(canonical));
    expect(reportDigest(assembleReport(parts.slice(1)))).not.toBe(reportDigest(canonical));
    const tampered = structuredClone(parts);
    (tampered[0] as VolumeReport).volumes[0]!.volumeId = 'vol-0ffffffffffffffff';
    expect(reportDigest(assembleReport(tampered))).not.toBe(reportDigest(canonical));
  });

  it('one entry larger than a part alone -> a part of its own, which the item schema refuses naming it', () => {
    const report = canonicalReport(bigReport(50, false));
    const huge = `pv-${incompressible(2 * MAX_REPORT_PART_BYTES)}`;
    report.volumes.push({ pv: huge, volumeId: 'vol-00000000000000fff', reclaimPolicy: 'Retain' });
    const parts = splitReport(canonicalReport(report));
    const alone = parts.findIndex((p) => p.volumes.some((v) => v.pv === huge));
    expect(parts[alone]?.volumes).toHaveLength(1);
    const checked = ItemSchema.safeParse({ kind: 'VolumeReport', digest: reportDigest(report), observedAt: 1, report: parts[alone], part: { index: alone, count: parts.length } });
    expect(checked.success).toBe(false);
    const message = checked.error?.issues.map((i) => i.message).join('\n') ?? '';
    expect(message).toContain(`the volume report cannot be sent: its PersistentVolume "${huge.slice(0, 20)}`);
    expect(message).toContain(`(${huge.length} characters)`);
    expect(message).toContain(`more than the ${MAX_REPORT_PART_BYTES} one part may hold`);
    // The other parts go through.
    for (const [index, part] of parts.entries()) {
      if (index !== alone) expect(ItemSchema.safeParse({ kind: 'VolumeReport', digest: reportDigest(report), observedAt: 1, report: part, part: { index, count: parts.length } }).success).toBe(true);
    }
  });

  it('a part with an index past its count, or without its report -> refused', () => {
    const digest = 'a'.repeat(64);
    const report: VolumeReport = { volumes: [], attachments: [], claims: [] };
    const past = ItemSchema.safeParse({ kind: 'VolumeReport', digest, observedAt: 1, report, part: { index: 2, count: 2 } });
    expect(past.error?.issues[0]?.message).toBe('part 2 of a volume report of 2 parts does not exist (parts are numbered from 0)');
    const bare = ItemSchema.safeParse({ kind: 'VolumeReport', digest, observedAt: 1, part: { index: 0, count: 2 } });
    expect(bare.error?.issues[0]?.message).toBe('part 0 of a volume report carries no report');
  });
});
