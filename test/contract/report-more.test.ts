/**
 * A VolumeReport item carrying more than one part (`more`, for bodies that go gzip'd): what the
 * contract takes and what it refuses, and parts measured by what they compress to.
 */
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import {
  canonicalReport,
  ItemSchema,
  MAX_GZIPPED_PART_BYTES,
  MAX_GZIPPED_PART_JSON_BYTES,
  MAX_PARTS_PER_ITEM,
  MAX_REPORT_PART_BYTES,
  reportDigest,
  reportItemProblem,
  splitReport,
  VolumeReportItemSchema,
  type VolumeReport,
} from '../../lib/contract/index.js';
import { bigReport, incompressible } from './big-report.js';

const jsonBytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value));
const gzipBytes = (value: unknown) => gzipSync(JSON.stringify(value)).length;

const whole = canonicalReport(bigReport(300));
const parts = splitReport(whole, 16 * 1024);
const digest = reportDigest(whole);
const count = parts.length;
const partOf = (index: number) => parts[index] as VolumeReport;
const more = (...indices: number[]) => indices.map((index) => ({ index, report: partOf(index) }));
/** An item of the report's parts `first` and `rest` (in `more`). */
const item = (first: number, ...rest: number[]) => ({
  kind: 'VolumeReport',
  digest,
  observedAt: 1,
  report: partOf(first),
  part: { index: first, count },
  ...(rest.length > 0 && { more: more(...rest) }),
});

/** The messages of the schema's refusal, or undefined when it takes the item. */
function refusal(value: unknown): string[] | undefined {
  const parsed = ItemSchema.safeParse(value);
  return parsed.success ? undefined : parsed.error.issues.map((i) => i.message);
}

