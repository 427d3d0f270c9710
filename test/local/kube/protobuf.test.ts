/** The protobuf bodies the local API decodes (helm's release Secrets, kubectl's namespaces, DeleteOptions), and what it refuses. */
import { describe, expect, it } from 'vitest';
import { decodeProtobufDeleteOptions, decodeProtobufObject } from '../../../lib/local/kube/protobuf.js';

const varint = (n: number): number[] => {
  const out: number[] = [];
  for (; n >= 128; n = Math.floor(n / 128)) out.push((n % 128) | 0x80);
  out.push(n);
  return out;
};
const bytes = (field: number, payload: Buffer | string): Buffer => {
  const body = typeof payload === 'string' ? Buffer.from(payload) : payload;
  return Buffer.concat([Buffer.from([(field << 3) | 2, ...varint(body.length)]), body]);
};
const number = (field: number, value: number): Buffer => Buffer.from([(field << 3) | 0, ...varint(value)]);
const entry = (field: number, key: string, value: Buffer | string) => bytes(field, Buffer.concat([bytes(1, key), bytes(2, value)]));
/** The k8s envelope: magic, TypeMeta (apiVersion, kind), the object. */
const envelope = (kind: string, object: Buffer, apiVersion = 'v1') =>
  Buffer.concat([Buffer.from('k8s\0', 'latin1'), bytes(1, Buffer.concat([bytes(1, apiVersion), bytes(2, kind)])), bytes(2, object)]);

/** ObjectMeta as Go writes it: every string field, empty ones too, and a zero creationTimestamp. */
const meta = (name: string, extra: Buffer[] = []) =>
  bytes(1, Buffer.concat([bytes(1, name), bytes(2, ''), bytes(3, 'volhook-system'), bytes(4, ''), bytes(5, ''), bytes(6, ''), number(7, 0), bytes(8, Buffer.alloc(0)), entry(11, 'owner', 'helm'), bytes(15, ''), ...extra]));

describe('decodeProtobufObject', () => {
  it("a Secret as helm writes one -> its metadata, type and data (bytes, as JSON's base64)", () => {
    const release = Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0xff]);
    const secret = Buffer.concat([meta('sh.helm.release.v1.x.v1'), entry(2, 'release', release), bytes(3, 'helm.sh/release.v1')]);
    expect(decodeProtobufObject(envelope('Secret', secret))).toEqual({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'sh.helm.release.v1.x.v1', namespace: 'volhook-system', labels: { owner: 'helm' } },
      type: 'helm.sh/release.v1',
      data: { release: release.toString('base64') },
    });
  });

  it('a field it does not read, holding something -> 415 naming it; the same field empty passes', () => {
    const secret = (immutable: number) => Buffer.concat([meta('s'), number(5, immutable)]);
    expect(() => decodeProtobufObject(envelope('Secret', secret(1)))).toThrow(/does not read Secret field\(s\) 5/);
    expect(decodeProtobufObject(envelope('Secret', secret(0)))).toMatchObject({ kind: 'Secret', metadata: { name: 's' } });
    const owned = Buffer.concat([meta('s', [bytes(13, Buffer.concat([bytes(1, 'v1'), bytes(2, 'ConfigMap')]))])]);
    expect(() => decodeProtobufObject(envelope('Secret', owned))).toThrow(/does not read ObjectMeta field\(s\) 13/);
  });

  it('a kind it does not decode -> 415 naming it; a Namespace with an empty status decodes', () => {
    expect(() => decodeProtobufObject(envelope('ConfigMap', meta('c')))).toThrow(/accepts protobuf only for namespaces and secrets \(got v1\/ConfigMap\)/);
    const namespace = Buffer.concat([meta('team-a'), bytes(2, Buffer.alloc(0)), bytes(3, bytes(1, ''))]);
    expect(decodeProtobufObject(envelope('Namespace', namespace))).toMatchObject({ kind: 'Namespace', metadata: { name: 'team-a' } });
    const terminating = Buffer.concat([meta('team-a'), bytes(3, bytes(1, 'Terminating'))]);
    expect(() => decodeProtobufObject(envelope('Namespace', terminating))).toThrow(/metadata only/);
  });
});

describe('decodeProtobufDeleteOptions', () => {
  it('preconditions and dryRun read; another kind refused', () => {
    const options = Buffer.concat([number(1, 0), bytes(2, Buffer.concat([bytes(1, 'uid-1'), bytes(2, '42')])), bytes(5, 'All')]);
    expect(decodeProtobufDeleteOptions(envelope('DeleteOptions', options))).toEqual({ preconditions: { uid: 'uid-1', resourceVersion: '42' }, dryRun: ['All'] });
    expect(decodeProtobufDeleteOptions(envelope('DeleteOptions', number(1, 0)))).toEqual({});
    expect(() => decodeProtobufDeleteOptions(envelope('Secret', meta('s')))).toThrow(/protobuf Secret where DeleteOptions belong/);
  });
});
