/**
 * STS AssumeRole on the simulator's endpoint, over HTTP with the SDK's STSClient and the AWS
 * CLI: who may assume a role, and what its session's credentials may then do in EC2 — the
 * role's policies with the session's tags as `aws:PrincipalTag/*`.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { DeleteVolumeCommand, DescribeVolumesCommand, EC2Client } from '@aws-sdk/client-ec2';
import { AssumeRoleCommand, STSClient, type AssumeRoleCommandInput } from '@aws-sdk/client-sts';
import { afterEach, describe, expect, it } from 'vitest';
import type { IamPrincipal } from '../../../lib/iam/evaluate.js';
import type { PolicyDocument } from '../../../lib/iam/policy.js';
import { QueryParams } from '../../../lib/local/ec2/query.js';
import { readAssumeRole, type Ec2Role } from '../../../lib/local/ec2/sts.js';
import { expectEc2Error, simPerTest, stsRefusal, ZONE } from './helpers.js';

const run = promisify(execFile);
const ACCOUNT = '210987654321';
const ROLE = `arn:aws:iam::${ACCOUNT}:role/volhook-ec2`;
const FENCED_ROLE = `arn:aws:iam::${ACCOUNT}:role/member/volhook-ec2-fenced`;
const CHAINED_ROLE = `arn:aws:iam::${ACCOUNT}:role/volhook-ec2-chained`;
const BACKEND: IamPrincipal = { arn: 'arn:aws:sts::123456789012:assumed-role/volhook-lambda/volhook', accountId: '123456789012', policies: [] };

/** Deletes only volumes whose cluster tag is the session's. */
const perCluster: PolicyDocument = {
  Version: '2012-10-17',
  Statement: [
    {
      Effect: 'Allow',
      Action: 'ec2:DeleteVolume',
      Resource: 'arn:aws:ec2:*:*:volume/*',
      Condition: { StringEquals: { 'aws:ResourceTag/volhook.io/cluster': '${aws:PrincipalTag/volhook-cluster}' } },
    },
  ],
};
const role = (trust: Ec2Role['trust']): Ec2Role => ({ policies: [{ name: 'per-cluster', document: perCluster }], trust });

// The simulator is the member account the roles live in; the backend's account is not held
// (its key only calls STS, which serves every account).
const t = simPerTest({
  accountId: ACCOUNT,
  iam: {
    principals: { backend: BACKEND, stranger: { ...BACKEND, arn: 'arn:aws:iam::123456789012:user/stranger' } },
    roles: {
      [ROLE]: role({ principals: [BACKEND.arn] }),
      [FENCED_ROLE]: role({ principals: ['backend'], externalId: 'volhook-ext-1' }),
      [CHAINED_ROLE]: role({ principals: [`arn:aws:sts::${ACCOUNT}:assumed-role/volhook-ec2/c1`] }),
    },
  },
});

const clients: { destroy(): void }[] = [];
afterEach(() => clients.splice(0).forEach((c) => c.destroy()));

/** The simulator's URL, as the operator's client was given it. */
async function endpointUrl(): Promise<string> {
  const ep = await (t.ec2.config.endpoint as unknown as () => Promise<{ protocol: string; hostname: string; port?: number }>)();
  return `${ep.protocol}//${ep.hostname}:${ep.port}`;
}

async function assume(accessKeyId: string, input: Partial<AssumeRoleCommandInput> = {}) {
  const client = new STSClient({ endpoint: await endpointUrl(), region: 'us-east-1', credentials: { accessKeyId, secretAccessKey: 'x' }, maxAttempts: 1 });
  clients.push(client);
  return client.send(new AssumeRoleCommand({ RoleArn: ROLE, RoleSessionName: 'c1', Tags: [{ Key: 'volhook-cluster', Value: 'c1' }], ...input }));
}

async function ec2As(credentials: { accessKeyId: string; secretAccessKey: string; sessionToken?: string }): Promise<EC2Client> {
  const client = new EC2Client({ endpoint: await endpointUrl(), region: 'us-east-1', credentials, maxAttempts: 1 });
  clients.push(client);
  return client;
}

