/**
 * The requests a batch goes in (lib/forwarder/request-chunks.ts): plain, each body within
 * MAX_REQUEST_BYTES; gzip'd, each within MAX_REQUEST_BYTES on the wire and
 * MAX_DECODED_REQUEST_BYTES decoded — so compressible batches take fewer requests.
 */
import { describe, expect, it } from 'vitest';
import { encodeRequestBody, MAX_DECODED_REQUEST_BYTES, MAX_REQUEST_BYTES } from '../../lib/contract/index.js';
import { reconcileBody } from '../../lib/forwarder/backend-client.js';
import { chunkBySize, requestChunks } from '../../lib/forwarder/request-chunks.js';
import { incompressible } from '../contract/big-report.js';

const CLUSTER = 'a-cluster-with-a-rather-long-name-0123456789';
const KiB = 1024;

/** `n` items of about `bytes` of JSON each that compress well (the same words over and over, with their index). */
function compressible(n: number, bytes: number) {
  return Array.from({ length: n }, (_, i) => ({ kind: 'PersistentVolumeClaimDeleted', uid: `uid-${i}`, namespace: 'ns', name: `claim-${i}`, note: `annotation-${i} `.repeat(Math.ceil(bytes / 12)).slice(0, bytes) }));
}

/** `n` items of about `bytes` of JSON each that gzip cannot shrink below three quarters, no two alike. */
function dense(n: number, bytes: number) {
  const text = incompressible(n * bytes);
  return Array.from({ length: n }, (_, i) => ({ kind: 'PersistentVolumeClaimDeleted', uid: `uid-${i}`, namespace: 'ns', name: `claim-${i}`, note: text.slice(i * bytes, (i + 1) * bytes) }));
}

/** Each chunk's body as it goes: its bytes on the wire (gzip'd or not) and decoded. */
function bodies(items: readonly unknown[], chunks: number[][], gzip: boolean) {
  return chunks.map((chunk) => {
    const json = reconcileBody(CLUSTER, chunk.map((i) => items[i]));
    return { wire: encodeRequestBody(json, gzip).bytes, decoded: Buffer.byteLength(json) };
  });
}

/** Chunks and oversized together name every item once, and each chunk keeps the items' order, as do the chunks among themselves. */
function expectEveryItemInOrder(n: number, { chunks, oversized }: { chunks: number[][]; oversized: number[] }) {
  const sent = chunks.flat();
  expect([...sent, ...oversized].sort((a, b) => a - b)).toEqual([...Array(n).keys()]);
  expect(sent).toEqual([...sent].sort((a, b) => a - b));
  expect(oversized).toEqual([...oversized].sort((a, b) => a - b));
  for (const chunk of chunks) expect(chunk.length).toBeGreaterThan(0);
}

