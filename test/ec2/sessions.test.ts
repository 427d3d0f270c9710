/**
 * A session per cluster (issue 23, item 1): the backend assumes each cluster's EC2 role with
 * STS AssumeRole (session tags, ExternalId), caches the credentials per (role, cluster) until
 * 5 minutes before they expire, shares one AssumeRole among callers at once, never remembers
 * a failure, and maps STS's refusals onto the gateway's error kinds.
 */
import { AssumeRoleCommand, STSClient, STSServiceException } from '@aws-sdk/client-sts';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  assumeRoleInput,
  createClusterClients,
  createClusterSessions,
  createEc2Client,
  createEc2Gateway,
  credentialsUsable,
  ec2AccessOf,
  Ec2Error,
  REFRESH_BEFORE_EXPIRY_MS,
  roleSessionName,
  sessionKeyOf,
  type SessionKey,
} from '../../lib/ec2/index.js';
import { verdictForEc2Error } from '../../lib/reconcile/outcomes.js';

const ROLE = 'arn:aws:iam::111111111111:role/volhook/volhook-ec2';
const MEMBER_ROLE = 'arn:aws:iam::222222222222:role/volhook/team-a';
const T0 = Date.UTC(2026, 10, 30, 10, 0, 0);
const HOUR = 3_600_000;

const stsMock = mockClient(STSClient);
const sts = new STSClient({ region: 'us-east-1', credentials: { accessKeyId: 'AKIDBACKEND', secretAccessKey: 'backend' } });
let issued = 0;

/** STS's answer: fresh keys each time, expiring an hour after `at`. */
function granted(at: number) {
  issued++;
  return {
    Credentials: { AccessKeyId: `ASIA${issued}`, SecretAccessKey: `secret-${issued}`, SessionToken: `token-${issued}`, Expiration: new Date(at + HOUR) },
    AssumedRoleUser: { Arn: 'arn:aws:sts::111111111111:assumed-role/volhook-ec2/volhook-c1', AssumedRoleId: 'AROA:volhook-c1' },
  };
}

function stsError(code: string, message: string, status: number): STSServiceException {
  return new STSServiceException({ name: code, message, $fault: status >= 500 ? 'server' : 'client', $metadata: { httpStatusCode: status } });
}

const c1: SessionKey = { roleArn: ROLE, clusterId: 'c1' };
const assumeCalls = () => stsMock.commandCalls(AssumeRoleCommand);

let clock = T0;
beforeEach(() => {
  stsMock.reset();
  clock = T0;
  stsMock.on(AssumeRoleCommand).callsFake(() => granted(clock));
});
afterEach(() => {
  stsMock.reset();
});

function sessions() {
  return createClusterSessions({ sts, now: () => clock });
}

describe('the AssumeRole request', () => {
  it('names the session volhook-<id>, tags it volhook-cluster=<id> and volhook-nodes=<value>, sends the ExternalId, asks for 3600 s', async () => {
    await sessions().credentials({ roleArn: MEMBER_ROLE, clusterId: 'c1', externalId: 'team-a-ext-1', nodes: 'prod-eks' });
    expect(assumeCalls()).toHaveLength(1);
    expect(assumeCalls()[0]!.args[0].input).toEqual({
      RoleArn: MEMBER_ROLE,
      RoleSessionName: 'volhook-c1',
      DurationSeconds: 3600,
      ExternalId: 'team-a-ext-1',
      Tags: [
        { Key: 'volhook-cluster', Value: 'c1' },
        { Key: 'volhook-nodes', Value: 'prod-eks' },
      ],
    });
  });

  it('control: no ExternalId and no nodes in the registration -> neither is sent, only the cluster tag', () => {
    expect(assumeRoleInput(c1)).toEqual({ RoleArn: ROLE, RoleSessionName: 'volhook-c1', DurationSeconds: 3600, Tags: [{ Key: 'volhook-cluster', Value: 'c1' }] });
  });

  it('a 63-character cluster id -> the session name is cut to STS\'s 64 characters; the tag keeps the whole id', () => {
    const id = `a${'b'.repeat(61)}c`;
    expect(roleSessionName(id)).toHaveLength(64);
    expect(roleSessionName(id)).toBe(`volhook-${id}`.slice(0, 64));
    expect(assumeRoleInput({ roleArn: ROLE, clusterId: id }).Tags).toEqual([{ Key: 'volhook-cluster', Value: id }]);
  });

  it("the registration's role and settings, else the deployment's role; neither -> no session", () => {
    const registration = { clusterId: 'c1', aws: { roleArn: MEMBER_ROLE, externalId: 'x-123', nodeTag: { key: 'eks:cluster-name', value: 'prod' } } };
    expect(sessionKeyOf(registration, ROLE)).toEqual({ roleArn: MEMBER_ROLE, clusterId: 'c1', externalId: 'x-123', nodes: 'prod' });
    expect(sessionKeyOf({ clusterId: 'c2' }, ROLE)).toEqual({ roleArn: ROLE, clusterId: 'c2' });
    expect(sessionKeyOf({ clusterId: 'c2', aws: { externalId: 'x-123' } }, ROLE)).toEqual({ roleArn: ROLE, clusterId: 'c2', externalId: 'x-123' });
    expect(sessionKeyOf({ clusterId: 'c2' }, undefined)).toBeUndefined();
  });
});