describe('more parts of a volume report in one item', () => {
  it('the setting: a report of more parts than one item carries', () => {
    expect(MAX_PARTS_PER_ITEM).toBeGreaterThan(1);
    expect(count).toBeGreaterThan(2 * MAX_PARTS_PER_ITEM);
  });

  it('a part and up to MAX_PARTS_PER_ITEM - 1 more, in any order of indices -> taken, every part as sent', () => {
    for (const indices of [[0, 1], [0, 1, 2], [count - 1, 0, 4], [5, 3]]) {
      const [first, ...rest] = indices as [number, ...number[]];
      const value = item(first, ...rest);
      expect(refusal(value)).toBeUndefined();
      const parsed = VolumeReportItemSchema.parse(value);
      expect(parsed.part).toEqual({ index: first, count });
      expect(parsed.more?.map((m) => m.index)).toEqual(rest);
      expect(parsed.more?.map((m) => m.report)).toEqual(rest.map(partOf));
    }
  });

  it('more than MAX_PARTS_PER_ITEM parts in one item -> refused; control: MAX_PARTS_PER_ITEM of the same parts -> taken', () => {
    const tooMany = item(0, ...Array.from({ length: MAX_PARTS_PER_ITEM }, (_, i) => i + 1));
    expect(tooMany.more).toHaveLength(MAX_PARTS_PER_ITEM);
    const parsed = ItemSchema.safeParse(tooMany);
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]).toMatchObject({ code: 'too_big', path: ['more'] });
    expect(refusal(item(0, ...Array.from({ length: MAX_PARTS_PER_ITEM - 1 }, (_, i) => i + 1)))).toBeUndefined();
  });

  it('`more` empty -> refused (absent, not empty, when there are none); control: absent -> taken', () => {
    const parsed = ItemSchema.safeParse({ ...item(0), more: [] });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]).toMatchObject({ code: 'too_small', path: ['more'] });
    expect(refusal(item(0))).toBeUndefined();
  });

  it('`more` without `part` (beside the whole report, or beside the digest alone) -> refused: which report they belong to is not said', () => {
    const message = 'more parts of a volume report without `part`: which report they belong to is not said';
    expect(refusal({ kind: 'VolumeReport', digest, observedAt: 1, report: partOf(0), more: more(1) })).toEqual([message]);
    expect(refusal({ kind: 'VolumeReport', digest, observedAt: 1, more: more(1) })).toEqual([message]);
    expect(reportItemProblem({ report: partOf(0), more: more(1) })).toBe(message);
    // Control: without `more`, both are what a forwarder sends (the whole report; the digest alone).
    expect(refusal({ kind: 'VolumeReport', digest, observedAt: 1, report: whole })).toBeUndefined();
    expect(refusal({ kind: 'VolumeReport', digest, observedAt: 1 })).toBeUndefined();
  });

  it('`more` with a `part` but no `report` -> refused as a part that carries no report', () => {
    expect(refusal({ kind: 'VolumeReport', digest, observedAt: 1, part: { index: 0, count }, more: more(1) })).toEqual(['part 0 of a volume report carries no report']);
  });

  it('a part sent twice in one item (in `more` twice, or as `part` and in `more`) -> refused naming the indices; control: distinct indices -> taken', () => {
    expect(refusal(item(2, 2))).toEqual(['parts 2, 2 of a volume report: a part is sent twice in one item']);
    expect(refusal(item(0, 3, 3))).toEqual(['parts 0, 3, 3 of a volume report: a part is sent twice in one item']);
    expect(reportItemProblem({ report: partOf(1), part: { index: 1, count }, more: more(1) })).toContain('a part is sent twice');
    expect(refusal(item(0, 3, 2))).toBeUndefined();
  });

  it('an index in `more` past the count -> refused naming it; negative -> refused; control: the last index -> taken', () => {
    const past = { ...item(0), more: [{ index: count, report: partOf(1) }] };
    expect(refusal(past)).toEqual([`part ${count} of a volume report of ${count} parts does not exist (parts are numbered from 0)`]);
    const negative = ItemSchema.safeParse({ ...item(0), more: [{ index: -1, report: partOf(1) }] });
    expect(negative.success).toBe(false);
    expect(negative.error?.issues[0]?.path).toEqual(['more', 0, 'index']);
    expect(refusal({ ...item(0), more: [{ index: count - 1, report: partOf(count - 1) }] })).toBeUndefined();
  });

  it('an entry of `more` without its report, or with one that is not a report -> refused at that entry', () => {
    const bare = ItemSchema.safeParse({ ...item(0), more: [{ index: 1 }] });
    expect(bare.success).toBe(false);
    expect(bare.error?.issues[0]?.path).toEqual(['more', 0, 'report']);
    const malformed = ItemSchema.safeParse({ ...item(0), more: [{ index: 1, report: { volumes: 'all of them' } }] });
    expect(malformed.success).toBe(false);
    expect(malformed.error?.issues[0]?.path.slice(0, 3)).toEqual(['more', 0, 'report']);
  });

  it('a part in `more` too large -> refused naming that part\'s index, though `report` itself is fine', () => {
    // Many entries, each small, together too large as JSON and (incompressible) as gzip.
    const dense = incompressible(30 * 20 * 1024);
    const heavy: VolumeReport = {
      volumes: Array.from({ length: 30 }, (_, i) => ({ pv: `pv-${i}`, volumeId: `vol-${i}`, reclaimPolicy: 'Delete', phase: dense.slice(i * 20 * 1024, (i + 1) * 20 * 1024) })),
      attachments: [],
      claims: [],
      snapshots: [],
    };
    expect(jsonBytes(heavy)).toBeGreaterThan(MAX_REPORT_PART_BYTES);
    expect(gzipBytes(heavy)).toBeGreaterThan(MAX_GZIPPED_PART_BYTES);
    const value = { ...item(0), more: [{ index: 1, report: partOf(1) }, { index: 2, report: heavy }] };
    const messages = refusal(value);
    expect(messages).toHaveLength(1);
    expect(messages?.[0]).toMatch(new RegExp(`^part 2 of ${count} of the volume report is ${jsonBytes(heavy)} bytes of JSON, more than the ${MAX_REPORT_PART_BYTES} one part may hold`));
    // Control: the same item with that part's own content -> taken.
    expect(refusal({ ...item(0), more: [{ index: 1, report: partOf(1) }, { index: 2, report: partOf(2) }] })).toBeUndefined();
  });
});

