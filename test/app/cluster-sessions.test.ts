/**
 * The backend makes no EC2 call under its own role (issue 23, item 1): each cluster's EC2 client
 * signs with the session of the role its registration names, else the deployment's; with no role
 * at all the claim fails with a reason naming what to set (not a 500, no EC2 call); the rate
 * budget is keyed by the role's account. EC2 is aws-sdk-client-mock's; the fake resolves the
 * client's credentials first, as the SDK's signer does, so it sees which session would sign.
 */
import { EC2Client } from '@aws-sdk/client-ec2';
import { AssumeRoleCommand, STSClient, STSServiceException } from '@aws-sdk/client-sts';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { identityTags } from '../../lib/contract/tags.js';
import { createBackendApp, type BackendOptions } from '../../lib/app/index.js';
import type { BucketKey, RateBudget } from '../../lib/budget/index.js';
import { createMemoryBudget } from '../../lib/budget/memory.js';
import { createClusterSessions } from '../../lib/ec2/index.js';
import { createStaticRegistry } from '../../lib/registry/index.js';
import { CREATING_VOLUME, fixtureBody, NOW_MS, registration, SECRET_C1, signedRequest } from './harness.js';

const DEPLOYMENT_ROLE = 'arn:aws:iam::111111111111:role/volhook/volhook-ec2';
const MEMBER_ROLE = 'arn:aws:iam::222222222222:role/volhook/team-a';

const ec2Mock = mockClient(EC2Client);
const stsMock = mockClient(STSClient);
const sts = new STSClient({ region: 'us-east-1', credentials: { accessKeyId: 'AKIDBACKEND', secretAccessKey: 'backend' } });
/** The access key each EC2 call would be signed with. */
let signedWith: string[] = [];
let budgetKeys: BucketKey[] = [];

beforeEach(() => {
  ec2Mock.reset();
  stsMock.reset();
  signedWith = [];
  budgetKeys = [];
  // The claim's volume exists and is creating: the item is requeued after one describe.
  ec2Mock.onAnyCommand().callsFake(async (_input, getClient) => {
    const credentials = await (getClient().config.credentials as () => Promise<{ accessKeyId: string }>)();
    signedWith.push(credentials.accessKeyId);
    return {
      Volumes: [
        {
          ...CREATING_VOLUME,
          Tags: Object.entries(identityTags('c1', 'pvc-6f1c2a9e-4b7d-4c1e-9f3a-2d8e5b7c1a04')).map(([Key, Value]) => ({ Key, Value })),
        },
      ],
    };
  });
  stsMock.on(AssumeRoleCommand).callsFake((input: { RoleArn: string }) => ({
    Credentials: { AccessKeyId: `ASIA-${input.RoleArn.split(':')[4]}`, SecretAccessKey: 's', SessionToken: 't', Expiration: new Date(Date.now() + 3_600_000) },
  }));
});
afterAll(() => {
  ec2Mock.restore();
  stsMock.restore();
});

function recordingBudget(): RateBudget {
  const inner = createMemoryBudget();
  return {
    take: (key, wanted) => {
      budgetKeys.push(key);
      return inner.take(key, wanted);
    },
    throttled: (key) => inner.throttled(key),
  };
}

async function reconcile(reg: Record<string, unknown>, options: Partial<BackendOptions> = {}) {
  const sessions = createClusterSessions({ sts });
  const app = createBackendApp({
    registry: createStaticRegistry([registration('c1', SECRET_C1, reg)]),
    sessions,
    budget: recordingBudget(),
    now: () => NOW_MS,
    ...options,
  });
  const { path, ...init } = signedRequest('/v1/clusters/c1/reconcile', fixtureBody, SECRET_C1);
  const res = await app.request(path, init);
  return { status: res.status, body: (await res.json()) as any, sessions };
}

