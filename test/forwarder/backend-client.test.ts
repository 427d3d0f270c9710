import { describe, expect, it } from 'vitest';
import { verify, type Result } from '../../lib/contract/index.js';
import { BackendRequestError, matchResults, postCheck, postReconcile, reconcileBody, reconcileUrl, resultsOfKeys, type FetchLike } from '../../lib/forwarder/backend-client.js';
import { chunkBySize, completionOf } from '../../lib/forwarder/sender.js';

const done = (key: string): Result => ({ key, outcome: 'done', writes: [] });
const SECRET = 'whsec_' + Buffer.from('secret-secret-secret-secret').toString('base64');
const options = (fetch: FetchLike) => ({ apiUrl: 'http://backend.test/', clusterId: 'c-1', secret: () => SECRET, fetch, timeoutMs: 100 });
const item = { kind: 'PersistentVolumeClaimDeleted', uid: 'u', namespace: 'ns', name: 'n', pvExists: false };

describe('matchResults', () => {
  it('results in order -> paired by position', () => {
    expect([...matchResults(['a', 'b'], [done('a'), done('b')]).values()].map((r) => r?.key)).toEqual(['a', 'b']);
  });

  it('results out of order -> paired by key; a missing result -> undefined', () => {
    const matched = matchResults(['a', 'b', 'c'], [done('b'), done('a')]);
    expect(matched.get('a')?.key).toBe('a');
    expect(matched.get('b')?.key).toBe('b');
    expect(matched.get('c')).toBeUndefined();
  });
});

describe('reconcileBody and chunking', () => {
  it('batches split for a body limit -> every body as sent, cluster id included, within the limit', () => {
    const clusterId = 'a-cluster-with-a-rather-long-name-0123456789';
    const items = Array.from({ length: 40 }, (_, i) => ({ ...item, uid: `u-${i}`.padEnd(60, 'x') }));
    // One byte short of ten items: nine fit, counting the cluster id's bytes too.
    const limit = Buffer.byteLength(reconcileBody(clusterId, items.slice(0, 10))) - 1;
    const { chunks, oversized } = chunkBySize(items, limit, reconcileBody(clusterId, []));
    expect(oversized).toEqual([]);
    expect(chunks.flat()).toEqual(items.map((_, i) => i));
    for (const chunk of chunks) {
      expect(Buffer.byteLength(reconcileBody(clusterId, chunk.map((i) => items[i])))).toBeLessThanOrEqual(limit);
    }
    expect(chunks[0]).toHaveLength(9);
  });
});

describe('completionOf', () => {
  it('done / requeue / failed -> done, requeue after ms, failed with or without a delay', () => {
    expect(completionOf(done('a'))).toEqual({ type: 'done' });
    expect(completionOf({ key: 'a', outcome: 'requeue', requeueAfterSeconds: 5, writes: [] })).toEqual({ type: 'requeue', afterMs: 5000 });
    expect(completionOf({ key: 'a', outcome: 'failed', reason: 'R', message: 'm', writes: [] })).toEqual({ type: 'failed' });
    expect(completionOf({ key: 'a', outcome: 'failed', reason: 'R', message: 'm', requeueAfterSeconds: 60, writes: [] })).toEqual({ type: 'failed', afterMs: 60_000 });
  });
});

