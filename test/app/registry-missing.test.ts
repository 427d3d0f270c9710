/**
 * A backend whose registrations file does not exist (`npm run offline` before any
 * `cluster add`) answers 503 `registry_missing` naming the file and the command that creates
 * it — not a 500; a file that exists but lacks the cluster is still 404.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createFileRegistry, DEFAULT_REGISTRY_FILE, registryMissingMessage } from '../../lib/registry/index.js';
import { makeApp, registration, SECRET_C1, signedRequest } from './harness.js';

const body = JSON.stringify({ clusterId: 'c1', items: [] });

async function reconcile(registryFile: string) {
  const { app } = makeApp({ registry: createFileRegistry(registryFile) });
  const { path, ...init } = signedRequest('/v1/clusters/c1/reconcile', body, SECRET_C1);
  const res = await app.request(path, init);
  return { status: res.status, body: (await res.json()) as { error?: { code: string; message: string } } };
}

describe('the registrations file', () => {
  it('missing -> 503 registry_missing naming the file and `npm run cluster -- add <id> --file`', async () => {
    const missing = join(mkdtempSync(join(tmpdir(), 'volhook-registry-')), 'clusters.json');
    const res = await reconcile(missing);
    expect(res.status).toBe(503);
    expect(res.body.error?.code).toBe('registry_missing');
    expect(res.body.error?.message).toContain(`the registrations file ${missing} does not exist`);
    expect(res.body.error?.message).toContain(`npm run cluster -- add <id> --file ${missing}`);
  });

  it('present (control) -> 404 unknown_cluster without the cluster, the request read with it', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'volhook-registry-')), 'clusters.json');
    writeFileSync(file, JSON.stringify({ clusters: {} }));
    expect((await reconcile(file)).status).toBe(404);
    writeFileSync(file, JSON.stringify({ clusters: { c1: registration('c1', SECRET_C1) } }));
    // Registered: past the registry and the signature, refused only for its empty batch.
    expect((await reconcile(file)).body.error?.code).toBe('invalid_request');
  });

  it('the default path -> the command needs no --file', () => {
    expect(registryMissingMessage(DEFAULT_REGISTRY_FILE)).toMatch(/npm run cluster -- add <id>$/);
    expect(registryMissingMessage(`./${DEFAULT_REGISTRY_FILE}`)).toMatch(/npm run cluster -- add <id>$/);
  });
});
