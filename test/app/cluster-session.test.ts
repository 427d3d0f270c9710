/**
 * The backend with a cluster whose registration names its EC2 role: its calls are signed by
 * the cluster's STS session (one AssumeRole for many requests), paced in the budget of the
 * role's account; a role that refuses the backend leaves the claim failed with the reason and
 * no disk. Over HTTP, against the simulator's STS and EC2 holding the session to the packaged
 * role policy.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createBackendApp } from '../../lib/app/index.js';
import { createMemoryBudget, type BucketKey, type RateBudget } from '../../lib/budget/index.js';
import { ReconcileResponseSchema } from '../../lib/contract/index.js';
import { rolePolicy } from '../../lib/iam/role-policy.js';
import { createStaticRegistry } from '../../lib/registry/index.js';
import { startTestSim, type TestSim } from '../local/ec2/helpers.js';
import { fixtureBody, NOW_MS, registration, SECRET_C1, signedRequest } from './harness.js';

const ACCOUNT = '123456789012';
const EC2_ROLE = `arn:aws:iam::${ACCOUNT}:role/volhook/volhook-ec2`;
const BACKEND = { accessKeyId: 'volhook-backend', secretAccessKey: 'x' };

let t: TestSim;
beforeEach(async () => {
  t = await startTestSim({
    throttling: false,
    iam: {
      // The backend's own key may make no EC2 call at all: only its sessions may.
      principals: { [BACKEND.accessKeyId]: { arn: `arn:aws:sts::${ACCOUNT}:assumed-role/volhook-lambda/api`, accountId: ACCOUNT, policies: [] } },
      roles: { [EC2_ROLE]: { policies: [{ name: 'ec2', document: rolePolicy() }], trust: { principals: [BACKEND.accessKeyId], externalId: 'volhook-ext-1' } } },
    },
  });
});
afterEach(() => t.close());

function backend(aws: Record<string, string> | undefined, budget?: RateBudget) {
  return createBackendApp({
    registry: createStaticRegistry([registration('c1', SECRET_C1, aws ? { aws } : {})]),
    ec2Endpoint: t.url,
    stsEndpoint: t.url,
    ec2Credentials: BACKEND,
    now: () => NOW_MS,
    ...(budget ? { budget } : {}),
  });
}

async function reconcile(app: ReturnType<typeof backend>, id: string) {
  const { path, ...init } = signedRequest('/v1/clusters/c1/reconcile', fixtureBody, SECRET_C1, { id });
  const res = await app.request(path, init);
  return { status: res.status, body: (await res.json()) as unknown };
}

describe('a cluster with aws.roleArn', () => {
  it("-> its claim's disk made in its session: one AssumeRole for two requests, budget keyed by the role's account", async () => {
    const keys: BucketKey[] = [];
    const memory = createMemoryBudget();
    const budget: RateBudget = { take: (key, n) => (keys.push(key), memory.take(key, n)), throttled: (key) => memory.throttled(key) };
    const app = backend({ roleArn: EC2_ROLE, externalId: 'volhook-ext-1' }, budget);
    const first = await reconcile(app, 'req-1');
    await reconcile(app, 'req-2');
    expect(first.status).toBe(200);
    expect(t.sim.volumes()).toHaveLength(1);
    expect(t.sim.getStats().actions['AssumeRole']?.calls).toBe(1);
    expect(new Set(keys.map((k) => k.account))).toEqual(new Set([ACCOUNT]));
  });

  it('a registration without the role -> the backend key itself is refused by IAM (the control: nothing but the session may act)', async () => {
    const first = await reconcile(backend(undefined), 'req-1');
    expect(JSON.stringify(first.body)).toContain('UnauthorizedOperation');
    expect(t.sim.volumes()).toHaveLength(0);
  });

  it('the wrong ExternalId -> AssumeRole refused; the claim fails naming the role and the cluster; no disk', async () => {
    const first = await reconcile(backend({ roleArn: EC2_ROLE, externalId: 'volhook-wrong' }), 'req-1');
    expect(first.status).toBe(200);
    const text = JSON.stringify(ReconcileResponseSchema.parse(first.body).results);
    expect(text).toContain(EC2_ROLE);
    expect(text).toContain('cluster \\"c1\\"');
    expect(t.sim.volumes()).toHaveLength(0);
  });
});
