import { describe, expect, it } from 'vitest';
import { chunkBySize } from '../../lib/forwarder/index.js';

const item = (bytes: number) => ({ pad: 'x'.repeat(bytes) });
const bodySize = (items: unknown[]) => Buffer.byteLength(JSON.stringify({ items }));

describe('chunkBySize', () => {
  it('small batch -> one request with every item in order', () => {
    expect(chunkBySize([item(10), item(10), item(10)], 1000)).toEqual({ chunks: [[0, 1, 2]], oversized: [] });
  });

  it('items adding up past the limit -> several requests, each body within the limit', () => {
    const items = Array.from({ length: 25 }, (_, i) => item(90 + i));
    const { chunks, oversized } = chunkBySize(items, 1000);
    expect(oversized).toEqual([]);
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.flat()).toEqual(items.map((_, i) => i));
    for (const chunk of chunks) expect(bodySize(chunk.map((i) => items[i]))).toBeLessThanOrEqual(1000);
  });

  it('an item larger than the limit alone -> reported oversized, the others still sent', () => {
    const { chunks, oversized } = chunkBySize([item(10), item(5000), item(10)], 1000);
    expect(oversized).toEqual([1]);
    expect(chunks).toEqual([[0, 2]]);
  });

  it('an item exactly filling a request -> sent alone', () => {
    const limit = bodySize([item(100)]);
    expect(chunkBySize([item(100), item(100)], limit)).toEqual({ chunks: [[0], [1]], oversized: [] });
  });
});
