/**
 * The requests a batch goes in: each body within what the backend takes — as it is, at most
 * `MAX_REQUEST_BYTES`; gzip'd, at most that many bytes on the wire and `MAX_DECODED_REQUEST_BYTES`
 * decoded (lib/contract/body-encoding.ts).
 */
import { encodeRequestBody, MAX_DECODED_REQUEST_BYTES, MAX_REQUEST_BYTES } from '../contract/index.js';
import { reconcileBody } from './backend-client.js';

/**
 * Splits items (by index) into requests: by their JSON, and with `gzip` each chunk again in
 * halves until it compresses to within the wire's bound. An item that alone is over either
 * bound can never be sent and is returned in `oversized`.
 */
export function requestChunks(items: readonly unknown[], clusterId: string, gzip: boolean): { chunks: number[][]; oversized: number[] } {
  const empty = reconcileBody(clusterId, []);
  if (!gzip) return chunkBySize(items, MAX_REQUEST_BYTES, empty);
  const { chunks, oversized } = chunkBySize(items, MAX_DECODED_REQUEST_BYTES, empty);
  const fitted: number[][] = [];
  const fit = (chunk: number[]): void => {
    if (encodeRequestBody(reconcileBody(clusterId, chunk.map((i) => items[i])), true).bytes <= MAX_REQUEST_BYTES) fitted.push(chunk);
    else if (chunk.length === 1) oversized.push(chunk[0] as number);
    else {
      const half = Math.ceil(chunk.length / 2);
      fit(chunk.slice(0, half));
      fit(chunk.slice(half));
    }
  };
  chunks.forEach(fit);
  return { chunks: fitted, oversized: oversized.sort((a, b) => a - b) };
}

/**
 * Splits items (by index) into requests whose body stays within `maxBytes`, so a batch of
 * large objects is sent as several requests instead of being refused whole with a 413. An
 * item that alone exceeds the limit can never be sent and is returned in `oversized`.
 */
export function chunkBySize(items: readonly unknown[], maxBytes: number, emptyBody = '{"items":[]}'): { chunks: number[][]; oversized: number[] } {
  const envelope = Buffer.byteLength(emptyBody);
  const chunks: number[][] = [];
  const oversized: number[] = [];
  let current: number[] = [];
  let size = envelope;
  items.forEach((item, i) => {
    const itemSize = Buffer.byteLength(JSON.stringify(item));
    if (envelope + itemSize > maxBytes) {
      oversized.push(i);
      return;
    }
    const separator = current.length > 0 ? 1 : 0;
    if (size + separator + itemSize > maxBytes) {
      chunks.push(current);
      current = [];
      size = envelope;
    }
    size += (current.length > 0 ? 1 : 0) + itemSize;
    current.push(i);
  });
  if (current.length > 0) chunks.push(current);
  return { chunks, oversized };
}

