/**
 * Just enough of Kubernetes' protobuf encoding for the typed clients that send protobuf bodies
 * unconditionally (client-go only falls back from CBOR, never from protobuf): `kubectl create
 * namespace`, and Helm's release storage, which creates and updates Secrets. Everything else
 * kubectl, helm and client-node send is JSON.
 */
import { KubeApiError } from './errors.js';
import type { JsonObject } from './json.js';

const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]); // "k8s\0"

type Fields = Map<number, Buffer[]>;

/**
 * Fields by number: a length-delimited one as its bytes; a number (varint, fixed) as one byte,
 * 0xff (which parses as no message) when it is not zero, or none when it is — enough to tell a
 * field that holds something.
 */
function fields(buf: Buffer): Fields {
  const out: Fields = new Map();
  const add = (field: number, value: Buffer) => out.set(field, [...(out.get(field) ?? []), value]);
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
    const number = (value: boolean) => add(field, value ? Buffer.from([0xff]) : Buffer.alloc(0));
    const fixed = (size: number) => {
      if (pos + size > buf.length) throw new Error('truncated field');
      number(buf.subarray(pos, pos + size).some((b) => b !== 0));
      pos += size;
    };
    switch (key & 7) {
      case 0:
        number(varint() !== 0);
        break;
      case 1:
        fixed(8);
        break;
      case 5:
        fixed(4);
        break;
      case 2: {
        const length = varint();
        if (pos + length > buf.length) throw new Error('truncated field');
        add(field, buf.subarray(pos, pos + length));
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

/** Whether bytes say nothing: empty, or a message whose every field says nothing (Namespace's status with its phase ""). */
function saysNothing(bytes: Buffer): boolean {
  if (bytes.length === 0) return true;
  try {
    return [...fields(bytes).values()].every((values) => values.every(saysNothing));
  } catch {
    return false;
  }
}

/**
 * The fields of `f` other than `read` that hold something. Go's protobuf encoding writes every
 * string and message field, empty ones too (selfLink "", a zero creationTimestamp): those say nothing.
 */
const unread = (f: Fields, read: number[]): number[] => [...f.entries()].filter(([n, values]) => !read.includes(n) && !values.every(saysNothing)).map(([n]) => n);

function stringMap(entries: Buffer[] | undefined, value: (bytes: Buffer) => string = (b) => b.toString('utf8')): Record<string, string> | undefined {
  if (!entries) return undefined;
  const map: Record<string, string> = {};
  for (const entry of entries) {
    const e = fields(entry);
    map[text(e, 1) ?? ''] = value(e.get(2)?.[0] ?? Buffer.alloc(0));
  }
  return map;
}

/**
 * ObjectMeta's fields a create or an update carries (name, generateName, namespace, uid,
 * resourceVersion, labels, annotations, finalizers). The rest — owner references, managed
 * fields, timestamps — refuse the body: nothing here could say what they hold.
 */
function objectMeta(meta: Fields): JsonObject {
  const ignored = unread(meta, [1, 2, 3, 5, 6, 11, 12, 14]);
  if (ignored.length > 0) throw new KubeApiError('UnsupportedMediaType', `the local API's protobuf decoding does not read ObjectMeta field(s) ${ignored.join(', ')}; send application/json`);
  const metadata: JsonObject = {};
  const scalars = { name: 1, generateName: 2, namespace: 3, uid: 5, resourceVersion: 6 } as const;
  for (const [key, n] of Object.entries(scalars)) {
    const value = text(meta, n);
    if (value) metadata[key] = value;
  }
  const labels = stringMap(meta.get(11));
  const annotations = stringMap(meta.get(12));
  const finalizers = meta.get(14)?.map((b) => b.toString('utf8'));
  if (labels) metadata.labels = labels;
  if (annotations) metadata.annotations = annotations;
  if (finalizers) metadata.finalizers = finalizers;
  return metadata;
}

/** The kinds decoded: their fields beside metadata (field 1), each read or refused. */
const KINDS: Record<string, (object: Fields) => JsonObject> = {
  Namespace: (ns) => {
    if (unread(ns, [1]).length > 0) throw new KubeApiError('UnsupportedMediaType', 'the local API decodes a protobuf Namespace with metadata only; send application/json');
    return {};
  },
  // v1.Secret: data (2, bytes, which JSON carries in base64), type (3), stringData (4).
  Secret: (secret) => {
    const unknown = unread(secret, [1, 2, 3, 4]);
    if (unknown.length > 0) throw new KubeApiError('UnsupportedMediaType', `the local API's protobuf decoding does not read Secret field(s) ${unknown.join(', ')}; send application/json`);
    const out: JsonObject = {};
    const data = stringMap(secret.get(2), (bytes) => bytes.toString('base64'));
    const stringData = stringMap(secret.get(4));
    const type = text(secret, 3);
    if (data) out.data = data;
    if (stringData) out.stringData = stringData;
    if (type) out.type = type;
    return out;
  },
};

/** Decodes a protobuf v1 Namespace or Secret (see KINDS); 415 for anything else. */
export function decodeProtobufObject(body: Buffer): JsonObject {
  const refuse = (why: string): KubeApiError =>
    new KubeApiError('UnsupportedMediaType', `the local API accepts protobuf only for namespaces and secrets (${why}); send application/json`);
  if (!body.subarray(0, 4).equals(MAGIC)) throw refuse('no k8s envelope');
  let envelope: Fields;
  try {
    envelope = fields(body.subarray(4));
    const typeMeta = fields(envelope.get(1)?.[0] ?? Buffer.alloc(0));
    const kind = text(typeMeta, 2) ?? '';
    const decode = KINDS[kind];
    if (!decode || text(typeMeta, 1) !== 'v1') throw refuse(`got ${text(typeMeta, 1)}/${text(typeMeta, 2)}`);
    const object = fields(envelope.get(2)?.[0] ?? Buffer.alloc(0));
    const metadata = objectMeta(fields(object.get(1)?.[0] ?? Buffer.alloc(0)));
    return { apiVersion: 'v1', kind, metadata, ...decode(object) };
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

/**
 * A protobuf DeleteOptions (Helm purges its release Secrets with one) as the JSON body would
 * carry it: preconditions (uid, resourceVersion) and dryRun — what a JSON DeleteOptions is
 * read for (handlers.ts). Anything but a DeleteOptions is refused.
 */
export function decodeProtobufDeleteOptions(body: Buffer): JsonObject {
  if (!body.subarray(0, 4).equals(MAGIC)) throw new KubeApiError('UnsupportedMediaType', 'a protobuf DeleteOptions without the k8s envelope; send application/json');
  try {
    const envelope = fields(body.subarray(4));
    const typeMeta = fields(envelope.get(1)?.[0] ?? Buffer.alloc(0));
    if (text(typeMeta, 2) !== 'DeleteOptions') throw new KubeApiError('UnsupportedMediaType', `a protobuf ${text(typeMeta, 2)} where DeleteOptions belong; send application/json`);
    const options = fields(envelope.get(2)?.[0] ?? Buffer.alloc(0));
    const out: JsonObject = {};
    const preconditions = options.get(2)?.[0];
    if (preconditions && preconditions.length > 0) {
      const p = fields(preconditions);
      const set: JsonObject = {};
      if (text(p, 1)) set.uid = text(p, 1)!;
      if (text(p, 2)) set.resourceVersion = text(p, 2)!;
      out.preconditions = set;
    }
    const dryRun = options.get(5)?.map((b) => b.toString('utf8'));
    if (dryRun) out.dryRun = dryRun;
    return out;
  } catch (err) {
    if (err instanceof KubeApiError) throw err;
    throw new KubeApiError('BadRequest', `malformed protobuf body: ${(err as Error).message}`);
  }
}
