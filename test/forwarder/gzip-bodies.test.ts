/**
 * The forwarder's side of gzip'd request bodies (lib/forwarder/backend-client.ts): nothing is
 * gzip'd until an answer says `Accept-Encoding: gzip`, then bodies of COMPRESS_FROM_BYTES or
 * more are, signed over the JSON they decode to; an answer without the header un-learns it;
 * a 415 to a gzip'd body gets the same body plain, once.
 */
import { describe, expect, it } from 'vitest';
import { COMPRESS_FROM_BYTES, decodeRequestBody, GZIP_CONTENT_TYPE, reportDigest, verify, type Result, type VolumeReportItem } from '../../lib/contract/index.js';
import {
  BackendRequestError,
  FORWARDER_VERSIONS,
  GZIP_REFUSED_HOLD_MS,
  postCheck,
  postReconcile,
  reconcileBody,
  RequestCodings,
  type BackendClientOptions,
  type FetchLike,
} from '../../lib/forwarder/backend-client.js';
import { createMemoryReportStore } from '../../lib/reports/index.js';
import { makeApp, SECRET_C1 } from '../app/harness.js';
import { bigReport } from '../contract/big-report.js';

const SECRET = 'whsec_' + Buffer.from('secret-secret-secret-secret').toString('base64');
const CLUSTER = 'c-1';

/** An item whose JSON is about `bytes` long (compressible). */
const item = (uid: string, bytes = 0) => ({ kind: 'PersistentVolumeClaimDeleted', uid, namespace: 'ns', name: `n${'x'.repeat(bytes)}`, pvExists: false });
const keyOf = (uid: string) => `PersistentVolumeClaimDeleted/${uid}`;
const large = [item('big', 2 * COMPRESS_FROM_BYTES)];
const small = [item('small')];

/** What one POST carried: its headers, its bytes, and the JSON they decode to. */
interface Sent {
  url: string;
  headers: Headers;
  raw: string | Uint8Array;
  contentEncoding: string | null;
  decoded: string;
}

type Answer = { status?: number; acceptEncoding?: string | null; body?: unknown };

/**
 * A fetch that records every request and answers from `script` in turn (the last again once
 * it runs out): each answer's status, `Accept-Encoding` (default: none) and body (default: every item done).
 */
function backend(script: Answer[]) {
  const sent: Sent[] = [];
  const fetch: FetchLike = async (url, init) => {
    const headers = new Headers(init.headers);
    const raw = init.body as string | Uint8Array;
    const bytes = typeof raw === 'string' ? Buffer.from(raw) : raw;
    const decodedBody = decodeRequestBody(bytes, headers.get('content-encoding'));
    if (!decodedBody.ok) throw new Error(`the fake backend could not decode the body: ${decodedBody.message}`);
    sent.push({ url, headers, raw, contentEncoding: headers.get('content-encoding'), decoded: decodedBody.text });
    const answer = script[Math.min(sent.length - 1, script.length - 1)] ?? {};
    const parsed = JSON.parse(decodedBody.text) as { items?: { uid: string }[] };
    const body = answer.body ?? (url.endsWith('/check') ? { clusterId: CLUSTER, accepted: true } : { results: (parsed.items ?? []).map((i): Result => ({ key: keyOf(i.uid), outcome: 'done', writes: [] })) });
    const responseHeaders: Record<string, string> = { 'content-type': 'application/json' };
    if (answer.acceptEncoding) responseHeaders['accept-encoding'] = answer.acceptEncoding;
    return new Response(JSON.stringify(body), { status: answer.status ?? 200, headers: responseHeaders });
  };
  return { fetch, sent };
}

function options(fetch: FetchLike, codings?: RequestCodings): BackendClientOptions {
  return { apiUrl: 'http://backend.test/', clusterId: CLUSTER, secret: () => SECRET, fetch, timeoutMs: 5_000, ...(codings && { codings }) };
}

