/**
 * `npm run offline` serves the same API through serverless-offline, with no AWS credentials:
 * registrations come from a local file, and a request needing no EC2 call is answered.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gzipSync } from 'node:zlib';
import { GZIP_CONTENT_TYPE, MAX_DECODED_REQUEST_BYTES, sign } from '../../lib/contract/index.js';
import { SECRET_C1 } from '../app/harness.js';
import { startOffline, stopOffline, type Offline } from '../e2e/support/offline.js';

let offline: Offline;
let baseUrl: string;

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'volhook-offline-'));
  const registryFile = join(dir, 'clusters.json');
  writeFileSync(registryFile, JSON.stringify({ clusters: { c1: { clusterId: 'c1', secrets: [SECRET_C1], region: 'us-east-1' } } }));
  offline = await startOffline({ dir, registryFile });
  baseUrl = offline.baseUrl;
}, 150_000);

afterAll(() => stopOffline(offline), 20_000);

describe('npm run offline (no AWS credentials, registry file)', () => {
  it('GET /healthz -> 200', async () => {
    const res = await fetch(`${baseUrl}/healthz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok' });
  }, 60_000);

  it('signed reconcile of a registered cluster -> 200 with a result per item', async () => {
    const body = JSON.stringify({ clusterId: 'c1', items: [{ kind: 'PersistentVolumeClaimDeleted', uid: '0b7c9d52-7a3e-4f0e-9c61-3e2f8a4d5b16', namespace: 'default', name: 'data', pvExists: true }] });
    const res = await fetch(`${baseUrl}/v1/clusters/c1/reconcile`, { method: 'POST', body, headers: { 'content-type': 'application/json', ...sign(body, SECRET_C1) } });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ results: [{ key: 'PersistentVolumeClaimDeleted/0b7c9d52-7a3e-4f0e-9c61-3e2f8a4d5b16', outcome: 'done', writes: [] }] });
  }, 60_000);

  it('the same reconcile gzip\'d (Content-Encoding: gzip, as the forwarder sends it) -> 200 with the same result and Accept-Encoding: gzip', async () => {
    const body = JSON.stringify({ clusterId: 'c1', items: [{ kind: 'PersistentVolumeClaimDeleted', uid: '1c8d0e63-8b4f-4a1f-8d72-4f3a9b5e6c27', namespace: 'default', name: 'data', pvExists: true }] });
    const res = await fetch(`${baseUrl}/v1/clusters/c1/reconcile`, {
      method: 'POST',
      body: gzipSync(body),
      headers: { 'content-type': GZIP_CONTENT_TYPE, 'content-encoding': 'gzip', ...sign(body, SECRET_C1) },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('accept-encoding')).toBe('gzip');
    expect(await res.json()).toEqual({ results: [{ key: 'PersistentVolumeClaimDeleted/1c8d0e63-8b4f-4a1f-8d72-4f3a9b5e6c27', outcome: 'done', writes: [] }] });
  }, 60_000);

  it('a gzip\'d body labelled application/json is passed to the function as text (serverless-offline, as API Gateway may) -> 415, which the forwarder answers by sending it as it is', async () => {
    const body = JSON.stringify({ clusterId: 'c1', items: [] });
    const res = await fetch(`${baseUrl}/v1/clusters/c1/reconcile`, {
      method: 'POST',
      body: gzipSync(body),
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip', ...sign(body, SECRET_C1) },
    });
    expect(res.status).toBe(415);
    expect(res.headers.get('accept-encoding')).toBeNull();
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('unsupported_encoding');
  }, 60_000);

  it('a zip bomb (a reconcile body decoding past MAX_DECODED_REQUEST_BYTES) -> 413 body_too_large', async () => {
    const body = `{"clusterId":"c1","items":[],"padding":"${' '.repeat(MAX_DECODED_REQUEST_BYTES)}"}`;
    const res = await fetch(`${baseUrl}/v1/clusters/c1/reconcile`, {
      method: 'POST',
      body: gzipSync(body),
      headers: { 'content-type': GZIP_CONTENT_TYPE, 'content-encoding': 'gzip', ...sign(body, SECRET_C1) },
    });
    expect(res.status).toBe(413);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('body_too_large');
  }, 60_000);

  it('unknown cluster -> 404', async () => {
    const body = JSON.stringify({ clusterId: 'c9', items: [] });
    const res = await fetch(`${baseUrl}/v1/clusters/c9/reconcile`, { method: 'POST', body, headers: { 'content-type': 'application/json', ...sign(body, SECRET_C1) } });
    expect(res.status).toBe(404);
  }, 60_000);
});

describe('npm run offline with no registrations file', () => {
  let bare: Offline;
  let missing: string;
  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'volhook-offline-bare-'));
    missing = join(dir, 'clusters.json');
    bare = await startOffline({ dir, registryFile: missing });
  }, 150_000);
  afterAll(() => stopOffline(bare), 20_000);

  it('starts -> a warning naming the file and `npm run cluster -- add`', () => {
    const before = bare.output().slice(0, bare.output().indexOf('Server ready'));
    expect(before).toContain(`WARNING: no cluster is registered: the registrations file ${missing} does not exist`);
    expect(before).toContain(`npm run cluster -- add <id> --file ${missing}`);
    // The control: with the file there, no such warning.
    expect(offline.output()).not.toContain('no cluster is registered');
  });

  it('signed reconcile -> 503 registry_missing naming the file and the command, not 500', async () => {
    const body = JSON.stringify({ clusterId: 'c1', items: [] });
    const res = await fetch(`${bare.baseUrl}/v1/clusters/c1/reconcile`, { method: 'POST', body, headers: { 'content-type': 'application/json', ...sign(body, SECRET_C1) } });
    const answer = (await res.json()) as { error: { code: string; message: string } };
    expect(res.status, JSON.stringify(answer)).toBe(503);
    expect(answer.error.code).toBe('registry_missing');
    expect(answer.error.message).toContain(missing);
    expect(answer.error.message).toContain('npm run cluster -- add <id>');
  }, 60_000);
});
