/** Which refused requests count for the audit (lib/reports/refusals.ts), and how a store records them. */
import { describe, expect, it } from 'vitest';
import { createMemoryReportStore, noteRefusal, recordsRefusal, REFUSAL_RECORD_INTERVAL_MS, refusalOf } from '../../lib/reports/index.js';

describe('refusalOf', () => {
  it('a refused request on a cluster\'s reconcile or check route -> counted for that cluster, whatever the refusal (signature, registration, contract, size, body, internal)', () => {
    for (const [status, code] of [
      [401, 'bad_signature'],
      [401, 'cluster_mismatch'],
      [403, 'registration_invalid'],
      [404, 'unknown_cluster'],
      [400, 'bad_version_headers'],
      [400, 'malformed_json'],
      [413, 'body_too_large'],
      [422, 'invalid_request'],
      [426, 'contract_unsupported'],
      [500, 'internal'],
      [503, 'registry_missing'],
    ] as const) {
      expect(refusalOf('/v1/clusters/alpha/reconcile', status, code, 7), code).toEqual({ clusterId: 'alpha', refusal: { at: 7, status, code } });
      expect(refusalOf('/v1/clusters/alpha/check', status, code, 7), code).toEqual({ clusterId: 'alpha', refusal: { at: 7, status, code } });
    }
  });

  it('a replayed webhook id (accepted once already), an answer not a refusal, another route, or no valid cluster id -> not counted', () => {
    expect(refusalOf('/v1/clusters/alpha/reconcile', 409, 'replayed', 7)).toBeUndefined();
    expect(refusalOf('/v1/clusters/alpha/reconcile', 200, 'ok', 7)).toBeUndefined();
    expect(refusalOf('/healthz', 500, 'internal', 7)).toBeUndefined();
    expect(refusalOf('/v1/clusters/alpha/other', 401, 'bad_signature', 7)).toBeUndefined();
    expect(refusalOf('/v1/clusters/Not_An_Id!/reconcile', 400, 'bad_cluster_id', 7)).toBeUndefined();
  });

  it('recordsRefusal: none held, or the held one the interval older -> recorded; within the interval -> not', () => {
    expect(recordsRefusal(undefined, 1)).toBe(true);
    expect(recordsRefusal({ at: 1000, status: 401, code: 'bad_signature' }, 1000 + REFUSAL_RECORD_INTERVAL_MS)).toBe(true);
    expect(recordsRefusal({ at: 1000, status: 401, code: 'bad_signature' }, 999 + REFUSAL_RECORD_INTERVAL_MS)).toBe(false);
  });
});

describe('noteRefusal', () => {
  it('records a counted refusal; a store that fails -> told on stderr, never thrown (the answer goes out)', async () => {
    const store = createMemoryReportStore();
    await store.put({ clusterId: 'alpha', digest: 'a'.repeat(64), observedAt: 1, receivedAt: 1, report: { volumes: [], attachments: [], claims: [] } });
    await noteRefusal(store, { path: '/v1/clusters/alpha/reconcile', status: 401, code: 'bad_signature', at: 50 });
    expect(await store.lastRefusal('alpha')).toEqual({ at: 50, status: 401, code: 'bad_signature' });
    const lines: string[] = [];
    const original = console.error;
    console.error = (line: string) => void lines.push(line);
    try {
      await noteRefusal({ refused: () => Promise.reject(new Error('table unreachable')) }, { path: '/v1/clusters/alpha/check', status: 401, code: 'bad_signature', at: 60 });
    } finally {
      console.error = original;
    }
    expect(lines.map((l) => JSON.parse(l))).toEqual([{ level: 'ERROR', message: 'refusal not recorded', clusterId: 'alpha', error: 'table unreachable' }]);
  });
});
