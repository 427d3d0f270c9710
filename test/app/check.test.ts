/**
 * `POST /v1/clusters/{id}/check` (lib/contract/check.ts): verified as a reconcile request is —
 * the contract, the registration, the signature, the webhook id, the body's cluster — and
 * nothing done. Each refusal has its control: the same check signed right, accepted.
 */
import { describe, expect, it } from 'vitest';
import { makeApp, NOW_MS, registration, SECRET_C1, SECRET_C2, signedRequest } from './harness.js';

const CURRENT = { contract: 2, forwarderVersion: '0.2.0' };

function harness() {
  const { app, ec2Mock } = makeApp({ now: () => NOW_MS });
  const send = async (clusterId: string, secret: string, options: Parameters<typeof signedRequest>[3] & { body?: string } = {}) => {
    const { path, ...init } = signedRequest(`/v1/clusters/${clusterId}/check`, options.body ?? JSON.stringify({ clusterId }), secret, { versions: CURRENT, ...options });
    const res = await app.request(path, init);
    return { status: res.status, body: (await res.json()) as { error?: { code: string }; accepted?: boolean } };
  };
  return { send, ec2Calls: () => ec2Mock.calls().length };
}

describe('the check', () => {
  it('signed right -> 200 accepted, naming the features it serves (group snapshots), nothing done (no EC2 call)', async () => {
    const h = harness();
    expect(await h.send('c1', SECRET_C1)).toEqual({ status: 200, body: { clusterId: 'c1', accepted: true, serves: ['groupSnapshots'] } });
    expect(h.ec2Calls()).toBe(0);
  });

  it("another cluster's secret -> 401 bad_signature; an unregistered cluster -> 404 unknown_cluster; a contract not served -> 426", async () => {
    const h = harness();
    expect(await h.send('c1', SECRET_C2)).toMatchObject({ status: 401, body: { error: { code: 'bad_signature' } } });
    expect(await h.send('c9', SECRET_C1)).toMatchObject({ status: 404, body: { error: { code: 'unknown_cluster' } } });
    expect(await h.send('c1', SECRET_C1, { versions: { contract: 99, forwarderVersion: '9.0.0' } })).toMatchObject({ status: 426, body: { error: { code: 'unsupported_contract' } } });
    expect(await h.send('c1', SECRET_C1)).toMatchObject({ status: 200, body: { accepted: true } });
  });

  it("a body signed for another cluster -> 401 cluster_mismatch; a replayed id -> 409", async () => {
    const h = harness();
    expect(await h.send('c1', SECRET_C1, { body: JSON.stringify({ clusterId: 'c2' }) })).toMatchObject({ status: 401, body: { error: { code: 'cluster_mismatch' } } });
    expect(await h.send('c1', SECRET_C1, { id: 'msg_check_1' })).toMatchObject({ status: 200 });
    expect(await h.send('c1', SECRET_C1, { id: 'msg_check_1' })).toMatchObject({ status: 409, body: { error: { code: 'replayed' } } });
  });
});

/** The check refuses what reconcile cannot serve: the registration's one schema, and the backend's means. */
describe('the check: a registration reconcile cannot serve', () => {
  const direct = registration('d1', SECRET_C1, { writeBack: 'direct' });
  const directWithServer = registration('d2', SECRET_C1, { writeBack: 'direct', kubernetes: { server: 'https://127.0.0.1:6443' } });
  const check = async (app: ReturnType<typeof makeApp>['app'], clusterId: string) => {
    const { path, ...init } = signedRequest(`/v1/clusters/${clusterId}/check`, JSON.stringify({ clusterId }), SECRET_C1, { versions: CURRENT });
    const res = await app.request(path, init);
    return { status: res.status, body: (await res.json()) as { error?: { code: string; message: string }; accepted?: boolean } };
  };

  it('writeBack: direct without kubernetes.server -> 403 registration_invalid naming kubernetes.server; with it -> accepted', async () => {
    const { app } = makeApp({ now: () => NOW_MS, applyDirect: async () => {} }, [direct, directWithServer]);
    const refused = await check(app, 'd1');
    expect(refused).toMatchObject({ status: 403, body: { error: { code: 'registration_invalid' } } });
    expect(refused.body.error?.message).toMatch(/registration of cluster "d1" is malformed:[\s\S]*is required with writeBack: direct[\s\S]*→ at kubernetes\.server/);
    expect(await check(app, 'd2')).toEqual({ status: 200, body: { clusterId: 'd2', accepted: true, serves: ['groupSnapshots'] } });
  });

  it('writeBack: direct on a backend that cannot apply writes itself -> 403 as reconcile answers; writeBack: forwarder there -> accepted', async () => {
    const { app } = makeApp({ now: () => NOW_MS }, [directWithServer]);
    expect(await check(app, 'd2')).toMatchObject({ status: 403, body: { error: { code: 'registration_invalid', message: 'cluster "d2" uses writeBack: direct, which this backend does not support' } } });
    expect(await check(app, 'c1')).toMatchObject({ status: 200, body: { accepted: true } });
  });
});