describe('the credentials cache', () => {
  it('many calls of one cluster -> one AssumeRole, the same credentials each time', async () => {
    const s = sessions();
    const provider = s.provider(c1);
    const first = await provider();
    for (let i = 0; i < 20; i++) expect(await provider()).toBe(first);
    expect(await s.credentials(c1)).toBe(first);
    expect(assumeCalls()).toHaveLength(1);
    expect(s.stats()).toEqual({ assumeRoleCalls: 1, assumeRoleFailures: 0, cached: 1 });
    expect(first).toMatchObject({ accessKeyId: 'ASIA' + issued, sessionToken: 'token-' + issued, expiration: new Date(T0 + HOUR) });
  });

  it('taken anew 5 minutes before Expiration, by the clock: one millisecond before that still the cached ones', async () => {
    const s = sessions();
    const first = await s.credentials(c1);
    clock = T0 + HOUR - REFRESH_BEFORE_EXPIRY_MS - 1;
    expect(await s.credentials(c1)).toBe(first);
    expect(assumeCalls()).toHaveLength(1);
    clock = T0 + HOUR - REFRESH_BEFORE_EXPIRY_MS;
    const second = await s.credentials(c1);
    expect(second).not.toBe(first);
    expect(second.expiration).toEqual(new Date(clock + HOUR));
    expect(assumeCalls()).toHaveLength(2);
  });

  it('the decision alone: usable while more than 5 minutes remain', () => {
    const expires = T0 + HOUR;
    expect(credentialsUsable(expires, T0)).toBe(true);
    expect(credentialsUsable(expires, expires - REFRESH_BEFORE_EXPIRY_MS - 1)).toBe(true);
    expect(credentialsUsable(expires, expires - REFRESH_BEFORE_EXPIRY_MS)).toBe(false);
    expect(credentialsUsable(expires, expires + 1)).toBe(false);
    expect(REFRESH_BEFORE_EXPIRY_MS).toBe(5 * 60_000);
  });

  it('callers at once -> they share one AssumeRole', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    stsMock.on(AssumeRoleCommand).callsFake(async () => {
      await gate;
      return granted(clock);
    });
    const s = sessions();
    const waiting = Array.from({ length: 10 }, () => s.credentials(c1));
    release();
    const all = await Promise.all(waiting);
    expect(new Set(all).size).toBe(1);
    expect(assumeCalls()).toHaveLength(1);
  });

  it('a failed AssumeRole is not remembered: the next caller asks STS again and gets credentials', async () => {
    stsMock.on(AssumeRoleCommand).rejectsOnce(stsError('Throttling', 'Rate exceeded', 400)).callsFake(() => granted(clock));
    const s = sessions();
    const failure = await s.credentials(c1).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(Ec2Error);
    expect(failure).toMatchObject({ kind: 'transient', code: 'Throttling', action: 'AssumeRole' });
    const after = await s.credentials(c1);
    expect(after.accessKeyId).toMatch(/^ASIA/);
    expect(assumeCalls()).toHaveLength(2);
    expect(s.stats()).toEqual({ assumeRoleCalls: 2, assumeRoleFailures: 1, cached: 1 });
  });

  it('separate clusters, even of one role -> separate sessions, each tagged with its own id', async () => {
    const s = sessions();
    const one = await s.credentials(c1);
    const two = await s.credentials({ roleArn: ROLE, clusterId: 'c2' });
    await s.credentials(c1);
    await s.credentials({ roleArn: ROLE, clusterId: 'c2' });
    expect(one.accessKeyId).not.toBe(two.accessKeyId);
    expect(assumeCalls().map((c) => c.args[0].input.Tags)).toEqual([[{ Key: 'volhook-cluster', Value: 'c1' }], [{ Key: 'volhook-cluster', Value: 'c2' }]]);
    expect(s.stats().cached).toBe(2);
  });

  it('a registration whose ExternalId or nodes change -> a new session, not the old one', async () => {
    const s = sessions();
    const plain = await s.credentials(c1);
    const withId = await s.credentials({ ...c1, externalId: 'new-ext-id' });
    const withNodes = await s.credentials({ ...c1, externalId: 'new-ext-id', nodes: 'prod' });
    expect(new Set([plain, withId, withNodes].map((c) => c.accessKeyId)).size).toBe(3);
    expect(assumeCalls()).toHaveLength(3);
  });
});