async function sessionEc2(out: Awaited<ReturnType<typeof assume>>): Promise<EC2Client> {
  const c = out.Credentials!;
  const client = new EC2Client({
    endpoint: await endpointUrl(),
    region: 'us-east-1',
    credentials: { accessKeyId: c.AccessKeyId!, secretAccessKey: c.SecretAccessKey!, sessionToken: c.SessionToken! },
    maxAttempts: 1,
  });
  clients.push(client);
  return client;
}

const disk = (cluster: string) => t.sim.seedVolumes({ zone: ZONE, tags: { 'volhook.io/cluster': cluster } })[0]!.id;

describe('STS AssumeRole on the EC2 simulator', () => {
  it('a session tagged volhook-cluster=c1 deletes a disk tagged c1 and is UnauthorizedOperation on one tagged c2', async () => {
    const out = await assume('backend');
    expect(out.AssumedRoleUser).toEqual({ Arn: `arn:aws:sts::${ACCOUNT}:assumed-role/volhook-ec2/c1`, AssumedRoleId: expect.stringMatching(/^AROA[A-Z2-7]{17}:c1$/) });
    expect(out.Credentials?.AccessKeyId).toMatch(/^ASIA/);
    expect(out.Credentials?.Expiration?.getTime()).toBe(t.clock.now() + 3600_000);
    expect(out.PackedPolicySize).toBeGreaterThan(0);
    const ec2 = await sessionEc2(out);
    const mine = disk('c1');
    const theirs = disk('c2');

    await ec2.send(new DeleteVolumeCommand({ VolumeId: mine }));
    expect(['deleting', undefined]).toContain(t.sim.volume(mine)?.state);

    const err = await expectEc2Error(ec2.send(new DeleteVolumeCommand({ VolumeId: theirs })), 'UnauthorizedOperation', 403);
    expect(err.message).toContain(`User: arn:aws:sts::${ACCOUNT}:assumed-role/volhook-ec2/c1 is not authorized to perform: ec2:DeleteVolume`);
    expect(t.sim.volume(theirs)?.state).toBe('available');
  });

  it('a session tagged c2 is the mirror image: the c2 disk goes, the c1 disk stays', async () => {
    const ec2 = await sessionEc2(await assume('backend', { RoleSessionName: 'c2', Tags: [{ Key: 'volhook-cluster', Value: 'c2' }] }));
    const c1 = disk('c1');
    const c2 = disk('c2');
    await expectEc2Error(ec2.send(new DeleteVolumeCommand({ VolumeId: c1 })), 'UnauthorizedOperation', 403);
    await ec2.send(new DeleteVolumeCommand({ VolumeId: c2 }));
    expect(t.sim.volume(c1)?.state).toBe('available');
    expect(['deleting', undefined]).toContain(t.sim.volume(c2)?.state);
  });

  it('a caller the role does not trust is AccessDenied (403, naming why); a trusted one in the same request shape is granted', async () => {
    const refused = await stsRefusal(assume('stranger'));
    expect(refused).toMatchObject({ name: 'AccessDenied', status: 403 });
    expect(refused.message).toContain(`User: arn:aws:iam::123456789012:user/stranger is not authorized to perform: sts:AssumeRole on resource: ${ROLE}`);
    expect(refused.message).toContain('trust names neither');
    // An operator's key (no principal) is not trusted either, nor is a role the account does not hold.
    expect(await stsRefusal(assume('operator'))).toMatchObject({ name: 'AccessDenied', status: 403 });
    expect((await stsRefusal(assume('backend', { RoleArn: `arn:aws:iam::${ACCOUNT}:role/nope` }))).message).toContain('no such role');
    expect((await assume('backend')).Credentials?.AccessKeyId).toMatch(/^ASIA/);
  });

  it('a role that requires an ExternalId refuses none and a wrong one (AccessDenied), grants the right one', async () => {
    const input = { RoleArn: FENCED_ROLE, RoleSessionName: 'c1' };
    const none = await stsRefusal(assume('backend', input));
    expect(none).toMatchObject({ name: 'AccessDenied', status: 403 });
    expect(none.message).toContain('requires an ExternalId and the request gives none');
    const wrong = await stsRefusal(assume('backend', { ...input, ExternalId: 'volhook-ext-2' }));
    expect(wrong).toMatchObject({ name: 'AccessDenied', status: 403 });
    expect(wrong.message).toContain('ExternalId is not the one the role requires');
    const ok = await assume('backend', { ...input, ExternalId: 'volhook-ext-1' });
    expect(ok.AssumedRoleUser?.Arn).toBe(`arn:aws:sts::${ACCOUNT}:assumed-role/volhook-ec2-fenced/c1`);
  });

  it('a session’s key works until its expiration by the simulator’s clock, then is RequestExpired', async () => {
    const ec2 = await sessionEc2(await assume('backend', { DurationSeconds: 900 }));
    const first = disk('c1');
    t.clock.advance(899_000);
    await ec2.send(new DeleteVolumeCommand({ VolumeId: first }));
    t.clock.advance(1_000);
    const second = disk('c1');
    const err = await expectEc2Error(ec2.send(new DeleteVolumeCommand({ VolumeId: second })), 'RequestExpired', 400);
    expect(err.message).toBe('Request has expired.');
    expect(t.sim.volume(second)?.state).toBe('available');
  });

  it('a session’s key without its session token is AuthFailure; with it, the same call goes through', async () => {
    const out = await assume('backend');
    const c = out.Credentials!;
    const id = disk('c1');
    await expectEc2Error((await ec2As({ accessKeyId: c.AccessKeyId!, secretAccessKey: c.SecretAccessKey! })).send(new DeleteVolumeCommand({ VolumeId: id })), 'AuthFailure', 401);
    expect(t.sim.volume(id)?.state).toBe('available');
    await (await sessionEc2(out)).send(new DeleteVolumeCommand({ VolumeId: id }));
    expect(['deleting', undefined]).toContain(t.sim.volume(id)?.state);
  });

  it('role chaining: a session’s transitive tag passes to the next session, which it may not restate; a non-transitive one does not pass', async () => {
    const transitive = await assume('backend', { TransitiveTagKeys: ['volhook-cluster'] });
    const c = transitive.Credentials!;
    const chain = async (input: Partial<AssumeRoleCommandInput> = {}) => {
      const client = new STSClient({ endpoint: await endpointUrl(), region: 'us-east-1', credentials: { accessKeyId: c.AccessKeyId!, secretAccessKey: c.SecretAccessKey!, sessionToken: c.SessionToken! }, maxAttempts: 1 });
      clients.push(client);
      return client.send(new AssumeRoleCommand({ RoleArn: CHAINED_ROLE, RoleSessionName: 'c1-chained', ...input }));
    };
    const restated = await stsRefusal(chain({ Tags: [{ Key: 'volhook-cluster', Value: 'c2' }] }));
    expect(restated).toMatchObject({ name: 'ValidationError', status: 400 });
    expect(restated.message).toContain('transitive from the calling session');
    const ec2 = await sessionEc2(await chain());
    const mine = disk('c1');
    await ec2.send(new DeleteVolumeCommand({ VolumeId: mine }));
    expect(['deleting', undefined]).toContain(t.sim.volume(mine)?.state);

    // Without TransitiveTagKeys the chained session has no cluster tag: nothing matches.
    const plain = (await assume('backend')).Credentials!;
    const client = new STSClient({ endpoint: await endpointUrl(), region: 'us-east-1', credentials: { accessKeyId: plain.AccessKeyId!, secretAccessKey: plain.SecretAccessKey!, sessionToken: plain.SessionToken! }, maxAttempts: 1 });
    clients.push(client);
    const untagged = await sessionEc2(await client.send(new AssumeRoleCommand({ RoleArn: CHAINED_ROLE, RoleSessionName: 'c1-plain' })));
    const other = disk('c1');
    await expectEc2Error(untagged.send(new DeleteVolumeCommand({ VolumeId: other })), 'UnauthorizedOperation', 403);
    expect(t.sim.volume(other)?.state).toBe('available');
  });

  it('refuses what it does not implement by name (a session policy), and DurationSeconds beyond the role’s maximum', async () => {
    const policy = await stsRefusal(assume('backend', { Policy: JSON.stringify(perCluster) }));
    expect(policy).toMatchObject({ name: 'ValidationError', status: 400 });
    expect(policy.message).toContain('does not implement AssumeRole parameter(s): Policy');
    expect(await stsRefusal(assume('backend', { DurationSeconds: 7200 }))).toMatchObject({ name: 'ValidationError', message: 'The requested DurationSeconds exceeds the MaxSessionDuration set for this role.' });
  });

  it('EC2 callers are untouched: the operator’s key still describes without evaluation', async () => {
    disk('c2');
    const out = await t.ec2.send(new DescribeVolumesCommand({}));
    expect(out.Volumes).toHaveLength(1);
  });

  it('the AWS CLI assumes the role with a session tag and deletes with the session’s credentials', async () => {
    const base = {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/tmp',
      AWS_CONFIG_FILE: '/nonexistent/volhook-aws-config',
      AWS_SHARED_CREDENTIALS_FILE: '/nonexistent/volhook-aws-credentials',
      AWS_EC2_METADATA_DISABLED: 'true',
      AWS_MAX_ATTEMPTS: '1',
    };
    const endpoint = await endpointUrl();
    const assumed = await run(
      'aws',
      ['sts', 'assume-role', '--role-arn', ROLE, '--role-session-name', 'cli', '--tags', 'Key=volhook-cluster,Value=c1', '--endpoint-url', endpoint, '--region', 'us-east-1', '--output', 'json'],
      { env: { ...base, AWS_ACCESS_KEY_ID: 'backend', AWS_SECRET_ACCESS_KEY: 'x' }, timeout: 20_000 },
    );
    const out = JSON.parse(assumed.stdout) as { Credentials: { AccessKeyId: string; SecretAccessKey: string; SessionToken: string }; AssumedRoleUser: { Arn: string } };
    expect(out.AssumedRoleUser.Arn).toBe(`arn:aws:sts::${ACCOUNT}:assumed-role/volhook-ec2/cli`);
    const env = { ...base, AWS_ACCESS_KEY_ID: out.Credentials.AccessKeyId, AWS_SECRET_ACCESS_KEY: out.Credentials.SecretAccessKey, AWS_SESSION_TOKEN: out.Credentials.SessionToken };
    const theirs = disk('c2');
    const denied = await run('aws', ['ec2', 'delete-volume', '--volume-id', theirs, '--endpoint-url', endpoint, '--region', 'us-east-1'], { env, timeout: 20_000 }).catch((e: { stderr: string }) => e);
    expect((denied as { stderr: string }).stderr).toContain('UnauthorizedOperation');
    const mine = disk('c1');
    await run('aws', ['ec2', 'delete-volume', '--volume-id', mine, '--endpoint-url', endpoint, '--region', 'us-east-1'], { env, timeout: 20_000 });
    expect(['deleting', undefined]).toContain(t.sim.volume(mine)?.state);
    expect(t.sim.volume(theirs)?.state).toBe('available');
  });
});

describe('readAssumeRole', () => {
  it('reads tags and transitive keys; a transitive key not among the tags is refused', () => {
    const base = { Action: 'AssumeRole', Version: '2011-06-15', RoleArn: ROLE, RoleSessionName: 's1', 'Tags.member.1.Key': 'volhook-cluster', 'Tags.member.1.Value': 'c1' };
    expect(readAssumeRole(QueryParams.from({ ...base, 'TransitiveTagKeys.member.1': 'volhook-cluster' }))).toEqual({
      roleArn: ROLE,
      roleSessionName: 's1',
      durationSeconds: 3600,
      tags: [{ key: 'volhook-cluster', value: 'c1' }],
      transitiveTagKeys: ['volhook-cluster'],
    });
    expect(() => readAssumeRole(QueryParams.from({ ...base, 'TransitiveTagKeys.member.1': 'other' }))).toThrow(/must be included in the requested tags: other/);
    expect(() => readAssumeRole(QueryParams.from({ ...base, 'Tags.member.2.Key': 'VOLHOOK-cluster', 'Tags.member.2.Value': 'c2' }))).toThrow(/Duplicate tag keys/);
  });
});