/** The signature checked as the backend checks it: over the decoded body. */
function verifies(request: Sent, body: string): boolean {
  try {
    verify(request.headers, body, [SECRET], undefined, { versions: FORWARDER_VERSIONS });
    return true;
  } catch {
    return false;
  }
}

const GZIP = { acceptEncoding: 'gzip' };
const unsupported = { status: 415, acceptEncoding: null, body: { error: { code: 'unsupported_encoding', message: 'Content-Encoding "gzip" is not accepted' } } };

describe('learning that the backend takes gzip\'d bodies', () => {
  it('before any answer says Accept-Encoding: gzip -> plain, even a large body; once one does -> a large body gzip\'d, decoding to exactly the signed body', async () => {
    const { fetch, sent } = backend([GZIP]);
    const codings = new RequestCodings();
    expect(codings.gzip).toBe(false);

    const first = await postReconcile(options(fetch, codings), large);
    expect(first.results.map((r) => r.key)).toEqual([keyOf('big')]);
    expect(sent[0]?.contentEncoding).toBeNull();
    expect(typeof sent[0]?.raw).toBe('string');
    expect(codings.gzip).toBe(true);

    const second = await postReconcile(options(fetch, codings), large);
    expect(second.results.map((r) => r.key)).toEqual([keyOf('big')]);
    const gzipped = sent[1] as Sent;
    expect(gzipped.contentEncoding).toBe('gzip');
    expect(gzipped.raw).toBeInstanceOf(Uint8Array);
    const json = reconcileBody(CLUSTER, large);
    expect(Buffer.byteLength(json)).toBeGreaterThanOrEqual(COMPRESS_FROM_BYTES);
    expect(gzipped.decoded).toBe(json);
    expect((gzipped.raw as Uint8Array).length).toBeLessThan(Buffer.byteLength(json) / 4);
    // Signed over the JSON it decodes to, not over the bytes that travel.
    expect(verifies(gzipped, json)).toBe(true);
    expect(verifies(gzipped, Buffer.from(gzipped.raw as Uint8Array).toString('latin1'))).toBe(false);
    // Labelled binary, so that a gateway passes it base64'd, intact (body-encoding.ts); the plain one is JSON.
    expect(gzipped.headers.get('content-type')).toBe(GZIP_CONTENT_TYPE);
    expect(sent[0]?.headers.get('content-type')).toBe('application/json');
  });

  it('learnt, a body under COMPRESS_FROM_BYTES -> still plain, and signed over itself', async () => {
    const { fetch, sent } = backend([GZIP]);
    const codings = new RequestCodings();
    codings.learn(new Response(null, { headers: { 'accept-encoding': 'gzip' } }));
    await postReconcile(options(fetch, codings), small);
    const json = reconcileBody(CLUSTER, small);
    expect(Buffer.byteLength(json)).toBeLessThan(COMPRESS_FROM_BYTES);
    expect(sent[0]?.contentEncoding).toBeNull();
    expect(sent[0]?.raw).toBe(json);
    expect(verifies(sent[0] as Sent, json)).toBe(true);
  });

  it('the check\'s answer teaches it too; so does an error answer', async () => {
    const fromCheck = backend([GZIP]);
    const codings = new RequestCodings();
    expect(await postCheck(options(fromCheck.fetch, codings))).toBe('accepted');
    expect(codings.gzip).toBe(true);

    const fromError = backend([{ status: 503, acceptEncoding: 'gzip', body: { error: { code: 'Unavailable', message: 'later' } } }]);
    const learning = new RequestCodings();
    await expect(postReconcile(options(fromError.fetch, learning), large)).rejects.toMatchObject({ kind: 'http', status: 503 });
    expect(learning.gzip).toBe(true);
  });

  it('Accept-Encoding that refuses gzip (gzip;q=0, identity) -> not learnt, bodies stay plain', async () => {
    for (const acceptEncoding of ['gzip;q=0', 'identity', 'br']) {
      const { fetch, sent } = backend([{ acceptEncoding }]);
      const codings = new RequestCodings();
      await postReconcile(options(fetch, codings), large);
      await postReconcile(options(fetch, codings), large);
      expect(codings.gzip).toBe(false);
      expect(sent.map((s) => s.contentEncoding)).toEqual([null, null]);
    }
  });

  it('an answer without the header (a backend rolled back) -> un-learnt: the next large body goes plain', async () => {
    const { fetch, sent } = backend([GZIP, GZIP, { acceptEncoding: null }, GZIP]);
    const codings = new RequestCodings();
    for (let i = 0; i < 4; i += 1) await postReconcile(options(fetch, codings), large);
    // Plain until learnt; gzip'd; gzip'd, answered without the header; so plain again.
    expect(sent.map((s) => s.contentEncoding)).toEqual([null, 'gzip', 'gzip', null]);
    expect(codings.gzip).toBe(true);
    for (const request of sent) expect(verifies(request, reconcileBody(CLUSTER, large))).toBe(true);
  });

  it('a 503 or 429 without the header (a gateway\'s own: throttled, timed out) -> still learnt; control: a 401 without it (the backend\'s own refusal) -> un-learnt', async () => {
    const codings = new RequestCodings();
    codings.learn(new Response(null, { headers: { 'accept-encoding': 'gzip' } }));
    for (const status of [503, 502, 429]) {
      codings.learn(new Response(null, { status }));
      expect([status, codings.gzip]).toEqual([status, true]);
    }
    codings.learn(new Response(null, { status: 401 }));
    expect(codings.gzip).toBe(false);
    codings.learn(new Response(null, { status: 503, headers: { 'accept-encoding': 'gzip' } }));
    expect(codings.gzip).toBe(true);
  });

  it('no codings given -> never gzip\'d, whatever the answers say', async () => {
    const { fetch, sent } = backend([GZIP]);
    for (let i = 0; i < 3; i += 1) await postReconcile(options(fetch), large);
    expect(sent.map((s) => s.contentEncoding)).toEqual([null, null, null]);
  });
});