describe("STS's refusals", () => {
  const denied = () =>
    stsError('AccessDenied', 'User: arn:aws:sts::999999999999:assumed-role/volhook-prod-lambdaRole/volhook-prod-api is not authorized to perform: sts:AssumeRole on resource: ' + MEMBER_ROLE, 403);

  it('AccessDenied -> a sessionDenied error naming the role, the cluster and the fix (trust policy, TagSession, ExternalId); the claim fails with that reason, slowly', async () => {
    stsMock.on(AssumeRoleCommand).rejects(denied());
    const error = (await sessions().credentials({ roleArn: MEMBER_ROLE, clusterId: 'team-a', externalId: 'ext-1' }).catch((err: unknown) => err)) as Ec2Error;
    expect(error).toBeInstanceOf(Ec2Error);
    expect(error).toMatchObject({ kind: 'sessionDenied', code: 'AssumeRoleDenied', action: 'AssumeRole' });
    expect(error.message).toContain(MEMBER_ROLE);
    expect(error.message).toContain('cluster "team-a"');
    expect(error.message).toContain('AccessDenied');
    expect(error.message).toMatch(/trust policy of .* must allow the backend's role sts:AssumeRole and sts:TagSession, on the condition sts:ExternalId/);
    const verdict = verdictForEc2Error(error, 'createDisk');
    expect(verdict).toMatchObject({ outcome: 'failed', reason: 'AssumeRoleDenied', message: error.message, requeueAfterSeconds: 300 });
  });

  it('AccessDenied without an ExternalId, for a role off /volhook/ -> the hint says both', async () => {
    stsMock.on(AssumeRoleCommand).rejects(denied());
    const error = (await sessions().credentials({ roleArn: 'arn:aws:iam::222222222222:role/ops/ec2', clusterId: 'c1' }).catch((err: unknown) => err)) as Ec2Error;
    expect(error.message).toMatch(/requires an ExternalId the registration does not name \(aws\.externalId\)/);
    expect(error.message).toMatch(/may only assume roles under \/volhook\//);
  });

  it.each([
    ['Throttling', 400],
    ['InternalFailure', 500],
    ['ServiceUnavailable', 503],
  ])('control: %s -> transient, the claim is requeued (not failed)', async (code, status) => {
    stsMock.on(AssumeRoleCommand).rejects(stsError(code, `${code} says STS`, status));
    const error = (await sessions().credentials(c1).catch((err: unknown) => err)) as Ec2Error;
    expect(error).toMatchObject({ kind: 'transient', code });
    expect(error.message).toContain(ROLE);
    expect(verdictForEc2Error(error, 'createDisk').outcome).toBe('requeue');
  });

  it('a network failure reaching STS -> transient', async () => {
    stsMock.on(AssumeRoleCommand).rejects(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }));
    expect(await sessions().credentials(c1).catch((err: unknown) => err)).toMatchObject({ kind: 'transient', code: 'ECONNREFUSED' });
  });

  it('RegionDisabledException -> sessionDenied, saying to activate STS in the region', async () => {
    stsMock.on(AssumeRoleCommand).rejects(stsError('RegionDisabledException', 'STS is not activated in this region', 403));
    const error = (await sessions().credentials(c1).catch((err: unknown) => err)) as Ec2Error;
    expect(error).toMatchObject({ kind: 'sessionDenied' });
    expect(error.message).toMatch(/STS is not activated .*activate it/);
  });
});

/** EC2 Query XML of an empty DescribeVolumes, and a transport that records each request's signing. */
function recordingEc2() {
  const seen: Array<{ authorization: string; token: string | undefined }> = [];
  const handler = {
    async handle(request: { headers: Record<string, string> }) {
      seen.push({ authorization: request.headers.authorization ?? '', token: request.headers['x-amz-security-token'] });
      const body = '<DescribeVolumesResponse xmlns="http://ec2.amazonaws.com/doc/2016-11-15/"><requestId>r</requestId><volumeSet/></DescribeVolumesResponse>';
      return { response: { statusCode: 200, headers: {}, body: new TextEncoder().encode(body) } };
    },
  };
  return { handler, seen };
}

