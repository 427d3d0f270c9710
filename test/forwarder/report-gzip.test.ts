/**
 * A volume report of 20,000 PVs, claims and attachments, sent by the ReportTracker and the
 * batch sender to the backend app, once with plain bodies (parts sized by their JSON, one per
 * item) and once with gzip'd ones (parts sized by what they compress to, up to
 * MAX_PARTS_PER_ITEM per item): both keep exactly the report; gzip takes fewer items, requests
 * and bytes. And the backend's reconciler puts a report together from items that carry `more`.
 */
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import {
  canonicalReport,
  decodeRequestBody,
  ItemKeys,
  ItemSchema,
  MAX_DECODED_REQUEST_BYTES,
  MAX_GZIPPED_PART_BYTES,
  MAX_PARTS_PER_ITEM,
  MAX_REPORT_PART_BYTES,
  MAX_REQUEST_BYTES,
  ReconcileRequestSchema,
  reportDigest,
  reportItemProblem,
  splitReport,
  type VolumeReport,
  type VolumeReportItem,
} from '../../lib/contract/index.js';
import { RequestCodings, type FetchLike } from '../../lib/forwarder/backend-client.js';
import { silentLogger } from '../../lib/forwarder/logger.js';
import { createMetrics } from '../../lib/forwarder/metrics.js';
import { ReportTracker } from '../../lib/forwarder/report.js';
import { createBatchSender } from '../../lib/forwarder/sender.js';
import type { KubeClients } from '../../lib/kube/clients.js';
import { reconcileItems } from '../../lib/reconcile/index.js';
import { createMemoryReportStore } from '../../lib/reports/index.js';
import { makeApp, SECRET_C1 } from '../app/harness.js';
import { bigReport } from '../contract/big-report.js';
import { setup as fixture } from '../reconcile/fixtures.js';

const N = 20_000;
const jsonBytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value));
const gzipBytes = (value: unknown) => gzipSync(JSON.stringify(value)).length;

interface Request {
  /** Bytes on the wire, gzip'd or not. */
  wire: number;
  /** Bytes of the JSON the body decodes to (the signed body). */
  json: number;
  contentEncoding: string | null;
  items: VolumeReportItem[];
}

interface Run {
  requests: Request[];
  completions: (string | undefined)[];
  stored: VolumeReport | undefined;
  storedDigest: string | undefined;
  /** The request after `done`: the digest alone. */
  confirm: Request | undefined;
}

/**
 * The report's key turned until the backend answers `done` (and once more, for the digest
 * alone), as the pump turns it; with `gzip` the forwarder has learnt that the backend takes
 * gzip'd bodies (as forwarder.ts wires it: the tracker sizes parts by the same codings).
 */
async function sendReport(report: VolumeReport, gzip: boolean): Promise<Run> {
  const reports = createMemoryReportStore();
  const { app, ec2Mock } = makeApp({ reports, now: () => Date.now() });
  try {
    const codings = new RequestCodings();
    if (gzip) codings.learn(new Response(null, { headers: { 'accept-encoding': 'gzip' } }));
    const tracker = new ReportTracker({ sizing: () => (codings.gzip ? 'gzip' : 'json') });
    const requests: Request[] = [];
    const fetch: FetchLike = async (url, init) => {
      const headers = new Headers(init.headers);
      const raw = init.body as string | Uint8Array;
      const bytes = typeof raw === 'string' ? Buffer.from(raw) : raw;
      const decoded = decodeRequestBody(bytes, headers.get('content-encoding'));
      if (!decoded.ok) throw new Error(decoded.message);
      const items = ReconcileRequestSchema.parse(JSON.parse(decoded.text)).items as VolumeReportItem[];
      requests.push({ wire: bytes.length, json: Buffer.byteLength(decoded.text), contentEncoding: headers.get('content-encoding'), items });
      return app.request(url, init);
    };
    const send = createBatchSender({
      config: { apiUrl: 'http://backend.invalid', clusterId: 'c1', requestTimeoutMs: 60_000 },
      clients: {} as KubeClients,
      metrics: createMetrics({ queueDepth: () => 0, defaultMetrics: false }),
      logger: silentLogger,
      secret: { current: () => SECRET_C1, reload: async () => {}, close() {} },
      fetch,
      ...(gzip && { codings: () => codings }),
      signal: new AbortController().signal,
      buildItem: (key) => (key === ItemKeys.report() ? tracker.item(() => report, Date.now()) : undefined),
    });
    const turn = async () => {
      const completion = (await send([ItemKeys.report()], new Map())).get(ItemKeys.report());
      tracker.answered(completion?.type === 'done');
      return completion?.type;
    };
    const completions: (string | undefined)[] = [];
    for (let i = 0; i < 200 && completions.at(-1) !== 'done'; i += 1) completions.push(await turn());
    const stored = await reports.get('c1');
    const before = requests.length;
    const again = await turn();
    expect(again).toBe('done');
    expect(requests).toHaveLength(before + 1);
    expect(codings.gzip).toBe(gzip);
    return { requests: requests.slice(0, before), completions, stored: stored?.report, storedDigest: stored?.digest, confirm: requests.at(-1) };
  } finally {
    ec2Mock.restore();
  }
}