describe("the backend signs each cluster's EC2 calls with that cluster's session", () => {
  it("a registration naming aws.roleArn -> that role is assumed (tagged for the cluster, with its ExternalId) and signs the calls; the budget keys its account", async () => {
    const { status, body, sessions } = await reconcile({ aws: { roleArn: MEMBER_ROLE, externalId: 'team-a-ext' } }, { ec2RoleArn: DEPLOYMENT_ROLE });
    expect(status).toBe(200);
    expect(body.results[0].outcome).toBe('requeue');
    const calls = stsMock.commandCalls(AssumeRoleCommand);
    expect(calls.map((c) => c.args[0].input)).toEqual([
      { RoleArn: MEMBER_ROLE, RoleSessionName: 'volhook-c1', DurationSeconds: 3600, ExternalId: 'team-a-ext', Tags: [{ Key: 'volhook-cluster', Value: 'c1' }] },
    ]);
    expect(signedWith.length).toBeGreaterThan(0);
    expect(new Set(signedWith)).toEqual(new Set(['ASIA-222222222222']));
    expect(new Set(budgetKeys.map((k) => k.account))).toEqual(new Set(['222222222222']));
    expect(sessions.stats().assumeRoleCalls).toBe(1);
  });

  it("control: a registration naming no role -> the deployment's role (ec2RoleArn), its account keys the budget", async () => {
    const { body } = await reconcile({}, { ec2RoleArn: DEPLOYMENT_ROLE, account: '999999999999' });
    expect(body.results[0].outcome).toBe('requeue');
    expect(stsMock.commandCalls(AssumeRoleCommand).map((c) => c.args[0].input.RoleArn)).toEqual([DEPLOYMENT_ROLE]);
    expect(new Set(signedWith)).toEqual(new Set(['ASIA-111111111111']));
    expect(new Set(budgetKeys.map((k) => k.account))).toEqual(new Set(['111111111111']));
  });

  it('two requests of one cluster -> one AssumeRole', async () => {
    const sessions = createClusterSessions({ sts });
    const app = createBackendApp({ registry: createStaticRegistry([registration('c1', SECRET_C1)]), sessions, ec2RoleArn: DEPLOYMENT_ROLE, now: () => NOW_MS });
    for (const id of ['msg_1', 'msg_2']) {
      const { path, ...init } = signedRequest('/v1/clusters/c1/reconcile', fixtureBody, SECRET_C1, { id });
      expect((await app.request(path, init)).status).toBe(200);
    }
    expect(stsMock.commandCalls(AssumeRoleCommand)).toHaveLength(1);
    expect(signedWith.length).toBeGreaterThanOrEqual(2);
  });

  it('no role anywhere and no static credentials -> 200, the claim failed with NoEc2Role naming aws.roleArn and VOLHOOK_EC2_ROLE_ARN; no EC2 or STS call', async () => {
    const { status, body } = await reconcile({});
    expect(status).toBe(200);
    expect(body.results[0]).toMatchObject({ outcome: 'failed', reason: 'NoEc2Role', requeueAfterSeconds: 300 });
    expect(body.results[0].message).toMatch(/no EC2 role for cluster "c1".*aws\.roleArn.*VOLHOOK_EC2_ROLE_ARN/);
    expect(ec2Mock.calls()).toHaveLength(0);
    expect(stsMock.calls()).toHaveLength(0);
  });

  it('the exception for tests and benches without STS: static ec2Credentials and no role -> EC2 called with them directly, VOLHOOK_AWS_ACCOUNT keys the budget', async () => {
    const { body } = await reconcile({}, { ec2Credentials: { accessKeyId: 'AKIDLOCAL', secretAccessKey: 'local' }, account: '333333333333' });
    expect(body.results[0].outcome).toBe('requeue');
    expect(new Set(signedWith)).toEqual(new Set(['AKIDLOCAL']));
    expect(stsMock.calls()).toHaveLength(0);
    expect(new Set(budgetKeys.map((k) => k.account))).toEqual(new Set(['333333333333']));
  });

  it("STS refuses the role (AccessDenied) -> the claim failed with AssumeRoleDenied and the message naming role, cluster and trust policy; not a 500", async () => {
    stsMock.on(AssumeRoleCommand).rejects(
      new STSServiceException({ name: 'AccessDenied', message: 'not authorized to perform: sts:AssumeRole', $fault: 'client', $metadata: { httpStatusCode: 403 } }),
    );
    const { status, body } = await reconcile({ aws: { roleArn: MEMBER_ROLE } }, { ec2RoleArn: DEPLOYMENT_ROLE });
    expect(status).toBe(200);
    expect(body.results[0]).toMatchObject({ outcome: 'failed', reason: 'AssumeRoleDenied' });
    expect(body.results[0].message).toContain(MEMBER_ROLE);
    expect(body.results[0].message).toContain('cluster "c1"');
    expect(body.results[0].message).toMatch(/trust policy/);
    expect(signedWith).toEqual([]);
  });

  it('a registration whose aws.nodeTag names another key than VOLHOOK_NODE_TAG_KEY -> 403 registration_invalid naming both keys; control: the same key -> 200', async () => {
    const refused = await reconcile({ aws: { nodeTag: { key: 'team', value: 'a' } } }, { ec2RoleArn: DEPLOYMENT_ROLE });
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('registration_invalid');
    expect(refused.body.error.message).toMatch(/aws\.nodeTag\.key "team".*"eks:cluster-name" \(VOLHOOK_NODE_TAG_KEY\)/);
    expect(stsMock.calls()).toHaveLength(0);

    const custom = await reconcile({ aws: { nodeTag: { key: 'team', value: 'a' } } }, { ec2RoleArn: DEPLOYMENT_ROLE, nodeTagKey: 'team' });
    expect(custom.status).toBe(200);
    expect(stsMock.commandCalls(AssumeRoleCommand)[0]!.args[0].input.Tags).toEqual([
      { Key: 'volhook-cluster', Value: 'c1' },
      { Key: 'volhook-nodes', Value: 'a' },
    ]);
  });
});
