/**
 * Replays do nothing (issue 8, point 4): a webhook id is acted on once within the signature
 * window, and the signed body names the cluster, so a request signed for one cluster cannot
 * act on another's path even when both share a secret. Every refusal makes no EC2 call.
 */
import { createHmac } from 'node:crypto';
import { CreateVolumeCommand, DescribeVolumesCommand } from '@aws-sdk/client-ec2';
import { afterEach, describe, expect, it } from 'vitest';
import { SIGNATURE_TOLERANCE_SECONDS } from '../../lib/contract/index.js';
import { fixtureBody, makeApp, NOW_MS, registration, SECRET_C1, SECRET_C2, signedRequest } from './harness.js';

type Harness = ReturnType<typeof makeApp>;
const NOW_S = NOW_MS / 1000;
const PATH = '/v1/clusters/c1/reconcile';

let harness: Harness | undefined;
afterEach(() => {
  harness?.ec2Mock.restore();
  harness = undefined;
});

/** The harness's app with a clock the test moves; EC2 answers as for a claim whose disk is being made. */
function appAt(clock: { ms: number }, registrations: unknown[] = []): Harness {
  harness = makeApp({ now: () => clock.ms }, registrations);
  harness.ec2Mock.on(DescribeVolumesCommand).resolves({ Volumes: [] });
  harness.ec2Mock.on(CreateVolumeCommand).resolves({ VolumeId: 'vol-0123456789abcdef0', AvailabilityZone: 'us-east-1a', Size: 20, State: 'creating', VolumeType: 'gp3' });
  return harness;
}

async function send(app: Harness['app'], req: ReturnType<typeof signedRequest>) {
  const { path, ...init } = req;
  const res = await app.request(path, init);
  return { status: res.status, body: (await res.json()) as { error?: { code: string; message: string }; results?: unknown[] } };
}

describe('a captured request sent again', () => {
  it('same id, same signature, 20 s later -> 409 replayed, and no EC2 call', async () => {
    const clock = { ms: NOW_MS };
    const { app, ec2Mock } = appAt(clock);
    const captured = signedRequest(PATH, fixtureBody, SECRET_C1, { nowSeconds: NOW_S });

    expect((await send(app, captured)).status).toBe(200);
    ec2Mock.resetHistory();

    clock.ms = NOW_MS + 20_000;
    const replayed = await send(app, captured);
    expect(replayed.status).toBe(409);
    expect(replayed.body.error?.code).toBe('replayed');
    expect(replayed.body.error?.message).toContain((captured.headers as Record<string, string>)['webhook-id']);
    expect(ec2Mock.calls()).toEqual([]);

    // It is the id that is refused, not the content: the forwarder's retry signs anew.
    expect((await send(app, signedRequest(PATH, fixtureBody, SECRET_C1, { nowSeconds: NOW_S + 20 }))).status).toBe(200);
  });

  it('replayed at the last second of the window -> still 409; one second later -> 401 for its timestamp', async () => {
    const clock = { ms: NOW_MS };
    const { app, ec2Mock } = appAt(clock);
    const captured = signedRequest(PATH, fixtureBody, SECRET_C1, { nowSeconds: NOW_S });
    expect((await send(app, captured)).status).toBe(200);
    ec2Mock.resetHistory();

    clock.ms = NOW_MS + SIGNATURE_TOLERANCE_SECONDS * 1000;
    expect((await send(app, captured)).status).toBe(409);

    clock.ms = NOW_MS + (SIGNATURE_TOLERANCE_SECONDS + 1) * 1000;
    const late = await send(app, captured);
    expect(late.status).toBe(401);
    expect(late.body.error?.code).toBe('bad_signature');
    expect(late.body.error?.message).toMatch(/301 s old/);
    expect(ec2Mock.calls()).toEqual([]);
  });

  it('signed 5 minutes ahead, replayed 9 minutes later -> still 409: the id is kept as long as its timestamp is accepted', async () => {
    const clock = { ms: NOW_MS };
    const { app, ec2Mock } = appAt(clock);
    const captured = signedRequest(PATH, fixtureBody, SECRET_C1, { nowSeconds: NOW_S + SIGNATURE_TOLERANCE_SECONDS });
    expect((await send(app, captured)).status).toBe(200);
    ec2Mock.resetHistory();

    clock.ms = NOW_MS + 9 * 60_000;
    expect((await send(app, captured)).status).toBe(409);
    expect(ec2Mock.calls()).toEqual([]);
  });

  it('a forged request carrying a genuine id first -> 401, and the genuine request is still accepted', async () => {
    const { app } = appAt({ ms: NOW_MS });
    const genuine = signedRequest(PATH, fixtureBody, SECRET_C1);
    const forged = { ...genuine, headers: { ...(genuine.headers as Record<string, string>), 'webhook-signature': 'v1,Zm9yZ2VkLXNpZ25hdHVyZQ==' } };
    expect((await send(app, forged)).status).toBe(401);
    expect((await send(app, genuine)).status).toBe(200);
  });

  it('the same webhook id for two clusters -> each accepted once: ids are kept per cluster', async () => {
    const { app } = appAt({ ms: NOW_MS });
    const bodyOfC2 = fixtureBody.replace('"clusterId": "c1"', '"clusterId": "c2"');
    const forC1 = signedRequest(PATH, fixtureBody, SECRET_C1, { id: 'msg_same_id' });
    const forC2 = signedRequest('/v1/clusters/c2/reconcile', bodyOfC2, SECRET_C2, { id: 'msg_same_id' });
    expect((await send(app, forC1)).status).toBe(200);
    expect((await send(app, forC2)).status).toBe(200);
    expect((await send(app, forC1)).status).toBe(409);
    expect((await send(app, forC2)).status).toBe(409);
  });
});

