/**
 * A session per cluster (lib/ec2/sessions.ts): what AssumeRole is asked for, how long its
 * credentials are used, and what a refusal becomes, with STS mocked (sessions-sts.test.ts runs
 * them against the simulator's STS over HTTP).
 */
import { AssumeRoleCommand, STSClient } from '@aws-sdk/client-sts';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { accountOfRole } from '../../lib/ec2/role-arn.js';
import { assumeRoleInput, createSessionCache, REFRESH_BEFORE_EXPIRY_MS, stillGood } from '../../lib/ec2/sessions.js';
import { Ec2Error } from '../../lib/ec2/index.js';
import { ClusterRegistrationSchema } from '../../lib/registry/index.js';

const ROLE = 'arn:aws:iam::210987654321:role/volhook/volhook-ec2';
const T0 = Date.UTC(2026, 11, 2, 12);
const sts = mockClient(STSClient);
beforeEach(() => sts.reset());

const answer = (n: number, expiresAt = T0 + 3600_000) => ({
  Credentials: { AccessKeyId: `ASIA${n}`, SecretAccessKey: 's', SessionToken: `t${n}`, Expiration: new Date(expiresAt) },
});

describe('createSessionCache', () => {
  it('one cluster, many calls -> one AssumeRole, tagged volhook-cluster=<id>, named volhook-<id>, with the ExternalId', async () => {
    sts.on(AssumeRoleCommand).resolves(answer(1));
    const cache = createSessionCache({ sts: new STSClient({ region: 'us-east-1' }), now: () => T0 });
    const provider = cache.provider({ roleArn: ROLE, clusterId: 'c1', externalId: 'ext-1' });
    const got = await Promise.all([provider(), provider(), provider()]);
    await provider();
    expect(got.map((c) => c.accessKeyId)).toEqual(['ASIA1', 'ASIA1', 'ASIA1']);
    expect(cache.stats().assumeRoleCalls).toBe(1);
    expect(sts.commandCalls(AssumeRoleCommand)[0]?.args[0].input).toEqual({
      RoleArn: ROLE,
      RoleSessionName: 'volhook-c1',
      DurationSeconds: 3600,
      Tags: [{ Key: 'volhook-cluster', Value: 'c1' }],
      ExternalId: 'ext-1',
    });
  });

  it('two clusters of one role -> two sessions, each tagged with its own id', async () => {
    sts.on(AssumeRoleCommand).callsFake((input: { Tags: { Value: string }[] }) => answer(input.Tags[0]!.Value === 'c1' ? 1 : 2));
    const cache = createSessionCache({ sts: new STSClient({ region: 'us-east-1' }), now: () => T0 });
    const [a, b] = await Promise.all([cache.provider({ roleArn: ROLE, clusterId: 'c1' })(), cache.provider({ roleArn: ROLE, clusterId: 'c2' })()]);
    expect([a.accessKeyId, b.accessKeyId]).toEqual(['ASIA1', 'ASIA2']);
    expect(cache.stats()).toEqual({ assumeRoleCalls: 2, sessions: 2 });
  });

  it('credentials are renewed 5 minutes before they expire, not before', async () => {
    let n = 0;
    sts.on(AssumeRoleCommand).callsFake(() => answer(++n, T0 + 3600_000 * n));
    let now = T0;
    const cache = createSessionCache({ sts: new STSClient({ region: 'us-east-1' }), now: () => now });
    const provider = cache.provider({ roleArn: ROLE, clusterId: 'c1' });
    expect((await provider()).accessKeyId).toBe('ASIA1');
    now = T0 + 3600_000 - REFRESH_BEFORE_EXPIRY_MS - 1;
    expect((await provider()).accessKeyId).toBe('ASIA1');
    now += 1;
    expect((await provider()).accessKeyId).toBe('ASIA2');
    expect(cache.stats().assumeRoleCalls).toBe(2);
  });

  it('a failed AssumeRole is not remembered: the next call asks again', async () => {
    sts.on(AssumeRoleCommand).rejectsOnce(Object.assign(new Error('Rate exceeded'), { name: 'Throttling', $metadata: { httpStatusCode: 400 } })).resolves(answer(1));
    const cache = createSessionCache({ sts: new STSClient({ region: 'us-east-1' }), now: () => T0 });
    const provider = cache.provider({ roleArn: ROLE, clusterId: 'c1' });
    const first = await provider().catch((err: unknown) => err);
    expect(first).toBeInstanceOf(Ec2Error);
    expect((first as Ec2Error).kind).toBe('transient');
    expect((await provider()).accessKeyId).toBe('ASIA1');
  });

  it('AccessDenied -> a permanent error naming the role, the cluster and what to check', async () => {
    sts.on(AssumeRoleCommand).rejects(Object.assign(new Error('User: x is not authorized to perform: sts:AssumeRole'), { name: 'AccessDenied', $metadata: { httpStatusCode: 403 } }));
    const cache = createSessionCache({ sts: new STSClient({ region: 'us-east-1' }), now: () => T0 });
    const err = (await cache.provider({ roleArn: ROLE, clusterId: 'c1', externalId: 'ext-1' })().catch((e: unknown) => e)) as Ec2Error;
    expect(err.kind).toBe('unauthorized');
    expect(err.message).toContain(ROLE);
    expect(err.message).toContain('cluster "c1"');
    expect(err.message).toContain("ExternalId");
  });

  it('stillGood -> true up to 5 minutes before expiry', () => {
    expect(stillGood(T0 + REFRESH_BEFORE_EXPIRY_MS + 1, T0)).toBe(true);
    expect(stillGood(T0 + REFRESH_BEFORE_EXPIRY_MS, T0)).toBe(false);
  });

  it('assumeRoleInput -> a session name of at most 64 characters', () => {
    expect(assumeRoleInput({ roleArn: ROLE, clusterId: 'c'.repeat(63) }).RoleSessionName).toHaveLength(64);
  });
});

describe('the registration names the role', () => {
  const base = { clusterId: 'c1', secrets: ['whsec_' + Buffer.alloc(32, 1).toString('base64')], region: 'us-east-1' };

  it('aws.roleArn and aws.externalId -> kept; the role account is the budget account', () => {
    const r = ClusterRegistrationSchema.parse({ ...base, aws: { roleArn: ROLE, externalId: 'volhook-ext-1' } });
    expect(r.aws).toEqual({ roleArn: ROLE, externalId: 'volhook-ext-1' });
    expect(accountOfRole(ROLE)).toBe('210987654321');
  });

  it.each([
    [{ roleArn: 'arn:aws:iam::2109876543:role/x' }, 'roleArn'],
    [{ roleArn: 'arn:aws:iam::210987654321:user/x' }, 'roleArn'],
    [{ externalId: 'x' }, 'externalId'],
    [{ nodeTag: { key: 'eks:cluster-name', value: 'prod' } }, 'nodeTag'],
  ])('aws %j -> refused, naming %s', (aws, field) => {
    const parsed = ClusterRegistrationSchema.safeParse({ ...base, aws });
    expect(parsed.success).toBe(false);
    expect(JSON.stringify(parsed.error?.issues)).toContain(field);
  });
});
