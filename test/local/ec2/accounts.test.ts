/**
 * Several accounts behind one simulator endpoint, as AWS has them: the credentials pick the
 * account. A backend key of account A assumes a role of account B and works in B's EC2; each
 * account has its own volumes, buckets and counters; the control endpoints address either.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { AttachVolumeCommand, CreateVolumeCommand, DeleteVolumeCommand, DescribeVolumesCommand, EC2Client } from '@aws-sdk/client-ec2';
import { AssumeRoleCommand, STSClient, type AssumeRoleCommandInput } from '@aws-sdk/client-sts';
import { afterEach, describe, expect, it } from 'vitest';
import type { IamPrincipal } from '../../../lib/iam/evaluate.js';
import type { PolicyDocument } from '../../../lib/iam/policy.js';
import { Ec2Simulator, ManualClock, type Ec2Role, type Ec2SimulatorOptions } from '../../../lib/local/ec2/index.js';
import { expectEc2Error, stsRefusal, simsClosedAfterEach, ZONE, type TestSim } from './helpers.js';

const run = promisify(execFile);
const A = '111111111111';
const B = '222222222222';
const UNHELD = '333333333333';
const ROLE = `arn:aws:iam::${B}:role/volhook/volhook-ec2-member`;
const UNHELD_ROLE = `arn:aws:iam::${UNHELD}:role/volhook/volhook-ec2-member`;
const EXTERNAL_ID = 'volhook-ext-b';
const CLUSTER_TAG = 'volhook.io/cluster';

const BACKEND: IamPrincipal = { arn: `arn:aws:sts::${A}:assumed-role/volhook-lambda/volhook`, accountId: A, policies: [] };
const describeAll: PolicyDocument = { Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: 'ec2:DescribeVolumes', Resource: '*' }] };
/** A principal of `accountId` that may describe volumes. */
const describer = (accountId: string): IamPrincipal => ({ arn: `arn:aws:iam::${accountId}:user/describer`, accountId, policies: [{ name: 'describe', document: describeAll }] });

/** A cluster's session: volumes tagged with its cluster id only (created so, deleted when so). */
const perCluster: PolicyDocument = {
  Version: '2012-10-17',
  Statement: [
    { Effect: 'Allow', Action: 'ec2:DescribeVolumes', Resource: '*' },
    {
      Effect: 'Allow',
      Action: 'ec2:CreateVolume',
      Resource: 'arn:aws:ec2:*:*:volume/*',
      Condition: { StringEquals: { [`aws:RequestTag/${CLUSTER_TAG}`]: '${aws:PrincipalTag/volhook-cluster}' } },
    },
    { Effect: 'Allow', Action: 'ec2:CreateTags', Resource: 'arn:aws:ec2:*:*:volume/*', Condition: { StringEquals: { 'ec2:CreateAction': 'CreateVolume' } } },
    {
      Effect: 'Allow',
      Action: 'ec2:DeleteVolume',
      Resource: 'arn:aws:ec2:*:*:volume/*',
      Condition: { StringEquals: { [`aws:ResourceTag/${CLUSTER_TAG}`]: '${aws:PrincipalTag/volhook-cluster}' } },
    },
  ],
};
const memberRole: Ec2Role = { policies: [{ name: 'per-cluster', document: perCluster }], trust: { principals: ['backend'], externalId: EXTERNAL_ID } };

const OPTIONS: Ec2SimulatorOptions = {
  accountId: A,
  accounts: [B],
  iam: {
    principals: { backend: BACKEND, 'describer-b': describer(B), 'describer-unheld': describer(UNHELD) },
    roles: { [ROLE]: memberRole, [UNHELD_ROLE]: memberRole },
    administrators: { 'admin-b': B },
  },
};

const startSim = simsClosedAfterEach();
const start = (options: Partial<Ec2SimulatorOptions> = {}, clock = new ManualClock()) => startSim({ ...OPTIONS, throttling: false, ...options }, clock);

const clients: { destroy(): void }[] = [];
afterEach(() => clients.splice(0).forEach((c) => c.destroy()));

function ec2(t: TestSim, credentials: { accessKeyId: string; secretAccessKey?: string; sessionToken?: string }): EC2Client {
  const client = new EC2Client({ endpoint: t.url, region: 'us-east-1', credentials: { secretAccessKey: 'x', ...credentials }, maxAttempts: 1 });
  clients.push(client);
  return client;
}

