/**
 * What a caller without the cluster's secret learns (docs/deploy.md, "Security: what a caller
 * without the secret learns"): the backend answers before it can verify anything that a cluster id is
 * registered (401), not registered (404), or registered unusably (403), on both signed routes,
 * whether the request carries no signature at all or a wrong one — the forwarder explains its
 * refusals by these codes, and a forwarder with a wrong secret is such a caller. What it never
 * learns: anything done (no EC2 call) or a registration's secret.
 */
import { describe, expect, it } from 'vitest';
import { sign } from '../../lib/contract/index.js';
import { makeApp, NOW_MS, registration, SECRET_C1, SECRET_C2 } from './harness.js';

const SECRET_BROKEN = 'whsec_' + Buffer.from('broken-registration-secret-0123').toString('base64');
// A registration whose secret is fine and whose Region is not: refused whole, before verification.
const broken = { ...registration('c5', SECRET_BROKEN), region: 42 };

// An item that needs no EC2 call: a claim deleted whose PV is still there.
const DELETED_CLAIM = { kind: 'PersistentVolumeClaimDeleted', uid: '0b7c9d52-7a3e-4f0e-9c61-3e2f8a4d5b16', namespace: 'default', name: 'data', pvExists: true };

type HeadersFor = (body: string) => Record<string, string>;

async function post(app: ReturnType<typeof makeApp>['app'], clusterId: string, route: 'check' | 'reconcile', headersFor: HeadersFor) {
  const body = JSON.stringify(route === 'check' ? { clusterId } : { clusterId, items: [DELETED_CLAIM] });
  const res = await app.request(`/v1/clusters/${clusterId}/${route}`, { method: 'POST', body, headers: { 'content-type': 'application/json', ...headersFor(body) } });
  return { status: res.status, body: (await res.json()) as { error?: { code: string; message: string } } };
}

const callers: Record<string, HeadersFor> = {
  unsigned: () => ({}),
  'signed with another secret': (body: string) => sign(body, SECRET_C2, { now: Math.floor(NOW_MS / 1000) }),
};

describe.each(['check', 'reconcile'] as const)('POST /v1/clusters/<id>/%s from a caller without the secret', (route) => {
  it.each(Object.keys(callers))('%s -> 401 for a registered id, 404 for an unregistered one, 403 for a broken registration (without its secret); no EC2 call', async (caller) => {
    const { app, ec2Mock } = makeApp({}, [broken]);
    const headersFor = callers[caller]!;
    const registered = await post(app, 'c1', route, headersFor);
    const unregistered = await post(app, 'c9', route, headersFor);
    const unusable = await post(app, 'c5', route, headersFor);
    expect([registered.status, registered.body.error?.code]).toEqual([401, 'bad_signature']);
    expect([unregistered.status, unregistered.body.error?.code]).toEqual([404, 'unknown_cluster']);
    expect([unusable.status, unusable.body.error?.code]).toEqual([403, 'registration_invalid']);
    expect(JSON.stringify(unusable.body)).not.toContain(SECRET_BROKEN);
    expect(JSON.stringify(unusable.body)).not.toContain(SECRET_BROKEN.slice('whsec_'.length));
    expect(ec2Mock.calls()).toEqual([]);
  });

  it('control: signed with the registration\'s secret -> 200', async () => {
    const { app } = makeApp({}, [broken]);
    expect((await post(app, 'c1', route, (body) => sign(body, SECRET_C1, { now: Math.floor(NOW_MS / 1000) }))).status).toBe(200);
  });
});