describe('postReconcile', () => {
  it('a batch -> POST to /v1/clusters/<id>/reconcile, signed over the exact body', async () => {
    let seen: { url: string; init: RequestInit } | undefined;
    const { results } = await postReconcile(
      options(async (url, init) => {
        seen = { url, init };
        return new Response(JSON.stringify({ results: [done('PersistentVolumeClaimDeleted/u')] }), { status: 200 });
      }),
      [item],
    );
    expect(results).toHaveLength(1);
    expect(seen?.url).toBe('http://backend.test/v1/clusters/c-1/reconcile');
    const headers = new Headers(seen?.init.headers);
    expect(() => verify(headers, seen?.init.body as string, [SECRET])).not.toThrow();
    // The cluster id is in the signed body, so the backend can hold it against the path.
    expect(JSON.parse(seen?.init.body as string)).toEqual({ clusterId: 'c-1', items: [item] });
    expect(reconcileUrl('https://x.example.com/prod', 'a b')).toBe('https://x.example.com/prod/v1/clusters/a%20b/reconcile');
  });

  it('no answer within the timeout -> BackendRequestError timeout', async () => {
    const hang: FetchLike = (_url, init) => new Promise((_, reject) => init.signal?.addEventListener('abort', () => reject(init.signal?.reason)));
    await expect(postReconcile(options(hang), [item])).rejects.toMatchObject({ kind: 'timeout' });
  });

  it('connection refused -> network; 503 -> http with the status and message; 200 with junk -> response', async () => {
    const refused: FetchLike = async () => {
      throw new TypeError('fetch failed', { cause: new Error('connect ECONNREFUSED 127.0.0.1:9') });
    };
    await expect(postReconcile(options(refused), [item])).rejects.toMatchObject({ kind: 'network', message: expect.stringContaining('ECONNREFUSED') });
    const unavailable: FetchLike = async () => new Response(JSON.stringify({ error: { code: 'Unavailable', message: 'try later' } }), { status: 503 });
    const error = await postReconcile(options(unavailable), [item]).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(BackendRequestError);
    expect(error).toMatchObject({ kind: 'http', status: 503, message: expect.stringContaining('Unavailable: try later') });
    const junk: FetchLike = async () => new Response('{"results": "nope"}', { status: 200 });
    await expect(postReconcile(options(junk), [item])).rejects.toMatchObject({ kind: 'response' });
  });
});

describe('resultsOfKeys', () => {
  it('a result for every key sent -> each key paired with its own', () => {
    expect([...resultsOfKeys(['a', 'b'], [done('b'), done('a')], 200)].map(([key, r]) => [key, r.key])).toEqual([['a', 'a'], ['b', 'b']]);
  });

  it('{"results":[]} for two items, or a result for another key -> BackendRequestError response, naming what is missing', () => {
    expect(() => resultsOfKeys(['a', 'b'], [], 200)).toThrow(expect.objectContaining({ kind: 'response', status: 200, message: expect.stringContaining('no result for 2 of the 2 items sent') }));
    expect(() => resultsOfKeys(['a', 'b'], [done('a'), done('c')], 200)).toThrow(expect.objectContaining({ kind: 'response', message: expect.stringContaining('first missing: b') }));
  });
});

describe('postCheck: a 404 that is not the app refusing is "no such route"', () => {
  const answering = (status: number, body: string): FetchLike => async () => new Response(body, { status, headers: { 'content-type': 'application/json' } });

  it('the app\'s 404 not_found, API Gateway\'s {"message":"Not Found"}, or a 404 page -> unknown (a backend without the check)', async () => {
    await expect(postCheck(options(answering(404, JSON.stringify({ error: { code: 'not_found', message: 'no route for POST /v1/clusters/c-1/check' } }))))).resolves.toBe('unknown');
    await expect(postCheck(options(answering(404, '{"message":"Not Found"}')))).resolves.toBe('unknown');
    await expect(postCheck(options(answering(404, '404 Not Found')))).resolves.toBe('unknown');
  });

  it('the app\'s own 404 unknown_cluster -> a refusal (thrown), as a reconcile request gets it; control: accepted -> accepted', async () => {
    const unknown = answering(404, JSON.stringify({ error: { code: 'unknown_cluster', message: 'cluster "c-1" is not registered' } }));
    await expect(postCheck(options(unknown))).rejects.toMatchObject({ kind: 'http', status: 404, code: 'unknown_cluster' });
    await expect(postCheck(options(answering(200, JSON.stringify({ clusterId: 'c-1', accepted: true }))))).resolves.toBe('accepted');
  });
});
