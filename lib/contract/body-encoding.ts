/**
 * Compressed request bodies, both sides' rules. A backend that takes gzip'd bodies says so in
 * every answer with `Accept-Encoding: gzip` (RFC 7694 §3: a server's Accept-Encoding names the
 * codings it accepts in requests); a forwarder gzips its larger bodies only once it has seen
 * that, so a backend that predates it (0.1.0) never gets one. A coding the backend does not
 * take is refused with 415 and the same header (RFC 7694 §3), and the forwarder sends the
 * batch again as it is.
 *
 * Two bounds: `MAX_REQUEST_BYTES` (items.ts) on the bytes as they come (compressed or not), and
 * {@link MAX_DECODED_REQUEST_BYTES} on what a gzip'd body decodes to. The second is checked
 * while decoding, which stops at the bound: a small body that would inflate to gigabytes (a
 * zip bomb) costs at most that much memory and is refused with 413 before anything of the
 * request is looked up, verified, recorded or done (the backend notes the refusal for the audit,
 * as it does every refusal: lib/reports/refusals.ts).
 *
 * The signature is over the decoded body, the JSON both sides read: compression is how the
 * bytes travel, not what is signed.
 */
import { gunzipSync, gzipSync } from 'node:zlib';

export const GZIP = 'gzip';

/** What a gzip'd request body may decode to at most. */
export const MAX_DECODED_REQUEST_BYTES = 8 * 1024 * 1024;

/** Bodies smaller than this go as they are: gzip would save a few hundred bytes at most. */
export const COMPRESS_FROM_BYTES = 8 * 1024;

/** The header a backend that accepts gzip'd bodies puts on every answer. */
export const ACCEPT_ENCODING_HEADER = 'accept-encoding';

/**
 * Whether an answer's `Accept-Encoding` accepts gzip: listed with a q-value above 0, or as
 * `*` when gzip is not listed at 0 (RFC 9110 §12.5.3).
 */
export function acceptsGzip(acceptEncoding: string | null | undefined): boolean {
  if (!acceptEncoding) return false;
  const codings = new Map<string, number>();
  for (const element of acceptEncoding.split(',')) {
    const [name = '', ...params] = element.split(';').map((s) => s.trim().toLowerCase());
    if (!name) continue;
    const q = params.find((p) => p.startsWith('q='));
    const weight = q === undefined ? 1 : Number(q.slice(2));
    codings.set(name, Number.isFinite(weight) ? weight : 0);
  }
  const gzip = codings.get(GZIP) ?? codings.get('x-gzip');
  if (gzip !== undefined) return gzip > 0;
  return (codings.get('*') ?? 0) > 0;
}

/**
 * The `Content-Type` a gzip'd body goes with. API Gateway and serverless-offline pass a body of
 * a binary type to the function base64'd, byte for byte; one labelled JSON they may take for
 * text and re-encode as UTF-8, which gzip's bytes do not survive (lib/app/lambda-body.ts). The
 * backend reads the body by its `Content-Encoding`, whatever its type says.
 */
export const GZIP_CONTENT_TYPE = 'application/octet-stream';
export const JSON_CONTENT_TYPE = 'application/json';

export interface EncodedBody {
  body: string | Uint8Array;
  /** `Content-Encoding`, when compressed. */
  contentEncoding?: typeof GZIP;
  /** `Content-Type`: JSON as it is, {@link GZIP_CONTENT_TYPE} gzip'd. */
  contentType: typeof JSON_CONTENT_TYPE | typeof GZIP_CONTENT_TYPE;
  /** Bytes on the wire. */
  bytes: number;
}

/** The body as it goes: gzip'd when the backend takes it and the body is worth it. */
export function encodeRequestBody(json: string, gzip: boolean): EncodedBody {
  const bytes = Buffer.byteLength(json);
  if (!gzip || bytes < COMPRESS_FROM_BYTES) return { body: json, contentType: JSON_CONTENT_TYPE, bytes };
  const compressed = gzipSync(json);
  return { body: new Uint8Array(compressed.buffer, compressed.byteOffset, compressed.length), contentEncoding: GZIP, contentType: GZIP_CONTENT_TYPE, bytes: compressed.length };
}

export type DecodedBody =
  | { ok: true; text: string }
  | { ok: false; status: 413 | 415 | 400; code: 'body_too_large' | 'unsupported_encoding' | 'bad_encoding'; message: string };

/**
 * The body as the signature and the schema read it. `contentEncoding` absent or `identity`:
 * the bytes as they are; `gzip`: decoded, never past `maxDecodedBytes`; anything else refused.
 */
export function decodeRequestBody(bytes: Uint8Array, contentEncoding: string | null | undefined, maxDecodedBytes = MAX_DECODED_REQUEST_BYTES): DecodedBody {
  const coding = (contentEncoding ?? '').trim().toLowerCase();
  if (coding === '' || coding === 'identity') return { ok: true, text: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('utf8') };
  if (coding !== GZIP && coding !== 'x-gzip') {
    return { ok: false, status: 415, code: 'unsupported_encoding', message: `Content-Encoding "${contentEncoding}" is not accepted; send the body as it is, or gzip'd (Content-Encoding: gzip)` };
  }
  try {
    return { ok: true, text: gunzipSync(bytes, { maxOutputLength: maxDecodedBytes }).toString('utf8') };
  } catch (err) {
    if (err instanceof RangeError || (err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') {
      return { ok: false, status: 413, code: 'body_too_large', message: `the gzip'd request body decodes to more than ${maxDecodedBytes} bytes` };
    }
    return { ok: false, status: 400, code: 'bad_encoding', message: `the request body is not valid gzip: ${err instanceof Error ? err.message : String(err)}` };
  }
}
