/**
 * The cluster CLI and sessions (issue 23, item 1): `add` takes the EC2 role, its ExternalId and
 * the nodes' tag (refused by the registration's own rules, naming the option), `show` prints
 * them, and `audit` / `remove --delete-volumes` assume the registration's role with the
 * operator's credentials, as the backend does.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DescribeSnapshotsCommand, DescribeVolumesCommand, EC2Client } from '@aws-sdk/client-ec2';
import { AssumeRoleCommand, STSClient } from '@aws-sdk/client-sts';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { commandUsage, runClusterCli, type CliIo } from '../../lib/cli/index.js';
import type { Ec2ClientOptions } from '../../lib/ec2/index.js';
import { createFileRegistry } from '../../lib/registry/index.js';

const ROLE = 'arn:aws:iam::222222222222:role/volhook/team-a';
let dir: string;
let file: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'volhook-cli-sessions-'));
  file = join(dir, 'clusters.json');
});

async function cli(argv: string[], io: Partial<CliIo> = {}) {
  let stdout = '';
  let stderr = '';
  const code = await runClusterCli(argv, { stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t), env: {}, ...io });
  return { code, stdout, stderr };
}

describe('cluster add --role-arn --external-id --node-tag', () => {
  it('-> stored as the registration\'s aws, read back by the backend\'s registry; show prints them', async () => {
    const added = await cli(['add', 'c1', '--region', 'us-east-1', '--role-arn', ROLE, '--external-id', 'team-a-ext', '--node-tag', 'eks:cluster-name=prod-eks', '--file', file]);
    expect(added.code).toBe(0);
    const aws = { roleArn: ROLE, externalId: 'team-a-ext', nodeTag: { key: 'eks:cluster-name', value: 'prod-eks' } };
    expect(JSON.parse(readFileSync(file, 'utf8')).clusters.c1.aws).toEqual(aws);
    expect((await createFileRegistry(file).get('c1'))?.aws).toEqual(aws);
    const shown = await cli(['show', 'c1', '--file', file]);
    expect(shown.code).toBe(0);
    expect(JSON.parse(shown.stdout).aws).toEqual(aws);
  });

  it('none of them -> the deployment\'s role, attaches fenced by default to the instances tagged <VOLHOOK_NODE_TAG_KEY>=<cluster id>, said on stderr', async () => {
    const res = await cli(['add', 'c1', '--region', 'us-east-1', '--file', file]);
    expect(res.code).toBe(0);
    expect(JSON.parse(readFileSync(file, 'utf8')).clusters.c1.aws).toEqual({ nodeTag: { key: 'eks:cluster-name', value: 'c1' } });
    expect(res.stderr).toContain('attaches are fenced to the instances tagged eks:cluster-name=c1');
  });

  it('--unfenced -> no aws in the registration (no fence, the deployment\'s role), said on stderr; with --node-tag -> exit 2, nothing written', async () => {
    const res = await cli(['add', 'c1', '--region', 'us-east-1', '--unfenced', '--file', file]);
    expect(res.code).toBe(0);
    expect(JSON.parse(readFileSync(file, 'utf8')).clusters.c1).not.toHaveProperty('aws');
    expect(res.stderr).toContain('attaches are NOT fenced (--unfenced)');
    const both = await cli(['add', 'c2', '--region', 'us-east-1', '--unfenced', '--node-tag', 'eks:cluster-name=c2', '--file', file]);
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/^error: --unfenced and --node-tag exclude each other/);
    expect(JSON.parse(readFileSync(file, 'utf8')).clusters).not.toHaveProperty('c2');
  });

  it.each([
    [['--role-arn', 'arn:aws:iam::123:role/x'], /^error: --role-arn: aws\.roleArn must be an IAM role ARN, arn:<partition>:iam::<12-digit account>:role\/<path\/><name>$/],
    [['--role-arn', 'arn:aws:iam::123456789012:user/x'], /^error: --role-arn: aws\.roleArn must be/],
    [['--external-id', 'x'], /^error: --external-id: aws\.externalId must be 2–1224 characters/],
    [['--node-tag', 'eks:cluster-name'], /^error: --node-tag: "eks:cluster-name" is not key=value$/],
    [['--node-tag', 'eks:cluster-name=a,b'], /^error: --node-tag: aws\.nodeTag\.value must be/],
    [['--node-tag', 'team=a'], /^error: --node-tag: registration of cluster "c2" names aws\.nodeTag\.key "team", but .* "eks:cluster-name" \(VOLHOOK_NODE_TAG_KEY\)/],
  ])('%j -> exit 2 naming the option, nothing written', async (extra, message) => {
    const res = await cli(['add', 'c2', '--region', 'us-east-1', ...extra, '--file', file]);
    expect(res.code).toBe(2);
    expect(res.stderr.split('\n')[0]).toMatch(message);
    expect(res.stdout).toBe('');
    expect(() => readFileSync(file)).toThrow();
  });

  it('control: --node-tag under the key VOLHOOK_NODE_TAG_KEY names -> accepted', async () => {
    const res = await cli(['add', 'c2', '--region', 'us-east-1', '--node-tag', 'team=a', '--file', file], { env: { VOLHOOK_NODE_TAG_KEY: 'team' } });
    expect(res.code).toBe(0);
    expect(JSON.parse(readFileSync(file, 'utf8')).clusters.c2.aws).toEqual({ nodeTag: { key: 'team', value: 'a' } });
  });

  it("add's help lists the three; audit's and remove's say the operator's credentials assume the registration's role", () => {
    const add = commandUsage('add');
    for (const option of ['--role-arn <arn>', '--external-id <id>', '--node-tag key=value']) expect(add).toContain(`  ${option}`);
    for (const command of ['audit', 'remove'] as const) expect(commandUsage(command)).toMatch(/names aws\.roleArn \(or VOLHOOK_EC2_ROLE_ARN is set\), they assume that role as the backend does/);
  });
});

describe("audit and teardown from an operator's machine", () => {
  const ec2Mock = mockClient(EC2Client);
  const stsMock = mockClient(STSClient);
  const sts = new STSClient({ region: 'us-east-1', credentials: { accessKeyId: 'AKIDOPERATOR', secretAccessKey: 'op' } });
  let given: Array<Ec2ClientOptions['credentials']> = [];
  let signedWith: string[] = [];
  const io = (): Partial<CliIo> => ({
    stsClient: () => sts,
    ec2Client: (region, _endpoint, credentials) => {
      given.push(credentials);
      return new EC2Client({ region, credentials: credentials ?? { accessKeyId: 'AKIDOPERATOR', secretAccessKey: 'op' } });
    },
  });

  beforeEach(() => {
    ec2Mock.reset();
    stsMock.reset();
    given = [];
    signedWith = [];
    const signed = async (getClient: () => EC2Client) => {
      signedWith.push((await (getClient().config.credentials as () => Promise<{ accessKeyId: string }>)()).accessKeyId);
    };
    ec2Mock.on(DescribeVolumesCommand).callsFake(async (_i, getClient) => (await signed(getClient), { Volumes: [] }));
    ec2Mock.on(DescribeSnapshotsCommand).callsFake(async (_i, getClient) => (await signed(getClient), { Snapshots: [] }));
    stsMock.on(AssumeRoleCommand).resolves({ Credentials: { AccessKeyId: 'ASIASESSION', SecretAccessKey: 's', SessionToken: 't', Expiration: new Date(Date.now() + 3_600_000) } });
  });
  afterAll(() => {
    ec2Mock.restore();
    stsMock.restore();
  });

  const add = (...extra: string[]) => cli(['add', 'c1', '--region', 'us-east-1', ...extra, '--file', file]);

  it.each([
    ['audit', ['audit', 'c1']],
    ['remove --delete-volumes', ['remove', 'c1', '--delete-volumes', '--yes']],
  ])("%s of a cluster whose registration names a role -> the operator's credentials assume it (tags, ExternalId) and sign every EC2 call with the session", async (_name, argv) => {
    await add('--role-arn', ROLE, '--external-id', 'team-a-ext');
    const res = await cli([...argv, '--file', file, '--reports-dir', join(dir, 'reports')], io());
    expect(res.stderr).not.toMatch(/^error/m);
    expect(res.code).toBe(0);
    expect(stsMock.commandCalls(AssumeRoleCommand).map((c) => c.args[0].input)).toEqual([
      { RoleArn: ROLE, RoleSessionName: 'volhook-c1', DurationSeconds: 3600, ExternalId: 'team-a-ext', Tags: [{ Key: 'volhook-cluster', Value: 'c1' }, { Key: 'volhook-nodes', Value: 'c1' }] },
    ]);
    expect(given).toHaveLength(1);
    expect(typeof given[0]).toBe('function');
    expect(signedWith.length).toBeGreaterThan(0);
    expect(new Set(signedWith)).toEqual(new Set(['ASIASESSION']));
  });

  it("control: no role in the registration nor VOLHOOK_EC2_ROLE_ARN -> the operator's credentials call EC2 directly, no AssumeRole", async () => {
    await add();
    const res = await cli(['audit', 'c1', '--file', file, '--reports-dir', join(dir, 'reports')], io());
    expect(res.code).toBe(0);
    expect(stsMock.calls()).toHaveLength(0);
    expect(given).toEqual([undefined]);
    expect(new Set(signedWith)).toEqual(new Set(['AKIDOPERATOR']));
  });

  it("VOLHOOK_EC2_ROLE_ARN in the operator's environment -> that role, for a registration naming none", async () => {
    await add();
    const res = await cli(['audit', 'c1', '--file', file, '--reports-dir', join(dir, 'reports')], { ...io(), env: { VOLHOOK_EC2_ROLE_ARN: ROLE } });
    expect(res.code).toBe(0);
    expect(stsMock.commandCalls(AssumeRoleCommand).map((c) => c.args[0].input.RoleArn)).toEqual([ROLE]);
    expect(new Set(signedWith)).toEqual(new Set(['ASIASESSION']));
  });
});