/** Parts, items and bytes of one run. */
function figures(run: Run) {
  const items = run.requests.flatMap((r) => r.items);
  const parts = items.flatMap((i) => [{ index: i.part?.index, report: i.report }, ...(i.more ?? [])]);
  return {
    count: items[0]?.part?.count ?? 0,
    parts,
    items: items.length,
    requests: run.requests.length,
    json: run.requests.reduce((sum, r) => sum + r.json, 0),
    wire: run.requests.reduce((sum, r) => sum + r.wire, 0),
    /** What the same bodies would have weighed gzip'd: the parts' own compression. */
    partsGzip: parts.reduce((sum, p) => sum + gzipBytes(p.report), 0),
  };
}

describe('a volume report of 20,000 PVs with gzip\'d bodies', () => {
  it('json sizing vs gzip sizing: both keep exactly the report; gzip needs fewer parts, items, requests and wire bytes; every item is within the contract', async () => {
    const report = bigReport(N);
    const canonical = canonicalReport(report);
    const digest = reportDigest(report);
    expect(jsonBytes(canonical)).toBeGreaterThan(3 * MAX_REQUEST_BYTES);

    const plain = await sendReport(report, false);
    const gzip = await sendReport(report, true);

    for (const run of [plain, gzip]) {
      expect(run.storedDigest).toBe(digest);
      expect(run.stored).toEqual(canonical);
      expect(run.completions.at(-1)).toBe('done');
      expect(run.completions.slice(0, -1).every((c) => c === 'requeue')).toBe(true);
      for (const request of run.requests) {
        expect(request.wire).toBeLessThanOrEqual(MAX_REQUEST_BYTES);
        expect(request.json).toBeLessThanOrEqual(MAX_DECODED_REQUEST_BYTES);
        for (const item of request.items) {
          expect(reportItemProblem(item)).toBeUndefined();
          expect(ItemSchema.safeParse(item).success).toBe(true);
          expect(item).toMatchObject({ digest });
        }
      }
      // Then the digest alone, acknowledged, small and plain.
      expect(run.confirm?.items).toEqual([{ kind: 'VolumeReport', digest, observedAt: expect.any(Number) }]);
      expect(run.confirm?.contentEncoding).toBeNull();
    }

    const json = figures(plain);
    const gz = figures(gzip);
    // Plain: one part per item, one item per request, nothing gzip'd, each part within MAX_REPORT_PART_BYTES of JSON.
    expect(plain.requests.every((r) => r.contentEncoding === null && r.wire === r.json)).toBe(true);
    expect(json.items).toBe(json.count);
    expect(plain.requests.flatMap((r) => r.items).every((i) => i.more === undefined)).toBe(true);
    for (const part of json.parts) expect(jsonBytes(part.report)).toBeLessThanOrEqual(MAX_REPORT_PART_BYTES);
    // Gzip: larger parts (by their JSON), each compressing within MAX_GZIPPED_PART_BYTES, up to MAX_PARTS_PER_ITEM per item.
    expect(gzip.requests.every((r) => r.contentEncoding === 'gzip')).toBe(true);
    expect(Math.max(...gz.parts.map((p) => jsonBytes(p.report)))).toBeGreaterThan(MAX_REPORT_PART_BYTES);
    for (const part of gz.parts) expect(gzipBytes(part.report)).toBeLessThanOrEqual(MAX_GZIPPED_PART_BYTES);
    expect(gz.items).toBe(Math.ceil(gz.count / MAX_PARTS_PER_ITEM));
    expect(gzip.requests.flatMap((r) => r.items).slice(0, -1).every((i) => 1 + (i.more?.length ?? 0) === Math.min(MAX_PARTS_PER_ITEM, gz.count))).toBe(true);

    // Every part of the digest sent within the tracker's first round, in order.
    expect(json.parts.map((p) => p.index)).toEqual([...Array(json.count).keys()]);
    expect(gz.parts.slice(0, gz.count).map((p) => p.index)).toEqual([...Array(gz.count).keys()]);

    // The comparison.
    expect(gz.count).toBeLessThan(json.count);
    expect(gz.items).toBeLessThan(json.items);
    expect(gz.requests).toBeLessThan(json.requests);
    expect(gz.wire).toBeLessThan(json.wire);
    expect(gz.wire).toBeLessThan(json.wire / 4);

    console.log(
      `20,000 PVs (${jsonBytes(canonical).toLocaleString('en-US')} bytes of report JSON): ` +
        `json ${json.count} parts / ${json.items} items / ${json.requests} requests / ${json.wire.toLocaleString('en-US')} bytes on the wire ` +
        `(${json.partsGzip.toLocaleString('en-US')} had its parts been gzip'd); ` +
        `gzip ${gz.count} parts (${gz.parts.length} sent) / ${gz.items} items / ${gz.requests} requests / ${gz.json.toLocaleString('en-US')} bytes of JSON / ${gz.wire.toLocaleString('en-US')} bytes on the wire`,
    );
  }, 300_000);

  it('the tracker alone, gzip sizing: the first items carry every part in turn; without done, parts go on in turn until each is sent twice, then the report is read afresh', () => {
    const report = bigReport(N);
    const tracker = new ReportTracker({ sizing: () => 'gzip' });
    let reads = 0;
    const read = () => ((reads += 1), report);
    const items: VolumeReportItem[] = [];
    while (reads < 2 && items.length < 100) {
      items.push(tracker.item(read, 1000 + reads));
      tracker.answered(false);
    }
    const afresh = items.pop() as VolumeReportItem;
    expect(afresh.observedAt).toBe(1001);
    const count = items[0]?.part?.count ?? 0;
    expect(count).toBeGreaterThan(MAX_PARTS_PER_ITEM);
    const indices = items.flatMap((item) => [item.part?.index, ...(item.more ?? []).map((m) => m.index)]);
    // In turn, from part 0: each round carries every part once, an item never reaching past a
    // round's last part into the next (the backend would get parts it has again).
    const round = [...Array(count).keys()];
    expect(indices).toEqual([...round, ...round]);
    const perRound = Math.ceil(count / MAX_PARTS_PER_ITEM);
    expect(items).toHaveLength(2 * perRound);
    for (const item of items) {
      expect(reportItemProblem(item)).toBeUndefined();
      expect(item.observedAt).toBe(1000);
      expect(1 + (item.more?.length ?? 0)).toBeLessThanOrEqual(MAX_PARTS_PER_ITEM);
    }
    // Read afresh: part 0 of the new reading.
    expect(afresh.part?.index).toBe(0);
  });

  it('the sizing changing mid-report (the backend no longer takes gzip) -> the report read afresh and cut by its JSON, one part per item', () => {
    const report = bigReport(N);
    let sizing: 'gzip' | 'json' = 'gzip';
    const tracker = new ReportTracker({ sizing: () => sizing });
    const gzipItem = tracker.item(report, 1000);
    tracker.answered(false);
    expect(gzipItem.more).toHaveLength(MAX_PARTS_PER_ITEM - 1);
    sizing = 'json';
    const jsonItem = tracker.item(report, 1000);
    expect(jsonItem.more).toBeUndefined();
    expect(jsonItem.part?.index).toBe(0);
    expect(jsonItem.part?.count).toBe(splitReport(canonicalReport(report)).length);
    expect(jsonItem.part?.count).toBeGreaterThan(gzipItem.part?.count ?? Infinity);
  });
});

