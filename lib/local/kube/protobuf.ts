/**
 * Just enough of Kubernetes' protobuf encoding for `kubectl create namespace`, whose typed
 * client sends protobuf bodies unconditionally (client-go only falls back from CBOR, never
 * from protobuf). Everything else kubectl and client-node send is JSON.
 */
import { KubeApiError } from './errors.js';
import type { JsonObject } from './json.js';

const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]); // "k8s\0"

type Fields = Map<number, Buffer[]>;

/** Length-delimited fields by number; other wire types are skipped. */
function fields(buf: Buffer): Fields {
  const out: Fields = new Map();
  let pos = 0;
  const varint = (): number => {
    let result = 0;
    let shift = 0;
    for (;;) {
      if (pos >= buf.length) throw new Error('truncated varint');
      const byte = buf[pos++] as number;
      result += (byte & 0x7f) * 2 ** shift;
      if ((byte & 0x80) === 0) return result;
      shift += 7;
    }
  };
  while (pos < buf.length) {
    const key = varint();
    const field = Math.floor(key / 8);
    switch (key & 7) {
      case 0:
        varint();
        break;
      case 1:
        pos += 8;
        break;
      case 5:
        pos += 4;
        break;
      case 2: {
        const length = varint();
        if (pos + length > buf.length) throw new Error('truncated field');
        const list = out.get(field) ?? [];
        list.push(buf.subarray(pos, pos + length));
        out.set(field, list);
        pos += length;
        break;
      }
      default:
        throw new Error(`unsupported wire type ${key & 7}`);
    }
  }
  return out;
}

const text = (f: Fields, n: number): string | undefined => f.get(n)?.[0]?.toString('utf8');

function stringMap(entries: Buffer[] | undefined): Record<string, string> | undefined {
  if (!entries) return undefined;
  const map: Record<string, string> = {};
  for (const entry of entries) {
    const e = fields(entry);
    map[text(e, 1) ?? ''] = text(e, 2) ?? '';
  }
  return map;
}

/** Decodes a protobuf Namespace (name, generateName, labels, annotations); 415 for anything else. */
export function decodeProtobufObject(body: Buffer): JsonObject {
  const refuse = (why: string): KubeApiError =>
    new KubeApiError('UnsupportedMediaType', `the local API accepts protobuf only for creating namespaces (${why}); send application/json`);
  if (!body.subarray(0, 4).equals(MAGIC)) throw refuse('no k8s envelope');
  let envelope: Fields;
  try {
    envelope = fields(body.subarray(4));
    const typeMeta = fields(envelope.get(1)?.[0] ?? Buffer.alloc(0));
    if (text(typeMeta, 2) !== 'Namespace' || text(typeMeta, 1) !== 'v1') throw refuse(`got ${text(typeMeta, 1)}/${text(typeMeta, 2)}`);
    const namespace = fields(envelope.get(2)?.[0] ?? Buffer.alloc(0));
    const meta = fields(namespace.get(1)?.[0] ?? Buffer.alloc(0));
    const metadata: JsonObject = {};
    const name = text(meta, 1);
    const generateName = text(meta, 2);
    const labels = stringMap(meta.get(11));
    const annotations = stringMap(meta.get(12));
    if (name) metadata.name = name;
    if (generateName) metadata.generateName = generateName;
    if (labels) metadata.labels = labels;
    if (annotations) metadata.annotations = annotations;
    return { apiVersion: 'v1', kind: 'Namespace', metadata };
  } catch (err) {
    if (err instanceof KubeApiError) throw err;
    throw new KubeApiError('BadRequest', `malformed protobuf body: ${(err as Error).message}`);
  }
}

function lengthDelimited(field: number, payload: Buffer): Buffer {
  const bytes: number[] = [(field << 3) | 2];
  for (let n = payload.length; ; n = Math.floor(n / 128)) {
    if (n < 128) {
      bytes.push(n);
      break;
    }
    bytes.push((n % 128) | 0x80);
  }
  return Buffer.concat([Buffer.from(bytes), payload]);
}

/** The media type kubectl asks `/openapi/v2` for (gnostic's protobuf encoding). */
export const OPENAPI_V2_PROTOBUF = 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf';

/**
 * An OpenAPI v2 document with no definitions (gnostic `openapi_v2.Document`: swagger, info,
 * empty paths). kubectl reads v2 for client-side validation of a kind the server's OpenAPI v3
 * does not describe, such as one whose CRD is missing; a kind without a definition is not
 * validated there, so kubectl goes on to say the kind is not served, as against a cluster.
 */
export function emptyOpenApiV2Document(version: string): Buffer {
  const info = Buffer.concat([lengthDelimited(1, Buffer.from('Kubernetes')), lengthDelimited(2, Buffer.from(version))]);
  return Buffer.concat([lengthDelimited(1, Buffer.from('2.0')), lengthDelimited(2, info), lengthDelimited(8, Buffer.alloc(0))]);
}