describe('a 415 to a gzip\'d body', () => {
  it('-> no gzip for GZIP_REFUSED_HOLD_MS, though every answer after it says gzip (a gateway that mangles them); then gzip again', async () => {
    const { fetch, sent } = backend([unsupported, GZIP]);
    let now = 1_000_000;
    const codings = new RequestCodings(() => now);
    codings.learn(new Response(null, { headers: { 'accept-encoding': 'gzip' } }));
    await postReconcile(options(fetch, codings), large);
    expect(sent.map((s) => s.contentEncoding)).toEqual(['gzip', null]);
    await postReconcile(options(fetch, codings), large);
    now += GZIP_REFUSED_HOLD_MS - 1;
    await postReconcile(options(fetch, codings), large);
    expect(sent.map((s) => s.contentEncoding)).toEqual(['gzip', null, null, null]);
    now += 1;
    await postReconcile(options(fetch, codings), large);
    expect(sent.at(-1)?.contentEncoding).toBe('gzip');
  });

  it('-> the same body re-posted plain, once, signed anew; that answer is returned', async () => {
    const { fetch, sent } = backend([unsupported, { acceptEncoding: null }]);
    const codings = new RequestCodings();
    codings.learn(new Response(null, { headers: { 'accept-encoding': 'gzip' } }));
    const { status, results } = await postReconcile(options(fetch, codings), large);
    expect(status).toBe(200);
    expect(results.map((r) => r.key)).toEqual([keyOf('big')]);
    expect(sent.map((s) => s.contentEncoding)).toEqual(['gzip', null]);
    const json = reconcileBody(CLUSTER, large);
    expect(sent.map((s) => s.decoded)).toEqual([json, json]);
    expect(sent[1]?.raw).toBe(json);
    expect(verifies(sent[1] as Sent, json)).toBe(true);
    expect(sent[1]?.headers.get('webhook-id')).not.toBe(sent[0]?.headers.get('webhook-id'));
    // The 415 came without the header: no gzip for the next one either.
    expect(codings.gzip).toBe(false);
    await postReconcile(options(fetch, codings), large);
    expect(sent).toHaveLength(3);
    expect(sent[2]?.contentEncoding).toBeNull();
  });

  it('the check\'s body is under COMPRESS_FROM_BYTES -> plain even when learnt, so a 415 to it is returned as it is', async () => {
    const { fetch, sent } = backend([unsupported, {}]);
    const codings = new RequestCodings();
    codings.learn(new Response(null, { headers: { 'accept-encoding': 'gzip' } }));
    await expect(postCheck(options(fetch, codings))).rejects.toMatchObject({ kind: 'http', status: 415 });
    expect(sent).toHaveLength(1);
    expect(sent[0]?.contentEncoding).toBeNull();
    expect(sent[0]?.raw).toBe(JSON.stringify({ clusterId: CLUSTER }));
  });

  it('a second 415, to the plain body -> returned as it is (an error), no third request', async () => {
    const { fetch, sent } = backend([unsupported, unsupported, { acceptEncoding: 'gzip' }]);
    const codings = new RequestCodings();
    codings.learn(new Response(null, { headers: { 'accept-encoding': 'gzip' } }));
    const error = await postReconcile(options(fetch, codings), large).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(BackendRequestError);
    expect(error).toMatchObject({ kind: 'http', status: 415, code: 'unsupported_encoding' });
    expect(sent.map((s) => s.contentEncoding)).toEqual(['gzip', null]);
  });

  it('a 415 to a plain body -> not re-posted: returned as it is; control: a 415 to a gzip\'d one is', async () => {
    const plainFirst = backend([unsupported, { acceptEncoding: null }]);
    await expect(postReconcile(options(plainFirst.fetch, new RequestCodings()), large)).rejects.toMatchObject({ kind: 'http', status: 415 });
    expect(plainFirst.sent).toHaveLength(1);

    const gzipFirst = backend([unsupported, { acceptEncoding: null }]);
    const codings = new RequestCodings();
    codings.learn(new Response(null, { headers: { 'accept-encoding': 'gzip' } }));
    await expect(postReconcile(options(gzipFirst.fetch, codings), large)).resolves.toMatchObject({ status: 200 });
    expect(gzipFirst.sent).toHaveLength(2);
  });

  it('another refusal to a gzip\'d body (400, 413) -> not re-posted', async () => {
    for (const status of [400, 413]) {
      const { fetch, sent } = backend([{ status, acceptEncoding: 'gzip', body: { error: { code: 'refused', message: 'no' } } }, {}]);
      const codings = new RequestCodings();
      codings.learn(new Response(null, { headers: { 'accept-encoding': 'gzip' } }));
      await expect(postReconcile(options(fetch, codings), large)).rejects.toMatchObject({ kind: 'http', status });
      expect(sent).toHaveLength(1);
    }
  });
});

