import { gunzipSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { acceptsGzip, COMPRESS_FROM_BYTES, decodeRequestBody, encodeRequestBody, GZIP, MAX_DECODED_REQUEST_BYTES } from '../../lib/contract/index.js';
import { incompressible } from './big-report.js';

/** A JSON body of exactly `bytes` bytes (ASCII), compressible: the same item over and over. */
function jsonOf(bytes: number): string {
  const frame = '{"items":[""]}';
  return `{"items":["${'a'.repeat(bytes - frame.length)}"]}`;
}

const bytesOf = (body: string | Uint8Array) => (typeof body === 'string' ? Buffer.from(body) : body);

describe('acceptsGzip: a backend answer\'s Accept-Encoding (RFC 9110 §12.5.3)', () => {
  it('gzip listed, with or without a q-value above 0 -> accepted; listed at q=0 -> not', () => {
    expect(acceptsGzip('gzip')).toBe(true);
    expect(acceptsGzip('gzip;q=0.5')).toBe(true);
    expect(acceptsGzip('br, gzip;q=0.1')).toBe(true);
    expect(acceptsGzip('gzip;q=0')).toBe(false);
    expect(acceptsGzip('gzip;q=0.000')).toBe(false);
    expect(acceptsGzip('br, gzip;q=0')).toBe(false);
  });

  it('`*` -> accepted, unless gzip itself is listed at q=0; `*;q=0` -> not', () => {
    expect(acceptsGzip('*')).toBe(true);
    expect(acceptsGzip('br, *;q=0.3')).toBe(true);
    expect(acceptsGzip('*, gzip;q=0')).toBe(false);
    expect(acceptsGzip('gzip;q=0, *')).toBe(false);
    expect(acceptsGzip('*;q=0')).toBe(false);
    // gzip listed above 0 wins over a `*` at 0.
    expect(acceptsGzip('gzip, *;q=0')).toBe(true);
  });

  it('x-gzip (the alias of gzip) -> accepted; at q=0 -> not', () => {
    expect(acceptsGzip('x-gzip')).toBe(true);
    expect(acceptsGzip('x-gzip;q=0')).toBe(false);
  });

  it('no header, an empty one, or only other codings -> not accepted', () => {
    expect(acceptsGzip(null)).toBe(false);
    expect(acceptsGzip(undefined)).toBe(false);
    expect(acceptsGzip('')).toBe(false);
    expect(acceptsGzip(' , ,')).toBe(false);
    expect(acceptsGzip('identity')).toBe(false);
    expect(acceptsGzip('br, deflate')).toBe(false);
  });

  it('any case, spaces around names and parameters -> read alike', () => {
    expect(acceptsGzip('GZIP')).toBe(true);
    expect(acceptsGzip('  Gzip ; Q=1  ')).toBe(true);
    expect(acceptsGzip('br ,  gZip ;  q=0.8 ')).toBe(true);
    expect(acceptsGzip(' GZIP ; Q=0 ')).toBe(false);
  });

  it('a q-value that is not a number -> read as 0, not as accepted', () => {
    expect(acceptsGzip('gzip;q=high')).toBe(false);
    // Control: the same element with a number is accepted.
    expect(acceptsGzip('gzip;q=1')).toBe(true);
  });
});

describe('encodeRequestBody', () => {
  it('a body below COMPRESS_FROM_BYTES -> as it is, even when the backend takes gzip', () => {
    const json = jsonOf(COMPRESS_FROM_BYTES - 1);
    const encoded = encodeRequestBody(json, true);
    expect(encoded).toEqual({ body: json, contentType: 'application/json', bytes: COMPRESS_FROM_BYTES - 1 });
    expect(encoded.contentEncoding).toBeUndefined();
  });

  it('a body of COMPRESS_FROM_BYTES or more, the backend taking gzip -> gzip\'d, smaller, and it decodes to exactly the JSON', () => {
    for (const size of [COMPRESS_FROM_BYTES, 200 * 1024]) {
      const json = jsonOf(size);
      const encoded = encodeRequestBody(json, true);
      expect(encoded.contentEncoding).toBe(GZIP);
      expect(encoded.contentType).toBe('application/octet-stream');
      expect(encoded.body).toBeInstanceOf(Uint8Array);
      const wire = bytesOf(encoded.body);
      expect(encoded.bytes).toBe(wire.length);
      expect(encoded.bytes).toBeLessThan(size / 10);
      expect(gunzipSync(wire).toString('utf8')).toBe(json);
      expect(decodeRequestBody(wire, encoded.contentEncoding)).toEqual({ ok: true, text: json });
    }
  });

  it('a large body, the backend not (yet) taking gzip -> as it is', () => {
    const json = jsonOf(200 * 1024);
    expect(encodeRequestBody(json, false)).toEqual({ body: json, contentType: 'application/json', bytes: 200 * 1024 });
  });

  it('bytes counts UTF-8 bytes, not characters', () => {
    const json = JSON.stringify({ items: ['é'.repeat(100)] });
    expect(encodeRequestBody(json, true).bytes).toBe(Buffer.byteLength(json));
    expect(encodeRequestBody(json, true).bytes).toBeGreaterThan(json.length);
  });
});

describe('decodeRequestBody', () => {
  const json = JSON.stringify({ clusterId: 'c1', items: [{ name: 'é-ü' }] });

  it('no Content-Encoding, an empty one or identity -> the bytes as UTF-8 text', () => {
    for (const coding of [undefined, null, '', 'identity', ' IDENTITY ']) {
      expect(decodeRequestBody(Buffer.from(json), coding)).toEqual({ ok: true, text: json });
    }
  });

  it('gzip (any case) or x-gzip -> the decoded text', () => {
    const compressed = gzipSync(json);
    for (const coding of ['gzip', 'GZIP', ' gzip ', 'x-gzip']) {
      expect(decodeRequestBody(compressed, coding)).toEqual({ ok: true, text: json });
    }
  });

  it('a coding it does not take (br) -> 415 unsupported_encoding naming it; control: the same bytes as gzip -> decoded', () => {
    const compressed = gzipSync(json);
    const refused = decodeRequestBody(compressed, 'br');
    expect(refused).toMatchObject({ ok: false, status: 415, code: 'unsupported_encoding' });
    expect(!refused.ok && refused.message).toContain('"br"');
    expect(decodeRequestBody(compressed, 'deflate')).toMatchObject({ ok: false, status: 415 });
    expect(decodeRequestBody(compressed, 'gzip')).toEqual({ ok: true, text: json });
  });

  it('corrupt gzip (not gzip, cut short, trailing junk) -> 400 bad_encoding; control: the intact bytes -> decoded', () => {
    const compressed = gzipSync(json);
    const corrupt = [Buffer.from(json), compressed.subarray(0, compressed.length - 6), Buffer.concat([compressed, Buffer.from('junk')])];
    for (const bytes of corrupt) {
      const decoded = decodeRequestBody(bytes, 'gzip');
      expect(decoded).toMatchObject({ ok: false, status: 400, code: 'bad_encoding' });
      expect(!decoded.ok && decoded.message).toMatch(/^the request body is not valid gzip: /);
    }
    expect(decodeRequestBody(compressed, 'gzip')).toEqual({ ok: true, text: json });
  });

  it('a zip bomb (16 MiB of zeros, a few KB gzip\'d) -> 413 body_too_large; control: a body just under 8 MiB -> decoded whole', () => {
    const bomb = gzipSync(Buffer.alloc(16 * 1024 * 1024));
    expect(bomb.length).toBeLessThan(64 * 1024);
    const refused = decodeRequestBody(bomb, 'gzip');
    expect(refused).toMatchObject({ ok: false, status: 413, code: 'body_too_large' });
    expect(!refused.ok && refused.message).toContain(String(MAX_DECODED_REQUEST_BYTES));

    const under = jsonOf(MAX_DECODED_REQUEST_BYTES - 1024);
    const decoded = decodeRequestBody(gzipSync(under), 'gzip');
    expect(decoded.ok).toBe(true);
    expect(decoded.ok && decoded.text).toBe(under);
  });

  it('the bound is what it decodes to: exactly MAX_DECODED_REQUEST_BYTES -> decoded, one byte more -> 413', () => {
    expect(decodeRequestBody(gzipSync(jsonOf(MAX_DECODED_REQUEST_BYTES)), 'gzip').ok).toBe(true);
    expect(decodeRequestBody(gzipSync(jsonOf(MAX_DECODED_REQUEST_BYTES + 1)), 'gzip')).toMatchObject({ ok: false, status: 413 });
  });

  it('a smaller bound given -> held to it, whatever the wire size (incompressible content too)', () => {
    const text = JSON.stringify({ pad: incompressible(4096) });
    const compressed = gzipSync(text);
    expect(decodeRequestBody(compressed, 'gzip', Buffer.byteLength(text) - 1)).toMatchObject({ ok: false, status: 413 });
    expect(decodeRequestBody(compressed, 'gzip', Buffer.byteLength(text))).toEqual({ ok: true, text });
  });
});

describe('docs/upgrade.md states the rules as the code has them', () => {
  it('the bounds, the content type, the parts per item and the hold after a 415', async () => {
    const { readFileSync } = await import('node:fs');
    const { MAX_GZIPPED_PART_BYTES, MAX_GZIPPED_PART_JSON_BYTES, MAX_PARTS_PER_ITEM, MAX_REQUEST_BYTES, GZIP_CONTENT_TYPE } = await import('../../lib/contract/index.js');
    const { GZIP_REFUSED_HOLD_MS } = await import('../../lib/forwarder/backend-client.js');
    const doc = readFileSync(new URL('../../docs/upgrade.md', import.meta.url), 'utf8').replace(/\s+/g, ' ');
    expect(doc).toContain(`bodies of ${COMPRESS_FROM_BYTES / 1024} KiB or more go gzip'd, with \`Content-Type: ${GZIP_CONTENT_TYPE}\``);
    expect(doc).toContain(`up to ${MAX_GZIPPED_PART_JSON_BYTES / 1024 / 1024} MiB of JSON compressing to ${MAX_GZIPPED_PART_BYTES / 1024} KiB`);
    expect(doc).toContain(`up to ${['', 'one', 'two', 'three'][MAX_PARTS_PER_ITEM]} go in one item (\`more\`)`);
    expect(doc).toContain(`${MAX_REQUEST_BYTES / 1024 / 1024} MiB on the bytes as they come`);
    expect(doc).toContain(`${MAX_DECODED_REQUEST_BYTES / 1024 / 1024} MiB on what a gzip'd body decodes to`);
    expect(GZIP_REFUSED_HOLD_MS).toBe(60 * 60 * 1000);
    expect(doc).toContain('gzips nothing for an hour');
  });
});