async function assume(t: TestSim, input: Partial<AssumeRoleCommandInput> = {}) {
  const client = new STSClient({ endpoint: t.url, region: 'us-east-1', credentials: { accessKeyId: 'backend', secretAccessKey: 'x' }, maxAttempts: 1 });
  clients.push(client);
  return client.send(
    new AssumeRoleCommand({ RoleArn: ROLE, RoleSessionName: 'volhook-c1', ExternalId: EXTERNAL_ID, Tags: [{ Key: 'volhook-cluster', Value: 'c1' }], DurationSeconds: 3600, ...input }),
  );
}

async function sessionEc2(t: TestSim, input: Partial<AssumeRoleCommandInput> = {}): Promise<EC2Client> {
  const c = (await assume(t, input)).Credentials!;
  return ec2(t, { accessKeyId: c.AccessKeyId!, secretAccessKey: c.SecretAccessKey!, sessionToken: c.SessionToken! });
}

const ids = (out: { Volumes?: { VolumeId?: string }[] }) => (out.Volumes ?? []).map((v) => v.VolumeId).sort();
const tagged = (cluster: string) => [{ ResourceType: 'volume' as const, Tags: [{ Key: CLUSTER_TAG, Value: cluster }] }];

describe('EC2 simulator: several accounts behind one endpoint', () => {
  it('a backend key of A assumes a role of B (ExternalId required) and creates and describes volumes in B; A’s administrator sees none of them, and B none of A’s', async () => {
    const t = await start();
    const noExternalId = await stsRefusal(assume(t, { ExternalId: undefined }));
    expect(noExternalId).toMatchObject({ name: 'AccessDenied', status: 403 });
    expect(noExternalId.message).toContain('requires an ExternalId');

    const out = await assume(t);
    expect(out.AssumedRoleUser?.Arn).toBe(`arn:aws:sts::${B}:assumed-role/volhook-ec2-member/volhook-c1`);
    const c = out.Credentials!;
    const session = ec2(t, { accessKeyId: c.AccessKeyId!, secretAccessKey: c.SecretAccessKey!, sessionToken: c.SessionToken! });
    const created = await session.send(new CreateVolumeCommand({ AvailabilityZone: ZONE, Size: 4, TagSpecifications: tagged('c1') }));
    const inB = created.VolumeId!;

    const inA = (await ec2(t, { accessKeyId: 'admin-a' }).send(new CreateVolumeCommand({ AvailabilityZone: ZONE, Size: 4 }))).VolumeId!;
    expect(t.sim.account(B).volume(inB)?.tags).toEqual([{ key: CLUSTER_TAG, value: 'c1' }]);
    expect(t.sim.volume(inB)).toBeUndefined();
    expect(t.sim.account(B).volume(inA)).toBeUndefined();

    expect(ids(await session.send(new DescribeVolumesCommand({})))).toEqual([inB]);
    expect(ids(await ec2(t, { accessKeyId: 'admin-b' }).send(new DescribeVolumesCommand({})))).toEqual([inB]);
    expect(ids(await ec2(t, { accessKeyId: 'admin-a' }).send(new DescribeVolumesCommand({})))).toEqual([inA]);
    // Naming the other account's volume is its NotFound, not a view of it.
    await expectEc2Error(ec2(t, { accessKeyId: 'admin-a' }).send(new DescribeVolumesCommand({ VolumeIds: [inB] })), 'InvalidVolume.NotFound');
  });

  it('AttachVolume of A’s volume from B is InvalidVolume.NotFound; B’s own volume on the same instance attaches', async () => {
    const t = await start();
    const node = t.sim.account(B).runInstance({ zone: ZONE });
    const [ofA] = t.sim.seedVolumes({ zone: ZONE });
    const [ofB] = t.sim.account(B).seedVolumes({ zone: ZONE });
    const admin = ec2(t, { accessKeyId: 'admin-b' });
    await expectEc2Error(admin.send(new AttachVolumeCommand({ VolumeId: ofA!.id, InstanceId: node.id, Device: '/dev/sdf' })), 'InvalidVolume.NotFound');
    expect(t.sim.volume(ofA!.id)?.attachments).toEqual([]);
    const ok = await admin.send(new AttachVolumeCommand({ VolumeId: ofB!.id, InstanceId: node.id, Device: '/dev/sdf' }));
    expect(ok.State).toBe('attaching');
  });

  it('the role’s policy fences B’s volumes by the session tag: c1’s is deleted, c2’s is UnauthorizedOperation naming the session and B’s volume ARN', async () => {
    const t = await start();
    const session = await sessionEc2(t);
    const [mine] = t.sim.account(B).seedVolumes({ zone: ZONE, tags: { [CLUSTER_TAG]: 'c1' } });
    const [theirs] = t.sim.account(B).seedVolumes({ zone: ZONE, tags: { [CLUSTER_TAG]: 'c2' } });

    const err = await expectEc2Error(session.send(new DeleteVolumeCommand({ VolumeId: theirs!.id })), 'UnauthorizedOperation', 403);
    expect(err.message).toContain(`User: arn:aws:sts::${B}:assumed-role/volhook-ec2-member/volhook-c1 is not authorized to perform: ec2:DeleteVolume on resource: arn:aws:ec2:us-east-1:${B}:volume/${theirs!.id}`);
    await session.send(new DeleteVolumeCommand({ VolumeId: mine!.id }));
    expect(['deleting', undefined]).toContain(t.sim.account(B).volume(mine!.id)?.state);
    expect(t.sim.account(B).volume(theirs!.id)?.state).toBe('available');

    const create = await expectEc2Error(session.send(new CreateVolumeCommand({ AvailabilityZone: ZONE, Size: 4, TagSpecifications: tagged('c2') })), 'UnauthorizedOperation', 403);
    expect(create.message).toContain(`ec2:CreateVolume on resource: arn:aws:ec2:us-east-1:${B}:volume/*`);
    expect(t.sim.account(B).volumes().filter((v) => v.tags.some((tag) => tag.value === 'c2')).map((v) => v.id)).toEqual([theirs!.id]);
  });

  it('each account has its own buckets and counters: A’s CreateVolume bucket runs dry, B still creates', async () => {
    const t = await start({ throttling: { enabled: true, buckets: { CreateVolume: { capacity: 2, refillPerSecond: 0.001 } } } });
    const adminA = ec2(t, { accessKeyId: 'admin-a' });
    const adminB = ec2(t, { accessKeyId: 'admin-b' });
    for (let n = 0; n < 2; n++) await adminA.send(new CreateVolumeCommand({ AvailabilityZone: ZONE, Size: 1 }));
    await expectEc2Error(adminA.send(new CreateVolumeCommand({ AvailabilityZone: ZONE, Size: 1 })), 'RequestLimitExceeded', 503);
    const inB = await adminB.send(new CreateVolumeCommand({ AvailabilityZone: ZONE, Size: 1 }));
    expect(t.sim.account(B).volume(inB.VolumeId!)).toBeDefined();

    expect(t.sim.buckets().CreateVolume?.tokens).toBe(0);
    expect(t.sim.account(B).buckets().CreateVolume?.tokens).toBe(1);
    expect(t.sim.getStats().actions.CreateVolume).toMatchObject({ calls: 3, ok: 2, throttled: 1 });
    expect(t.sim.account(B).getStats().actions.CreateVolume).toMatchObject({ calls: 1, ok: 1, throttled: 0 });
  });

  it('credentials of an account the simulator does not hold are AuthFailure (401) naming it; a principal of B through the same path describes', async () => {
    const t = await start();
    t.sim.account(B).seedVolumes({ zone: ZONE });
    const err = await expectEc2Error(ec2(t, { accessKeyId: 'describer-unheld' }).send(new DescribeVolumesCommand({})), 'AuthFailure', 401);
    expect(err.message).toContain(`account ${UNHELD}, which this simulator does not hold`);
    expect((await ec2(t, { accessKeyId: 'describer-b' }).send(new DescribeVolumesCommand({}))).Volumes).toHaveLength(1);
  });

  it('AssumeRole of a role in an account not held is AccessDenied naming the account; the same role in B is granted', async () => {
    const t = await start();
    const refused = await stsRefusal(assume(t, { RoleArn: UNHELD_ROLE }));
    expect(refused).toMatchObject({ name: 'AccessDenied', status: 403 });
    expect(refused.message).toContain(`the simulator holds no account ${UNHELD}`);
    expect((await assume(t)).Credentials?.AccessKeyId).toMatch(/^ASIA/);
  });

  it('roles and principals added after start: AssumeRole of a role not yet held is refused, then granted; a key becomes a principal of B', async () => {
    const t = await start();
    const later = `arn:aws:iam::${B}:role/volhook/volhook-ec2-later`;
    expect((await stsRefusal(assume(t, { RoleArn: later }))).message).toContain('no such role');
    t.sim.addRole(later, memberRole);
    expect((await assume(t, { RoleArn: later })).AssumedRoleUser?.Arn).toBe(`arn:aws:sts::${B}:assumed-role/volhook-ec2-later/volhook-c1`);
    expect(() => t.sim.addRole(later, memberRole)).toThrow(`role ${later} is already held`);
    expect(() => t.sim.addRole('arn:aws:iam::12:role/x', memberRole)).toThrow('is not a role ARN');

    const [ofB] = t.sim.account(B).seedVolumes({ zone: ZONE });
    const late = ec2(t, { accessKeyId: 'late' });
    expect(ids(await late.send(new DescribeVolumesCommand({})))).toEqual([]);
    t.sim.addPrincipal('late', describer(B));
    expect(ids(await late.send(new DescribeVolumesCommand({})))).toEqual([ofB!.id]);
    expect(() => t.sim.addPrincipal('admin-b', describer(B))).toThrow('access key admin-b already signs for someone');
  });

  it('sim.account(): the own id is the simulator itself, another its own view, an unknown id throws naming it; reset() clears every account', () => {
    const sim = new Ec2Simulator({ ...OPTIONS, seed: 1, throttling: false }, new ManualClock());
    expect(sim.accountIds()).toEqual([A, B]);
    expect(sim.account(A)).toBe(sim);
    const b = sim.account(B);
    expect(b.accountId).toBe(B);
    const node = b.runInstance({ zone: ZONE });
    const inB = b.seedVolumes({ zone: ZONE, count: 2 }).map((v) => v.id);
    const [inA] = sim.seedVolumes({ zone: ZONE });
    // The instance's root volume is B's too.
    expect(b.volumes().filter((v) => v.attachments.length === 0).map((v) => v.id).sort()).toEqual([...inB].sort());
    expect(b.instances().map((i) => i.id)).toEqual([node.id]);
    expect(sim.volumes().map((v) => v.id)).toEqual([inA!.id]);
    expect(sim.instances()).toEqual([]);
    expect(() => sim.account(UNHELD)).toThrow(`holds no account ${UNHELD}`);

    b.resetAccount();
    expect(b.volumes()).toEqual([]);
    expect(sim.volumes()).toHaveLength(1);
    b.seedVolumes({ zone: ZONE });
    sim.reset();
    expect(sim.volumes()).toEqual([]);
    expect(b.volumes()).toEqual([]);
  });

  it('account ids are checked: not 12 digits, twice (the own one counts), an administrator of an account not held are refused by name', () => {
    const make = (options: Ec2SimulatorOptions) => () => new Ec2Simulator({ seed: 1, ...options }, new ManualClock());
    expect(make({ accountId: A, accounts: [B] })).not.toThrow();
    expect(make({ accountId: A, accounts: ['2222'] })).toThrow('not "2222"');
    expect(make({ accountId: 'abc' })).toThrow('not "abc"');
    expect(make({ accountId: A, accounts: [B, A] })).toThrow(`more than once (the own account counts): ${A}`);
    expect(make({ accountId: A, iam: { administrators: { 'admin-c': UNHELD } } })).toThrow(`it does not hold: ${UNHELD}`);
    expect(make({ accountId: A, iam: { administrators: { 'admin-x': 'x' } } })).toThrow('names account "x", which is not 12 digits');
  });

  it('the control endpoints take ?account=<id>: state, volumes, stats and reset of B; without it the own account; an unknown one is 404', async () => {
    const t = await start();
    const post = (path: string, body?: unknown) => fetch(`${t.url}/_sim/${path}`, { method: 'POST', body: body === undefined ? undefined : JSON.stringify(body) });
    const seeded = (await (await post(`volumes?account=${B}`, { zone: ZONE })).json()) as { id: string }[];
    expect(t.sim.account(B).volume(seeded[0]!.id)).toBeDefined();
    const stateOf = async (query: string) => ((await (await fetch(`${t.url}/_sim/state${query}`)).json()) as { volumes: { id: string }[] }).volumes.map((v) => v.id);
    expect(await stateOf(`?account=${B}`)).toEqual([seeded[0]!.id]);
    expect(await stateOf('')).toEqual([]);
    expect(await stateOf(`?account=${A}`)).toEqual([]);

    await ec2(t, { accessKeyId: 'admin-b' }).send(new DescribeVolumesCommand({}));
    const stats = (await (await fetch(`${t.url}/_sim/stats?account=${B}`)).json()) as { actions: Record<string, { calls: number }> };
    expect(stats.actions.DescribeVolumes?.calls).toBe(1);
    expect(((await (await fetch(`${t.url}/_sim/stats`)).json()) as { actions: object }).actions).toEqual({});

    const unknown = await fetch(`${t.url}/_sim/state?account=${UNHELD}`);
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { error: string }).error).toContain(`holds no account "${UNHELD}"`);
    expect((await fetch(`${t.url}/_sim/config?account=${B}`)).status).toBe(400);
    expect(await (await fetch(`${t.url}/_sim/accounts`)).json()).toEqual([A, B]);

    t.sim.seedVolumes({ zone: ZONE });
    expect((await post(`reset?account=${B}`)).status).toBe(200);
    expect(t.sim.account(B).volumes()).toEqual([]);
    expect(t.sim.volumes()).toHaveLength(1);
  });

  it('persistence: each account’s volumes come back in that account after a restart (the own account in ec2-state.json, B under accounts/<id>/)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'volhook-ec2-accounts-'));
    try {
      const clock = new ManualClock();
      const first = new Ec2Simulator({ ...OPTIONS, seed: 1, throttling: false, stateDir: dir }, clock);
      const [ofA] = first.seedVolumes({ zone: ZONE });
      const [ofB] = first.account(B).seedVolumes({ zone: ZONE, tags: { [CLUSTER_TAG]: 'c1' } });
      first.flush();
      expect(existsSync(join(dir, 'ec2-state.json'))).toBe(true);
      expect(existsSync(join(dir, 'accounts', B, 'ec2-state.json'))).toBe(true);

      const second = new Ec2Simulator({ ...OPTIONS, seed: 1, throttling: false, stateDir: dir }, clock);
      expect(second.volumes().map((v) => v.id)).toEqual([ofA!.id]);
      expect(second.account(B).volumes().map((v) => v.id)).toEqual([ofB!.id]);
      expect(second.account(B).volume(ofB!.id)?.tags).toEqual([{ key: CLUSTER_TAG, value: 'c1' }]);

      // The own account's file alone loads as before, into a simulator holding one account.
      const single = new Ec2Simulator({ accountId: A, seed: 1, throttling: false, stateDir: dir }, clock);
      expect(single.volumes().map((v) => v.id)).toEqual([ofA!.id]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the AWS CLI assumes the role of B with ExternalId and a session tag, and describes B’s volumes only', async () => {
    const t = await start();
    const [ofB] = t.sim.account(B).seedVolumes({ zone: ZONE, tags: { [CLUSTER_TAG]: 'c1' } });
    t.sim.seedVolumes({ zone: ZONE });
    const base = {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/tmp',
      AWS_CONFIG_FILE: '/nonexistent/volhook-aws-config',
      AWS_SHARED_CREDENTIALS_FILE: '/nonexistent/volhook-aws-credentials',
      AWS_EC2_METADATA_DISABLED: 'true',
      AWS_MAX_ATTEMPTS: '1',
    };
    const common = ['--endpoint-url', t.url, '--region', 'us-east-1', '--output', 'json'];
    const assumed = await run(
      'aws',
      ['sts', 'assume-role', '--role-arn', ROLE, '--role-session-name', 'volhook-c1', '--external-id', EXTERNAL_ID, '--tags', 'Key=volhook-cluster,Value=c1', ...common],
      { env: { ...base, AWS_ACCESS_KEY_ID: 'backend', AWS_SECRET_ACCESS_KEY: 'x' }, timeout: 20_000 },
    );
    const out = JSON.parse(assumed.stdout) as { Credentials: { AccessKeyId: string; SecretAccessKey: string; SessionToken: string }; AssumedRoleUser: { Arn: string } };
    expect(out.AssumedRoleUser.Arn).toBe(`arn:aws:sts::${B}:assumed-role/volhook-ec2-member/volhook-c1`);
    const env = { ...base, AWS_ACCESS_KEY_ID: out.Credentials.AccessKeyId, AWS_SECRET_ACCESS_KEY: out.Credentials.SecretAccessKey, AWS_SESSION_TOKEN: out.Credentials.SessionToken };
    const described = await run('aws', ['ec2', 'describe-volumes', ...common], { env, timeout: 20_000 });
    expect((JSON.parse(described.stdout) as { Volumes: { VolumeId: string }[] }).Volumes.map((v) => v.VolumeId)).toEqual([ofB!.id]);
  });
});