describe('the signed body names the cluster', () => {
  const SHARED = 'whsec_' + Buffer.from('a-secret-two-clusters-share-0123').toString('base64');
  const shared = [registration('a', SHARED), registration('b', SHARED)];

  it("cluster A's request, signed with the secret A and B share, sent to B's path -> 401 cluster_mismatch naming both, no EC2 call", async () => {
    const { app, ec2Mock } = appAt({ ms: NOW_MS }, shared);
    const bodyOfA = fixtureBody.replace('"clusterId": "c1"', '"clusterId": "a"');
    expect((await send(app, signedRequest('/v1/clusters/a/reconcile', bodyOfA, SHARED))).status).toBe(200);
    ec2Mock.resetHistory();

    const res = await send(app, signedRequest('/v1/clusters/b/reconcile', bodyOfA, SHARED));
    expect(res.status).toBe(401);
    expect(res.body.error?.code).toBe('cluster_mismatch');
    expect(res.body.error?.message).toMatch(/"a".*"b"/);
    expect(ec2Mock.calls()).toEqual([]);
  });

  it('a body without clusterId -> 422 naming the field, no EC2 call', async () => {
    const { app, ec2Mock } = appAt({ ms: NOW_MS });
    const body = JSON.parse(fixtureBody);
    delete body.clusterId;
    const res = await send(app, signedRequest(PATH, JSON.stringify(body), SECRET_C1));
    expect(res.status).toBe(422);
    expect(res.body.error?.message).toMatch(/→ at clusterId$/m);
    expect(ec2Mock.calls()).toEqual([]);
  });
});

describe('an empty HMAC key (issue 8, point 6)', () => {
  /** Headers a client with an empty key would send: `sign` itself refuses to make them. */
  function signedWithEmptyKey(body: string) {
    const id = 'msg_empty_key';
    const signature = createHmac('sha256', Buffer.alloc(0)).update(`${id}.${NOW_S}.${body}`).digest('base64');
    return { path: PATH, method: 'POST', body, headers: { 'content-type': 'application/json', 'webhook-id': id, 'webhook-timestamp': String(NOW_S), 'webhook-signature': `v1,${signature}` } };
  }

  it('a registration whose secret is whsec_ + non-base64 -> 403 naming the cluster; the empty-key request does nothing', async () => {
    const empty = 'whsec_' + '!'.repeat(24);
    const { app, ec2Mock } = appAt({ ms: NOW_MS }, [registration('c5', empty)]);
    const req = { ...signedWithEmptyKey(fixtureBody.replace('"clusterId": "c1"', '"clusterId": "c5"')), path: '/v1/clusters/c5/reconcile' };
    const res = await send(app, req);
    expect(res.status).toBe(403);
    expect(res.body.error?.code).toBe('registration_invalid');
    expect(res.body.error?.message).toMatch(/cluster "c5" is malformed:\n✖ unusable webhook secret.*\n\s+→ at secrets\[0\]/);
    expect(res.body.error?.message).not.toContain('!!!!');
    expect(ec2Mock.calls()).toEqual([]);
  });

  it('a request signed with an empty key to a well-registered cluster -> 401, no EC2 call', async () => {
    const { app, ec2Mock } = appAt({ ms: NOW_MS });
    const res = await send(app, signedWithEmptyKey(fixtureBody));
    expect(res.status).toBe(401);
    expect(res.body.error?.code).toBe('bad_signature');
    expect(ec2Mock.calls()).toEqual([]);
  });
});
