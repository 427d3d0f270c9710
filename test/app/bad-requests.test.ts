import { CreateVolumeCommand, DescribeVolumesCommand } from '@aws-sdk/client-ec2';
import { afterEach, describe, expect, it } from 'vitest';
import { CREATING_VOLUME, fixtureBody, makeApp, NOW_MS, SECRET_C1, SECRET_C2, signedRequest } from './harness.js';

const PATH = '/v1/clusters/c1/reconcile';

async function send(app: ReturnType<typeof makeApp>['app'], req: ReturnType<typeof signedRequest>) {
  const { path, ...init } = req;
  const res = await app.request(path, init);
  return { status: res.status, body: (await res.json()) as { error?: { code: string; message: string } } };
}

describe('POST /v1/clusters/:id/reconcile refuses bad requests and touches nothing', () => {
  let harness = makeApp();
  afterEach(() => {
    harness.ec2Mock.restore();
    harness = makeApp();
  });

  const cases: Array<{ name: string; status: number; code: string; message?: RegExp; request: () => ReturnType<typeof signedRequest> }> = [
    {
      name: 'no signature headers -> 401 naming them',
      status: 401,
      code: 'bad_signature',
      message: /missing signature header/,
      request: () => ({ path: PATH, method: 'POST', body: fixtureBody, headers: { 'content-type': 'application/json' } }),
    },
    {
      name: 'garbage signature -> 401',
      status: 401,
      code: 'bad_signature',
      request: () => signedRequest(PATH, fixtureBody, SECRET_C1, { headers: { 'webhook-signature': 'v1,Zm9vYmFy' } }),
    },
    {
      name: 'body changed after signing -> 401',
      status: 401,
      code: 'bad_signature',
      message: /does not match/,
      request: () => ({ ...signedRequest(PATH, fixtureBody, SECRET_C1), body: fixtureBody.replace('20Gi', '2000Gi') }),
    },
    {
      name: "signed with another cluster's secret -> 401",
      status: 401,
      code: 'bad_signature',
      request: () => signedRequest(PATH, fixtureBody, SECRET_C2),
    },
    {
      name: 'timestamp 6 minutes old -> 401',
      status: 401,
      code: 'bad_signature',
      message: /old/,
      request: () => signedRequest(PATH, fixtureBody, SECRET_C1, { nowSeconds: NOW_MS / 1000 - 360 }),
    },
    {
      name: 'timestamp 6 minutes ahead -> 401',
      status: 401,
      code: 'bad_signature',
      message: /future/,
      request: () => signedRequest(PATH, fixtureBody, SECRET_C1, { nowSeconds: NOW_MS / 1000 + 360 }),
    },
    {
      name: 'unknown cluster -> 404',
      status: 404,
      code: 'unknown_cluster',
      message: /"c9" is not registered/,
      request: () => signedRequest('/v1/clusters/c9/reconcile', fixtureBody, SECRET_C1),
    },
    {
      name: 'invalid cluster id -> 400',
      status: 400,
      code: 'bad_cluster_id',
      request: () => signedRequest('/v1/clusters/Bad_Id/reconcile', fixtureBody, SECRET_C1),
    },
    {
      name: 'malformed JSON, correctly signed -> 400',
      status: 400,
      code: 'malformed_json',
      request: () => signedRequest(PATH, '{"items": [', SECRET_C1),
    },
    {
      name: 'schema violation -> 422 naming the field',
      status: 422,
      code: 'invalid_request',
      message: /→ at items\[0\]\.pvc\.metadata\.uid/,
      request: () => {
        const body = JSON.parse(fixtureBody);
        delete body.items[0].pvc.metadata.uid;
        return signedRequest(PATH, JSON.stringify(body), SECRET_C1);
      },
    },
    {
      name: 'unknown item kind -> 422 naming the field',
      status: 422,
      code: 'invalid_request',
      message: /→ at items\[0\]\.kind/,
      request: () => signedRequest(PATH, JSON.stringify({ clusterId: 'c1', items: [{ kind: 'Pod' }] }), SECRET_C1),
    },
    {
      name: 'empty batch -> 422',
      status: 422,
      code: 'invalid_request',
      message: /→ at items$/m,
      request: () => signedRequest(PATH, JSON.stringify({ clusterId: 'c1', items: [] }), SECRET_C1),
    },
    {
      name: 'body over 1 MiB -> 413',
      status: 413,
      code: 'body_too_large',
      request: () => signedRequest(PATH, JSON.stringify({ clusterId: 'c1', items: [], pad: 'x'.repeat(1024 * 1024) }), SECRET_C1),
    },
  ];

  for (const c of cases) {
    it(c.name, async () => {
      const { status, body } = await send(harness.app, c.request());
      expect(status).toBe(c.status);
      expect(body.error?.code).toBe(c.code);
      if (c.message) expect(body.error?.message).toMatch(c.message);
      expect(harness.ec2Mock.calls()).toHaveLength(0);
    });
  }

  it('seven malformed items -> 422 naming the first five fields, and how many more', async () => {
    const items = Array.from({ length: 7 }, () => ({ kind: 'Pod' }));
    const { status, body } = await send(harness.app, signedRequest(PATH, JSON.stringify({ clusterId: 'c1', items }), SECRET_C1));
    expect(status).toBe(422);
    const message = body.error?.message ?? '';
    expect(message.match(/^✖ /gm)).toHaveLength(5);
    expect(message).toMatch(/→ at items\[4\]\.kind\n\(and 2 more\)$/);
  });

  it('malformed registration -> 403 naming the field, no EC2 call', async () => {
    const { app, ec2Mock } = makeApp({}, [{ clusterId: 'c3', secrets: [], region: 'us-east-1' }]);
    const { status, body } = await send(app, signedRequest('/v1/clusters/c3/reconcile', fixtureBody, SECRET_C1));
    expect(status).toBe(403);
    expect(body.error?.message).toMatch(/is malformed:\n[^]*→ at secrets/);
    expect(ec2Mock.calls()).toHaveLength(0);
    ec2Mock.restore();
  });

  it('the same request correctly signed -> 200 and EC2 is called (the mock sees calls)', async () => {
    harness.ec2Mock.on(DescribeVolumesCommand).resolves({ Volumes: [] });
    harness.ec2Mock.on(CreateVolumeCommand).resolves(CREATING_VOLUME);
    const res = await send(harness.app, signedRequest(PATH, fixtureBody, SECRET_C1));
    expect(res.status).toBe(200);
    expect(harness.ec2Mock).toHaveReceivedCommand(CreateVolumeCommand);
  });
});