describe('requestChunks', () => {
  it('plain: every body within MAX_REQUEST_BYTES, exactly as chunkBySize cuts it with the cluster\'s envelope', () => {
    const items = compressible(40, 100 * KiB);
    const plain = requestChunks(items, CLUSTER, false);
    expect(plain).toEqual(chunkBySize(items, MAX_REQUEST_BYTES, reconcileBody(CLUSTER, [])));
    expect(plain.oversized).toEqual([]);
    expect(plain.chunks.length).toBeGreaterThan(3);
    expectEveryItemInOrder(items.length, plain);
    for (const body of bodies(items, plain.chunks, false)) {
      expect(body.wire).toBe(body.decoded);
      expect(body.wire).toBeLessThanOrEqual(MAX_REQUEST_BYTES);
    }
    // Filled, not cut short: two neighbouring chunks together would not fit.
    for (let i = 1; i < plain.chunks.length; i += 1) {
      const both = [...(plain.chunks[i - 1] as number[]), ...(plain.chunks[i] as number[])].map((j) => items[j]);
      expect(Buffer.byteLength(reconcileBody(CLUSTER, both))).toBeGreaterThan(MAX_REQUEST_BYTES);
    }
  });

  it('gzip: compressible items -> fewer requests than plain, each within MAX_REQUEST_BYTES on the wire and MAX_DECODED_REQUEST_BYTES decoded', () => {
    const items = compressible(40, 100 * KiB);
    const plain = requestChunks(items, CLUSTER, false);
    const gzip = requestChunks(items, CLUSTER, true);
    expect(gzip.oversized).toEqual([]);
    expectEveryItemInOrder(items.length, gzip);
    expect(gzip.chunks.length).toBeLessThan(plain.chunks.length);
    const sized = bodies(items, gzip.chunks, true);
    for (const body of sized) {
      expect(body.wire).toBeLessThanOrEqual(MAX_REQUEST_BYTES);
      expect(body.decoded).toBeLessThanOrEqual(MAX_DECODED_REQUEST_BYTES);
    }
    // More than one plain request's worth in one gzip'd request.
    expect(Math.max(...sized.map((b) => b.decoded))).toBeGreaterThan(MAX_REQUEST_BYTES);
  });

  it('gzip: more than MAX_DECODED_REQUEST_BYTES of compressible items -> cut by what they decode to', () => {
    const items = compressible(100, 200 * KiB);
    const gzip = requestChunks(items, CLUSTER, true);
    expect(gzip.oversized).toEqual([]);
    expectEveryItemInOrder(items.length, gzip);
    expect(gzip.chunks.length).toBeGreaterThan(1);
    const sized = bodies(items, gzip.chunks, true);
    for (const body of sized) {
      expect(body.decoded).toBeLessThanOrEqual(MAX_DECODED_REQUEST_BYTES);
      expect(body.wire).toBeLessThanOrEqual(MAX_REQUEST_BYTES);
    }
    // The decoded bound is what cuts them: each request but the last is close to it.
    for (const body of sized.slice(0, -1)) expect(body.decoded).toBeGreaterThan(MAX_DECODED_REQUEST_BYTES - 200 * KiB - 1024);
  });

  it('gzip: incompressible items -> halved until each request fits the wire, every item still sent in order', () => {
    const items = dense(48, 100 * KiB);
    const total = Buffer.byteLength(reconcileBody(CLUSTER, items));
    expect(total).toBeLessThan(MAX_DECODED_REQUEST_BYTES);
    // One chunk by what it decodes to, but far too large gzip'd for one request.
    expect(encodeRequestBody(reconcileBody(CLUSTER, items), true).bytes).toBeGreaterThan(2 * MAX_REQUEST_BYTES);
    const gzip = requestChunks(items, CLUSTER, true);
    expect(gzip.oversized).toEqual([]);
    expectEveryItemInOrder(items.length, gzip);
    expect(gzip.chunks.length).toBeGreaterThan(2);
    for (const body of bodies(items, gzip.chunks, true)) expect(body.wire).toBeLessThanOrEqual(MAX_REQUEST_BYTES);
  });

  it('plain: an item alone over MAX_REQUEST_BYTES -> oversized, the others sent around it in order', () => {
    const items = [...compressible(3, 10 * KiB), ...compressible(1, MAX_REQUEST_BYTES), ...compressible(3, 10 * KiB)];
    const plain = requestChunks(items, CLUSTER, false);
    expect(plain.oversized).toEqual([3]);
    expect(plain.chunks).toEqual([[0, 1, 2, 4, 5, 6]]);
  });

  it('gzip: the same compressible item over MAX_REQUEST_BYTES as JSON -> sent (control); an incompressible one as large, or one decoding past MAX_DECODED_REQUEST_BYTES -> oversized', () => {
    const around = compressible(3, 10 * KiB);
    const large = compressible(1, 2 * MAX_REQUEST_BYTES);
    const taken = requestChunks([...around, ...large, ...around], CLUSTER, true);
    expect(taken.oversized).toEqual([]);
    expectEveryItemInOrder(7, taken);

    const denseLarge = dense(1, 2 * MAX_REQUEST_BYTES);
    const huge = compressible(1, MAX_DECODED_REQUEST_BYTES);
    const items = [...around, ...denseLarge, ...around, ...huge, ...around];
    const gzip = requestChunks(items, CLUSTER, true);
    expect(gzip.oversized).toEqual([3, 7]);
    expectEveryItemInOrder(items.length, gzip);
    expect(gzip.chunks.flat()).toEqual([0, 1, 2, 4, 5, 6, 8, 9, 10]);
    for (const body of bodies(items, gzip.chunks, true)) expect(body.wire).toBeLessThanOrEqual(MAX_REQUEST_BYTES);
  });

  it('a small batch -> one request either way; no items -> no request', () => {
    const items = compressible(5, 100);
    expect(requestChunks(items, CLUSTER, false)).toEqual({ chunks: [[0, 1, 2, 3, 4]], oversized: [] });
    expect(requestChunks(items, CLUSTER, true)).toEqual({ chunks: [[0, 1, 2, 3, 4]], oversized: [] });
    expect(requestChunks([], CLUSTER, true)).toEqual({ chunks: [], oversized: [] });
  });
});
