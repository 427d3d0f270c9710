/**
 * `npm run bench -- --only report` (bench/lib/report-sizes.ts): the flags, and a smaller
 * cluster's report sent both ways over HTTP to the backend app, which holds it either way.
 */
import { describe, expect, it } from 'vitest';
import { parseBenchArgs, UsageError } from '../../bench/lib/args.js';
import { clusterReport, measureReport, reportLine } from '../../bench/lib/report-sizes.js';
import { MAX_REQUEST_BYTES } from '../../lib/contract/index.js';

describe('bench --only report', () => {
  it('--only report --pvs N -> that scenario alone with N PVs; the default runs a,b,c without it; a bad --pvs is refused', () => {
    const args = parseBenchArgs(['--only', 'report', '--pvs', '20000']);
    expect(args).toMatchObject({ only: ['report'], pvs: 20_000 });
    expect(args !== 'help' && args.command).toContain('--only report --seed 1 --pvs 20000');
    expect(parseBenchArgs([])).toMatchObject({ only: ['a', 'b', 'c'] });
    expect(() => parseBenchArgs(['--only', 'report', '--pvs', '0'])).toThrow(UsageError);
    expect(() => parseBenchArgs(['--only', 'reports'])).toThrow(/a, b, c, d, e, report/);
  });

  it('a report of 4,000 PVs, larger than a request -> held by the backend plain and gzip\'d; gzip\'d in fewer requests and bytes; the summary lines', async () => {
    const pvs = 4_000;
    const report = clusterReport(pvs);
    expect(report.volumes).toHaveLength(pvs);
    expect(report.attachments).toHaveLength(pvs);
    const plain = await measureReport(report, pvs, 'plain');
    const gzip = await measureReport(report, pvs, 'gzip');
    expect(plain.reportBytes).toBeGreaterThan(MAX_REQUEST_BYTES);
    expect(plain.requests).toBeGreaterThan(1);
    expect(plain.gzipped).toBe(0);
    expect(plain.bytes).toBeGreaterThan(plain.reportBytes);
    expect(gzip.gzipped).toBe(gzip.requests);
    expect(gzip.requests).toBeLessThan(plain.requests);
    expect(gzip.bytes).toBeLessThan(plain.bytes / 2);
    expect(reportLine(plain)).toMatch(new RegExp(`^report ${pvs} PVs: requests ${plain.requests}, bytes ${plain.bytes} \\(plain\\)$`));
    expect(reportLine(gzip)).toMatch(/^report 4000 PVs: requests \d+, bytes \d+ \(gzip\)$/);
  }, 120_000);
});