describe("EC2 clients of a cluster's session", () => {
  it("EC2 calls are signed with the session's credentials, never the backend's own", async () => {
    const { handler, seen } = recordingEc2();
    const s = sessions();
    const clients = createClusterClients({ sessions: s, defaultRoleArn: ROLE, makeClient: (o) => createEc2Client({ ...o, requestHandler: handler }) });
    const { client } = clients.for({ clusterId: 'c1', region: 'us-east-1' });
    const gateway = createEc2Gateway({ client, clusterId: 'c1' });
    await gateway.getDisk('vol-0aaaaaaaaaaaaaaa1');
    await gateway.getDisk('vol-0aaaaaaaaaaaaaaa2');
    const creds = await s.credentials(c1);
    expect(seen).toHaveLength(2);
    for (const request of seen) {
      expect(request.authorization).toContain(`Credential=${creds.accessKeyId}/`);
      expect(request.authorization).not.toContain('AKIDBACKEND');
      expect(request.token).toBe(creds.sessionToken);
    }
    expect(assumeCalls()).toHaveLength(1);
    clients.destroy();
  });

  it("one client per (region, session): the same cluster's requests reuse it, another cluster gets its own", () => {
    const clients = createClusterClients({ sessions: sessions(), defaultRoleArn: ROLE });
    const a = clients.for({ clusterId: 'c1', region: 'us-east-1' }).client;
    expect(clients.for({ clusterId: 'c1', region: 'us-east-1' }).client).toBe(a);
    expect(clients.for({ clusterId: 'c2', region: 'us-east-1' }).client).not.toBe(a);
    expect(clients.for({ clusterId: 'c1', region: 'eu-west-1' }).client).not.toBe(a);
    expect(clients.for({ clusterId: 'c1', region: 'us-east-1', aws: { roleArn: MEMBER_ROLE } }).client).not.toBe(a);
    clients.destroy();
  });

  it('AssumeRole refused -> the gateway call fails with the sessionDenied error and no EC2 request is sent', async () => {
    stsMock.on(AssumeRoleCommand).rejects(stsError('AccessDenied', 'not authorized to perform: sts:AssumeRole', 403));
    const { handler, seen } = recordingEc2();
    const clients = createClusterClients({ sessions: sessions(), defaultRoleArn: ROLE, maxAttempts: 3, makeClient: (o) => createEc2Client({ ...o, requestHandler: handler }) });
    const gateway = createEc2Gateway({ client: clients.for({ clusterId: 'c1', region: 'us-east-1' }).client, clusterId: 'c1' });
    const error = await gateway.getDisk('vol-0aaaaaaaaaaaaaaa1').catch((err: unknown) => err);
    expect(error).toBeInstanceOf(Ec2Error);
    expect(error).toMatchObject({ kind: 'sessionDenied', code: 'AssumeRoleDenied' });
    expect((error as Error).message).toContain(ROLE);
    expect(seen).toEqual([]);
    // The SDK's retries (3 attempts) do not ask STS again for one call.
    expect(assumeCalls()).toHaveLength(1);
    clients.destroy();
  });

  it('a malformed deployment role is refused at start, naming the variable', () => {
    expect(() => createClusterClients({ sessions: sessions(), defaultRoleArn: 'arn:aws:iam::1234:role/x' })).toThrow(/VOLHOOK_EC2_ROLE_ARN "arn:aws:iam::1234:role\/x" is not an IAM role ARN/);
  });
});

describe('the budget account', () => {
  it("a session's calls are keyed by its role's account, read from the role ARN", () => {
    expect(ec2AccessOf({ clusterId: 'c1', region: 'us-east-1', aws: { roleArn: MEMBER_ROLE } }, { defaultRoleArn: ROLE, direct: false })).toMatchObject({ kind: 'session', account: '222222222222' });
    expect(ec2AccessOf({ clusterId: 'c1', region: 'us-east-1' }, { defaultRoleArn: ROLE, direct: false, directAccount: '333333333333' })).toMatchObject({ kind: 'session', account: '111111111111' });
    expect(ec2AccessOf({ clusterId: 'c1', region: 'us-east-1' }, { defaultRoleArn: 'arn:aws-cn:iam::444444444444:role/volhook/cn', direct: false })).toMatchObject({ account: '444444444444' });
  });

  it('no role, direct calls allowed (tests, benches) -> VOLHOOK_AWS_ACCOUNT, else "default"; neither -> refused, naming the missing role', () => {
    expect(ec2AccessOf({ clusterId: 'c1', region: 'us-east-1' }, { direct: true, directAccount: '333333333333' })).toEqual({ kind: 'direct', account: '333333333333' });
    expect(ec2AccessOf({ clusterId: 'c1', region: 'us-east-1' }, { direct: true })).toEqual({ kind: 'direct', account: 'default' });
    const refused = ec2AccessOf({ clusterId: 'c1', region: 'us-east-1' }, { direct: false });
    expect(refused.kind).toBe('refused');
    expect(refused.kind === 'refused' && refused.error).toMatchObject({ kind: 'sessionDenied', code: 'NoEc2Role' });
    expect(refused.kind === 'refused' && refused.error.message).toMatch(/no EC2 role for cluster "c1": .*aws\.roleArn.*VOLHOOK_EC2_ROLE_ARN/);
  });
});