describe('the backend puts a report together from items with `more`', () => {
  /** The backend's clock and report store, as test/reconcile/report.test.ts sets them. */
  function setup() {
    const reports = createMemoryReportStore();
    const ctx = { ...fixture().ctx, reports, signedAt: new Date(5_000_000), now: () => new Date(5_000_500) };
    return { reports, ctx };
  }
  const whole = canonicalReport(bigReport(300));
  const digest = reportDigest(whole);
  const parts = splitReport(whole, 16 * 1024);
  const count = parts.length;
  const itemOf = (...indices: number[]): VolumeReportItem => {
    const [first, ...rest] = indices as [number, ...number[]];
    return {
      kind: 'VolumeReport',
      digest,
      observedAt: 4_000_000,
      report: parts[first] as VolumeReport,
      part: { index: first, count },
      ...(rest.length > 0 && { more: rest.map((index) => ({ index, report: parts[index] as VolumeReport })) }),
    };
  };

  it('items of up to three parts each, in any order -> requeue naming the parts kept and how many to come; the last one in -> the report kept exactly, done', async () => {
    expect(count).toBeGreaterThanOrEqual(7);
    const { reports, ctx } = setup();
    const groups = [[count - 1, 0, 1], [4, 2], [3]];
    const rest = [...Array(count).keys()].filter((i) => !groups.flat().includes(i));
    for (let i = 0; i < rest.length; i += MAX_PARTS_PER_ITEM) groups.push(rest.slice(i, i + MAX_PARTS_PER_ITEM));
    let held = 0;
    for (const [n, group] of groups.entries()) {
      const item = itemOf(...group);
      expect(ItemSchema.safeParse(item).success).toBe(true);
      const [result] = await reconcileItems([item], ctx);
      held += group.length;
      if (n < groups.length - 1) {
        expect(result).toMatchObject({ outcome: 'requeue', requeueAfterSeconds: 0 });
        expect(result?.outcome === 'requeue' && result.message).toBe(`part${group.length > 1 ? 's' : ''} ${group.join(', ')} of ${count} of report ${digest} kept; ${count - held} to come`);
        expect(await reports.get(ctx.clusterId)).toBeUndefined();
      } else {
        expect(result).toMatchObject({ outcome: 'done' });
      }
    }
    expect(await reports.get(ctx.clusterId)).toMatchObject({ digest, report: whole, observedAt: 4_000_000 });
  });

  it('a part sent again in a later item (a forwarder\'s second round) -> counted once; control: the report completes only with every part', async () => {
    const { reports, ctx } = setup();
    const [first] = await reconcileItems([itemOf(0, 1, 2)], ctx);
    expect(first).toMatchObject({ outcome: 'requeue' });
    const [second] = await reconcileItems([itemOf(2, 3, 4)], ctx);
    expect(second).toMatchObject({ outcome: 'requeue' });
    expect(second?.outcome === 'requeue' && second.message).toMatch(new RegExp(`; ${count - 5} to come$`));
    expect(await reports.get(ctx.clusterId)).toBeUndefined();
    const remaining = [...Array(count).keys()].slice(5);
    let last;
    for (let i = 0; i < remaining.length; i += MAX_PARTS_PER_ITEM) [last] = await reconcileItems([itemOf(...remaining.slice(i, i + MAX_PARTS_PER_ITEM))], ctx);
    expect(last).toMatchObject({ outcome: 'done' });
    expect((await reports.get(ctx.clusterId))?.report).toEqual(whole);
  });

  it('a part in `more` that is not of the digest -> failed InvalidItem once all are in, nothing kept; control: the genuine parts -> kept', async () => {
    const { reports, ctx } = setup();
    const forged = itemOf(0, 1, 2);
    forged.more![1]!.report = { ...forged.more![1]!.report, claims: [...forged.more![1]!.report.claims, 'someone-else'] };
    const results = [];
    results.push(...(await reconcileItems([forged], ctx)));
    const remaining = [...Array(count).keys()].slice(3);
    for (let i = 0; i < remaining.length; i += MAX_PARTS_PER_ITEM) results.push(...(await reconcileItems([itemOf(...remaining.slice(i, i + MAX_PARTS_PER_ITEM))], ctx)));
    expect(results.at(-1)).toMatchObject({ outcome: 'failed', reason: 'InvalidItem' });
    expect(await reports.get(ctx.clusterId)).toBeUndefined();

    const control = setup();
    const all = [...Array(count).keys()];
    const answers = [];
    for (let i = 0; i < all.length; i += MAX_PARTS_PER_ITEM) answers.push(...(await reconcileItems([itemOf(...all.slice(i, i + MAX_PARTS_PER_ITEM))], control.ctx)));
    expect(answers.at(-1)).toMatchObject({ outcome: 'done' });
    expect((await control.reports.get(control.ctx.clusterId))?.report).toEqual(whole);
  });
});