describe('a part measured by what it compresses to', () => {
  /** A report of one PV whose phase is `phase`, as a part of its own. */
  const onePv = (phase: string): VolumeReport => ({ volumes: [{ pv: 'pv-large', volumeId: 'vol-0123456789abcdef0', reclaimPolicy: 'Retain', phase }], attachments: [], claims: [], snapshots: [] });
  const asPart = (report: VolumeReport) => ({ kind: 'VolumeReport', digest, observedAt: 1, report: partOf(0), part: { index: 0, count }, more: [{ index: 1, report }] });

  it('an entry larger than MAX_REPORT_PART_BYTES as JSON that compresses under MAX_GZIPPED_PART_BYTES -> taken; an incompressible one of the same JSON size -> refused naming it', () => {
    const length = 2 * MAX_REPORT_PART_BYTES;
    const compressible = onePv('P'.repeat(length));
    const dense = onePv(incompressible(length));
    expect(jsonBytes(compressible)).toBe(jsonBytes(dense));
    expect(jsonBytes(compressible)).toBeGreaterThan(MAX_REPORT_PART_BYTES);
    expect(gzipBytes(compressible)).toBeLessThan(MAX_GZIPPED_PART_BYTES);
    expect(gzipBytes(dense)).toBeGreaterThan(MAX_GZIPPED_PART_BYTES);

    expect(refusal(asPart(compressible))).toBeUndefined();
    expect(reportItemProblem({ report: compressible, part: { index: 3, count } })).toBeUndefined();

    const messages = refusal(asPart(dense));
    expect(messages).toHaveLength(1);
    expect(messages?.[0]).toContain(`the volume report cannot be sent: its PersistentVolume "pv-large" alone is ${jsonBytes(dense.volumes[0])} bytes of JSON`);
    expect(messages?.[0]).toContain(`more than the ${MAX_REPORT_PART_BYTES} one part may hold (or, gzip'd, compressing to ${MAX_GZIPPED_PART_BYTES})`);
    expect(reportItemProblem({ report: dense, part: { index: 3, count } })).toBe(messages?.[0]);
  });

  it('a part compressing to almost nothing but over MAX_GZIPPED_PART_JSON_BYTES of JSON -> refused; control: just under it -> taken', () => {
    const frame = jsonBytes(onePv(''));
    const over = onePv('P'.repeat(MAX_GZIPPED_PART_JSON_BYTES - frame + 1));
    const under = onePv('P'.repeat(MAX_GZIPPED_PART_JSON_BYTES - frame));
    expect(jsonBytes(over)).toBe(MAX_GZIPPED_PART_JSON_BYTES + 1);
    expect(jsonBytes(under)).toBe(MAX_GZIPPED_PART_JSON_BYTES);
    expect(gzipBytes(over)).toBeLessThan(MAX_GZIPPED_PART_BYTES / 10);
    expect(refusal(asPart(over))?.[0]).toContain('its PersistentVolume "pv-large" alone is');
    expect(refusal(asPart(under))).toBeUndefined();
  });

  it('what compresses well is taken as `report` too, not only in `more`', () => {
    const compressible = onePv('P'.repeat(2 * MAX_REPORT_PART_BYTES));
    expect(refusal({ kind: 'VolumeReport', digest, observedAt: 1, report: compressible, part: { index: 1, count } })).toBeUndefined();
    expect(refusal({ kind: 'VolumeReport', digest, observedAt: 1, report: onePv(incompressible(2 * MAX_REPORT_PART_BYTES)), part: { index: 1, count } })?.[0]).toContain('pv-large');
  });
});