describe('against the real backend app', () => {
  it('the check teaches gzip; a large report then goes gzip\'d and is kept exactly; a small one plain', async () => {
    const reports = createMemoryReportStore();
    const { app, ec2Mock } = makeApp({ reports, now: () => Date.now() });
    try {
      const encodings: (string | null)[] = [];
      const fetch: FetchLike = async (url, init) => {
        encodings.push(new Headers(init.headers).get('content-encoding'));
        return app.request(url, init);
      };
      const codings = new RequestCodings();
      const opts: BackendClientOptions = { apiUrl: 'http://backend.invalid', clusterId: 'c1', secret: () => SECRET_C1, fetch, timeoutMs: 30_000, codings };
      expect(await postCheck(opts)).toBe('accepted');
      expect(codings.gzip).toBe(true);

      const report = bigReport(200);
      const digest = reportDigest(report);
      const whole: VolumeReportItem = { kind: 'VolumeReport', digest, observedAt: Date.now(), report };
      expect(Buffer.byteLength(reconcileBody('c1', [whole]))).toBeGreaterThan(COMPRESS_FROM_BYTES);
      const { results } = await postReconcile(opts, [whole]);
      expect(results).toMatchObject([{ key: 'VolumeReport/cluster', outcome: 'done' }]);
      expect((await reports.get('c1'))?.report).toEqual(report);

      const digestOnly: VolumeReportItem = { kind: 'VolumeReport', digest, observedAt: Date.now() };
      expect((await postReconcile(opts, [digestOnly])).results).toMatchObject([{ outcome: 'done' }]);
      expect(encodings).toEqual([null, 'gzip', null]);
      expect(ec2Mock.calls()).toEqual([]);
    } finally {
      ec2Mock.restore();
    }
  });

  it('an older backend, which takes no gzip (no Accept-Encoding on its answers, no check route) -> the check says unknown, every body goes plain and is served; control: the same requests to this backend -> the large one gzip\'d', async () => {
    const reports = createMemoryReportStore();
    const { app, ec2Mock } = makeApp({ reports, now: () => Date.now() });
    try {
      /**
       * The backend before gzip'd bodies, as it behaves: its answers say no Accept-Encoding, it
       * reads the body as it comes whatever its Content-Encoding (so a gzip'd one fails its
       * signature), and 0.1.0's routes have no check.
       */
      const older: FetchLike = async (url, init) => {
        if (url.endsWith('/check')) return new Response(JSON.stringify({ message: 'Not Found' }), { status: 404 });
        const headers = new Headers(init.headers);
        headers.delete('content-encoding');
        const answer = await app.request(url, { ...init, headers });
        const stripped = new Headers(answer.headers);
        stripped.delete('accept-encoding');
        return new Response(await answer.text(), { status: answer.status, headers: stripped });
      };
      const run = async (backendFetch: FetchLike) => {
        const encodings: (string | null)[] = [];
        const fetch: FetchLike = async (url, init) => {
          encodings.push(new Headers(init.headers).get('content-encoding'));
          return backendFetch(url, init);
        };
        const codings = new RequestCodings();
        const opts: BackendClientOptions = { apiUrl: 'http://backend.invalid', clusterId: 'c1', secret: () => SECRET_C1, fetch, timeoutMs: 30_000, codings };
        const check = await postCheck(opts);
        const report = bigReport(200);
        const item: VolumeReportItem = { kind: 'VolumeReport', digest: reportDigest(report), observedAt: Date.now(), report };
        const { results } = await postReconcile(opts, [item]);
        return { check, encodings, results, gzip: codings.gzip };
      };

      const toOlder = await run(older);
      expect(toOlder.check).toBe('unknown');
      expect(toOlder.gzip).toBe(false);
      expect(toOlder.encodings).toEqual([null, null]);
      expect(toOlder.results).toMatchObject([{ key: 'VolumeReport/cluster', outcome: 'done' }]);

      const toCurrent = await run(async (url, init) => app.request(url, init));
      expect(toCurrent.check).toBe('accepted');
      expect(toCurrent.encodings).toEqual([null, 'gzip']);
      expect(toCurrent.results).toMatchObject([{ key: 'VolumeReport/cluster', outcome: 'done' }]);

      // What the fallback spares: a gzip'd body sent to the older backend anyway is refused (its signature fails on the bytes).
      const codings = new RequestCodings();
      codings.learn(new Response(null, { headers: { 'accept-encoding': 'gzip' } }));
      const report = bigReport(200);
      const forced = postReconcile(
        { apiUrl: 'http://backend.invalid', clusterId: 'c1', secret: () => SECRET_C1, fetch: older, timeoutMs: 30_000, codings },
        [{ kind: 'VolumeReport', digest: reportDigest(report), observedAt: Date.now(), report }],
      );
      await expect(forced).rejects.toMatchObject({ status: 401, code: 'bad_signature' });
    } finally {
      ec2Mock.restore();
    }
  });
});
