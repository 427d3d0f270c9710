/**
 * `osls package` on this checkout, with no AWS credentials anywhere, into a fresh directory;
 * then the CloudFormation it generates is held to the deployment's promises: two arm64
 * nodejs24.x functions (the API behind an HTTP API route for each of the app's, the hourly audit), a Lambda role
 * that only assumes roles under /volhook/ (and reads its tables and parameters), an EC2 role it
 * may assume, without wildcard actions and with a tag condition on every mutating EC2 action
 * (ebs.csi.aws.com/cluster and the cluster fence, volhook.io/cluster), SSM limited to the
 * registry path, DynamoDB PutItem limited to the replay table (with TTL) — and the zip holds
 * the ESM bundle (entry and chunks) that bench/coldstart.ts measures.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { Hono } from 'hono';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildFunctionBundle } from '../../bench/esbuild-options.js';
import { resolveIntrinsics } from '../../lib/iam/cloudformation.js';
import { EC2_ROLE_PATH, EC2_ROLE_POLICY_NAME } from '../../lib/iam/ec2-role-templates.js';
import { ec2RoleArn, ec2RolePolicy, lambdaRolePolicy } from '../../lib/iam/role-policy.js';
import { monitoringResources } from '../../lib/observability/monitoring.js';
import { makeApp } from '../app/harness.js';
import { readZip } from './zip.js';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const STAGE = 'test';
const REGISTRY_ARN = 'arn:${AWS::Partition}:ssm:${AWS::Region}:${AWS::AccountId}:parameter/volhook/test/clusters/*';
const VOLUME_ARN = 'arn:${AWS::Partition}:ec2:*:${AWS::AccountId}:volume/*';
const INSTANCE_ARN = 'arn:${AWS::Partition}:ec2:*:${AWS::AccountId}:instance/*';
// Snapshot ARNs carry no account.
const SNAPSHOT_ARN = 'arn:${AWS::Partition}:ec2:*::snapshot/*';
const EC2_ROLES_ARN = 'arn:${AWS::Partition}:iam::*:role/volhook/*';
/** A table's ARN as the Lambda role's statements write it: in the deployment's own account and Region. */
const tableArnSub = (name: string) => `arn:\${AWS::Partition}:dynamodb:\${AWS::Region}:\${AWS::AccountId}:table/${name}`;
/** The fence's value: the session's cluster (CloudFormation writes `${!x}` as `${x}`). */
const SESSION_CLUSTER = '${!aws:PrincipalTag/volhook-cluster}';

interface Resource {
  Type: string;
  Properties: Record<string, any>;
}
interface Statement {
  Sid?: string;
  Effect: string;
  Action?: string | string[];
  NotAction?: unknown;
  Resource?: unknown;
  NotResource?: unknown;
  Condition?: Record<string, Record<string, unknown>>;
}

interface CfnTemplate {
  Resources: Record<string, Resource & { Condition?: string }>;
  Conditions?: Record<string, unknown>;
  Outputs?: Record<string, { Condition?: string; Value: unknown }>;
}

let outDir: string;
let template: CfnTemplate;
let templateText: string;

/** The environment of a machine that has never seen AWS: no keys, no profile, no IMDS. */
function credentialFreeEnv(): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('AWS_') && !k.startsWith('VOLHOOK_')));
  return {
    ...env,
    AWS_SHARED_CREDENTIALS_FILE: join(outDir, 'no-credentials'),
    AWS_CONFIG_FILE: join(outDir, 'no-config'),
    AWS_EC2_METADATA_DISABLED: 'true',
    SLS_TELEMETRY_DISABLED: '1',
    SLS_NOTIFICATIONS_MODE: 'off',
    // A work folder of its own (deleted by serverless-esbuild afterwards): nothing shared or cached.
    VOLHOOK_ESBUILD_WORK_FOLDER: `.esbuild/test-package-${process.pid}-${Date.now()}`,
  };
}

/** `osls package` into `dir`, stage params overridden by `--param="key=value"`; the template's text. */
async function packageInto(dir: string, params: Record<string, string> = {}): Promise<string> {
  const paramArgs = Object.entries(params).map(([key, value]) => `--param=${key}=${value}`);
  await promisify(execFile)('npx', ['osls', 'package', '--stage', STAGE, '--region', 'us-east-1', '--package', dir, ...paramArgs], {
    cwd: repoRoot,
    env: credentialFreeEnv(),
    timeout: 170_000,
    maxBuffer: 16 * 1024 * 1024,
  });
  return readFileSync(join(dir, 'cloudformation-template-update-stack.json'), 'utf8');
}

beforeAll(async () => {
  outDir = mkdtempSync(join(tmpdir(), 'volhook-package-'));
  templateText = await packageInto(outDir);
  template = JSON.parse(templateText);
}, 180_000);

/**
 * The HTTP API route keys of the app's routes (`app.routes`), as serverless.yml writes them:
 * `:param` as `{param}`, hono's ALL as ANY; middleware (`use`, on every path) is no route.
 */
function appRouteKeys(app: Pick<Hono, 'routes'>): string[] {
  const keys = app.routes
    .filter((route) => !(route.method === 'ALL' && route.path === '/*'))
    .map((route) => `${route.method === 'ALL' ? 'ANY' : route.method} ${route.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}')}`);
  return [...new Set(keys)].sort();
}

const ofType = (type: string) => Object.values(template.Resources).filter((r) => r.Type === type);
const list = <T>(v: T | T[] | undefined): T[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);
/** `{ "Fn::Sub": "arn:…" }` → `arn:…`; plain strings as they are. */
const arn = (r: unknown): string => (typeof r === 'string' ? r : ((r as { 'Fn::Sub'?: string })['Fn::Sub'] ?? JSON.stringify(r)));

/** A policy document as the template has it: an object, or the JSON text of an Fn::Sub (read unsubstituted). */
function documentOf(document: any): { Statement: Statement[] } {
  const sub = document?.['Fn::Sub'];
  if (sub === undefined) return document;
  return JSON.parse(Array.isArray(sub) ? sub[0] : sub);
}
function roleStatements(role: Resource): Statement[] {
  return list(role.Properties.Policies).flatMap((p: any) => list<Statement>(documentOf(p.PolicyDocument).Statement));
}
function statements(): Statement[] {
  const inline = ofType('AWS::IAM::Role').flatMap(roleStatements);
  const attached = [...ofType('AWS::IAM::Policy'), ...ofType('AWS::IAM::ManagedPolicy')].flatMap((p) => list<Statement>(documentOf(p.Properties.PolicyDocument).Statement));
  return [...inline, ...attached];
}
const lambdaRole = () => template.Resources.IamRoleLambdaExecution!;
const ec2Role = () => template.Resources.Ec2Role!;
const grants = (action: string) => statements().filter((s) => s.Effect === 'Allow' && list(s.Action).includes(action));

describe('osls package (no credentials, no AWS) -> CloudFormation', () => {
  it('two functions: the API (functions/api.handler) and the scheduled audit (functions/audit.handler), both with the registry, the report table, the EC2 role and the node tag key', () => {
    const handlers = ofType('AWS::Lambda::Function').map((f) => f.Properties.Handler).sort();
    expect(handlers).toEqual(['functions/api.handler', 'functions/audit.handler']);
    for (const f of ofType('AWS::Lambda::Function')) {
      expect(f.Properties.Environment.Variables).toMatchObject({
        VOLHOOK_REGISTRY_SSM_PATH: `/volhook/${STAGE}/clusters/`,
        VOLHOOK_REPORTS_TABLE: `volhook-${STAGE}-reports`,
        VOLHOOK_EC2_ROLE_ARN: { 'Fn::GetAtt': ['Ec2Role', 'Arn'] },
        VOLHOOK_NODE_TAG_KEY: 'eks:cluster-name',
      });
    }
  });

  it('the audit runs hourly from an EventBridge schedule, with time for 20 describe pages and paced deletes', () => {
    const audit = template.Resources.AuditLambdaFunction!.Properties;
    expect(audit.Timeout).toBeGreaterThanOrEqual(300);
    expect(audit.Timeout).toBeLessThanOrEqual(900);
    const rules = ofType('AWS::Events::Rule');
    expect(rules).toHaveLength(1);
    expect(rules[0]!.Properties.ScheduleExpression).toBe('rate(1 hour)');
    expect(rules[0]!.Properties.State).toBe('ENABLED');
    expect(rules[0]!.Properties.Targets).toEqual([expect.objectContaining({ Arn: { 'Fn::GetAtt': ['AuditLambdaFunction', 'Arn'] } })]);
  });

  it('the dashboard and alarms are the ones lib/observability/monitoring.ts defines; alarms notify the SNS topic', () => {
    const generated = monitoringResources();
    for (const [id, resource] of Object.entries(generated.Resources)) expect(template.Resources[id], id).toEqual(resource);
    const body = template.Resources.FleetDashboard!.Properties.DashboardBody['Fn::Sub'] as string;
    // Every substitution names something the template has.
    for (const [, name] of body.matchAll(/\$\{([^}]+)\}/g)) expect(name === 'AWS::Region' || name! in template.Resources, name).toBe(true);
    const alarms = ofType('AWS::CloudWatch::Alarm');
    expect(alarms).toHaveLength(5);
    for (const a of alarms) expect(a.Properties.AlarmActions).toEqual([{ Ref: 'AlarmTopic' }]);
    expect(ofType('AWS::SNS::Topic')).toHaveLength(1);
  });

  it('the API function: nodejs24.x, arm64, timeout under 30 s, SSM registry path', () => {
    const fn = template.Resources.ApiLambdaFunction!.Properties;
    expect(fn.Handler).toBe('functions/api.handler');
    expect(fn.Runtime).toBe('nodejs24.x');
    expect(fn.Architectures).toEqual(['arm64']);
    expect(fn.Timeout).toBeLessThan(30);
    expect(fn.MemorySize).toBeGreaterThanOrEqual(256);
    expect(fn.Environment.Variables).toMatchObject({
      VOLHOOK_REGISTRY_SSM_PATH: `/volhook/${STAGE}/clusters/`,
      POWERTOOLS_SERVICE_NAME: 'volhook',
      POWERTOOLS_METRICS_NAMESPACE: 'volhook',
    });
    expect(fn.Environment.Variables).not.toHaveProperty('VOLHOOK_REGISTRY_FILE');
  });

  it("HTTP API: a route for every route the app serves (lib/app/app.ts) and no other, payload 2.0; logs kept 30 days", () => {
    expect(ofType('AWS::ApiGatewayV2::Api').map((a) => a.Properties.ProtocolType)).toEqual(['HTTP']);
    // API Gateway answers a path its template does not route itself (404 {"message":"Not Found"}),
    // before the function: a route added to the app needs its line in serverless.yml.
    const served = appRouteKeys(makeApp().app);
    expect(served).toEqual(expect.arrayContaining(['GET /healthz', 'POST /v1/clusters/{clusterId}/check', 'POST /v1/clusters/{clusterId}/reconcile']));
    expect(ofType('AWS::ApiGatewayV2::Route').map((r) => r.Properties.RouteKey).sort()).toEqual(served);
    // Control: a route added to the app alone is seen, and is not in the template.
    const grown = makeApp().app;
    grown.get('/v1/clusters/:clusterId/status', (c) => c.json({}));
    expect(appRouteKeys(grown)).toEqual([...served, 'GET /v1/clusters/{clusterId}/status'].sort());
    expect(ofType('AWS::ApiGatewayV2::Route').map((r) => r.Properties.RouteKey)).not.toContain('GET /v1/clusters/{clusterId}/status');
    expect(ofType('AWS::ApiGatewayV2::Integration').map((i) => i.Properties.PayloadFormatVersion)).toEqual(['2.0']);
    expect(ofType('AWS::Logs::LogGroup').map((g) => g.Properties.RetentionInDays)).toEqual([30, 30, 30]);
  });

  it('security: the stage throttles every route (rate and burst, stage params) and writes access logs as JSON lines to its log group', () => {
    const stage = template.Resources.HttpApiStage!.Properties;
    expect(stage.DefaultRouteSettings).toEqual({ ThrottlingRateLimit: 100, ThrottlingBurstLimit: 200 });
    expect(stage.AccessLogSettings.DestinationArn).toEqual({ 'Fn::GetAtt': ['HttpApiLogGroup', 'Arn'] });
    const format = JSON.parse(stage.AccessLogSettings.Format) as Record<string, string>;
    expect(format).toMatchObject({ requestId: '$context.requestId', ip: '$context.identity.sourceIp', routeKey: '$context.routeKey', status: '$context.status' });
    // Nothing a request carries beyond its line: no header (the signature is one), no body.
    expect(Object.values(format).filter((v) => /header|body|authorizer/i.test(v))).toEqual([]);
    expect(template.Resources.HttpApiLogGroup!.Type).toBe('AWS::Logs::LogGroup');
  });

  it('security: reserved concurrency, the API\'s a stage param (50), the audit\'s 1 (runs never overlap)', () => {
    expect(template.Resources.ApiLambdaFunction!.Properties.ReservedConcurrentExecutions).toBe(50);
    expect(template.Resources.AuditLambdaFunction!.Properties.ReservedConcurrentExecutions).toBe(1);
  });

  it('security: every table with point-in-time recovery, and its encryption the customer key of tableKmsKeyArn when given (DynamoDB\'s own by default)', () => {
    const tables = ofType('AWS::DynamoDB::Table');
    expect(tables).toHaveLength(3);
    for (const table of tables) {
      expect(table.Properties.PointInTimeRecoverySpecification, table.Properties.TableName).toEqual({ PointInTimeRecoveryEnabled: true });
      expect(table.Properties.SSESpecification, table.Properties.TableName).toEqual({ 'Fn::If': ['TablesCustomerKey', { SSEEnabled: true, SSEType: 'KMS', KMSMasterKeyId: '' }, { Ref: 'AWS::NoValue' }] });
    }
    expect(decide(template, template.Conditions?.TablesCustomerKey)).toBe(false);
  });

  it("docs/deploy.md's prerequisites name every resource type the template has (with the options'), and no other", () => {
    const docs = readFileSync(join(repoRoot, 'docs/deploy.md'), 'utf8');
    const table = docs.split('The resource types a deployment creates')[1]!.split('\n\n')[1]!;
    const named = table.split('\n').filter((line) => line.startsWith('| `')).map((line) => /^\| `([A-Za-z0-9:]+)`/.exec(line)?.[1]);
    expect(named.length).toBeGreaterThan(10);
    expect([...named].sort()).toEqual([...new Set(Object.values(template.Resources).map((r) => r.Type))].sort());
  });

  it("docs/deploy.md's table of what a deployment creates -> names every resource of the template, and nothing else", () => {
    const docs = readFileSync(join(repoRoot, 'docs/deploy.md'), 'utf8');
    const table = docs.split('What a deployment creates')[1]!.split('\n\n')[1]!;
    const named = table
      .split('\n')
      .filter((line) => line.startsWith('| `'))
      .flatMap((line) => [...line.split('|')[1]!.matchAll(/`([A-Za-z0-9]+)`/g)].map((m) => m[1]!));
    expect(named.length).toBeGreaterThan(20);
    // The mutual-TLS option's two are there too, under a condition false by default.
    expect([...named].sort()).toEqual(Object.keys(template.Resources).sort());
  });

  it('nothing was resolved against AWS: no ${aws:…}, ${ssm:…} or ${cf:…} variables, account from AWS::AccountId', () => {
    expect(templateText).not.toMatch(/\$\{(aws|ssm|cf|s3|param|sls|opt|env|self):/);
    expect(templateText).not.toMatch(/arn:[^"]*:\d{12}:/);
  });

  it('IAM: every statement allows but the one that refuses the scope keys in any case; each names its actions, and none is a wildcard', () => {
    const all = statements();
    expect(all.length).toBeGreaterThan(0);
    expect(all.filter((s) => s.Effect !== 'Allow').map((s) => [s.Sid, list(s.Action)])).toEqual([['NoScopeKeysInAnyCase', ['ec2:CreateTags', 'ec2:DeleteTags']]]);
    for (const s of all) {
      expect(s.NotAction).toBeUndefined();
      expect(s.NotResource).toBeUndefined();
      for (const action of list(s.Action)) expect(action, `${s.Sid ?? ''} ${action}`).not.toContain('*');
    }
  });

  it('IAM: the role policies the local stack evaluates (lib/iam/role-policy.ts, read from serverless.yml) are the packaged ones, resolved as CloudFormation does: the Lambda role and the EC2 role', () => {
    const roles = ofType('AWS::IAM::Role').filter((r) => list(r.Properties.Policies).length > 0);
    expect(roles).toEqual([lambdaRole(), ec2Role()]);
    const ctx = { partition: 'aws', region: 'eu-west-1', accountId: '210987654321', resources: template.Resources };
    const where = { stage: STAGE, region: 'eu-west-1', accountId: '210987654321' };
    // The framework adds the statements of the functions' log groups (logs:*) itself.
    const lambda = list(lambdaRole().Properties.Policies)
      .flatMap((p: any) => list<Statement>(p.PolicyDocument.Statement))
      .filter((s) => !list(s.Action).every((a) => a.startsWith('logs:')));
    expect(resolveIntrinsics(lambda, ctx)).toEqual(lambdaRolePolicy(where).Statement);
    // The EC2 role's one inline policy, an Fn::Sub of its JSON text.
    expect(list(ec2Role().Properties.Policies).map((p: any) => p.PolicyName)).toEqual([EC2_ROLE_POLICY_NAME]);
    const ec2 = JSON.parse(resolveIntrinsics(ec2Role().Properties.Policies[0].PolicyDocument, ctx) as string);
    // (lib/iam writes every Action as a list, as the framework does for the Lambda role.)
    expect(ec2.Statement.map((s: Statement) => ({ ...s, Action: list(s.Action) }))).toEqual(ec2RolePolicy(where).Statement);
    expect(resolveIntrinsics({ 'Fn::GetAtt': ['Ec2Role', 'Arn'] }, ctx)).toBe(ec2RoleArn(where));
  });

  it('IAM: the EC2 role lives under /volhook/, is named for stage and Region, and trusts the Lambda role alone (AssumeRole and TagSession)', () => {
    const role = ec2Role().Properties;
    expect(role.Path).toBe(EC2_ROLE_PATH);
    expect(role.RoleName).toEqual({ 'Fn::Sub': `volhook-${STAGE}-\${AWS::Region}-ec2` });
    expect(role.AssumeRolePolicyDocument.Statement).toEqual([
      { Sid: 'TheLambdaRole', Effect: 'Allow', Principal: { AWS: { 'Fn::GetAtt': ['IamRoleLambdaExecution', 'Arn'] } }, Action: ['sts:AssumeRole', 'sts:TagSession'] },
    ]);
    // The node tag key is the deployment's parameter.
    expect(role.Policies[0].PolicyDocument['Fn::Sub'][1]).toEqual({ NodeTagKey: 'eks:cluster-name' });
  });

  it('IAM: the Lambda role makes no EC2 call; it assumes roles under /volhook/ only, tagging sessions with volhook-cluster (required) and volhook-nodes only', () => {
    const own = roleStatements(lambdaRole());
    expect(own.flatMap((s) => list(s.Action)).filter((a) => a.startsWith('ec2:'))).toEqual([]);
    const sts = own.filter((s) => list(s.Action).some((a) => a.startsWith('sts:')));
    expect(sts.map((s) => [list(s.Action), list(s.Resource).map(arn)])).toEqual([
      [['sts:AssumeRole'], [EC2_ROLES_ARN]],
      [['sts:TagSession'], [EC2_ROLES_ARN]],
    ]);
    // Only in this account and those memberAccounts lists (none by default: this one again).
    const listedAccounts = { 'aws:ResourceAccount': { 'Fn::Split': [',', { 'Fn::Sub': '${AWS::AccountId},${AWS::AccountId}' }] } };
    expect(sts[0]!.Condition).toEqual({ StringEquals: listedAccounts });
    expect(sts[1]!.Condition).toEqual({ 'ForAllValues:StringEquals': { 'aws:TagKeys': ['volhook-cluster', 'volhook-nodes'] }, Null: { 'aws:RequestTag/volhook-cluster': 'false' }, StringEquals: listedAccounts });
    // Every EC2 grant is the EC2 role's.
    const ec2Actions = new Set(roleStatements(ec2Role()).flatMap((s) => list(s.Action)));
    for (const action of statements().flatMap((s) => list(s.Action)).filter((a) => a.startsWith('ec2:'))) expect(ec2Actions).toContain(action);
  });

  it('IAM: EC2 grants exactly what the gateway needs, nothing else', () => {
    const ec2 = new Set(statements().flatMap((s) => list(s.Action)).filter((a) => a.startsWith('ec2:')));
    expect([...ec2].sort()).toEqual(
      [
        'ec2:AttachVolume',
        'ec2:CopySnapshot',
        'ec2:CopyVolumes',
        'ec2:CreateSnapshot',
        'ec2:CreateSnapshots',
        'ec2:CreateTags',
        'ec2:CreateVolume',
        'ec2:DeleteSnapshot',
        'ec2:DeleteTags',
        'ec2:DeleteVolume',
        'ec2:DescribeAvailabilityZones',
        'ec2:DescribeInstances',
        'ec2:DescribeSnapshots',
        'ec2:DescribeVolumeStatus',
        'ec2:DescribeVolumes',
        'ec2:EnableFastSnapshotRestores',
        'ec2:DescribeVolumesModifications',
        'ec2:DetachVolume',
        'ec2:ModifyVolume',
      ].sort(),
    );
  });

  it('IAM: only Describe* on "*"; every other grant names resources', () => {
    expect.hasAssertions();
    const all = statements();
    expect(all.length).toBeGreaterThan(0);
    for (const s of all) {
      const resources = list(s.Resource).map(arn);
      const what = `${s.Sid ?? ''} ${JSON.stringify(s.Action)} on ${JSON.stringify(resources)}`;
      if (resources.includes('*') && s.Effect === 'Deny') {
        expect(list(s.Action).sort(), what).toEqual(['ec2:CreateTags', 'ec2:DeleteTags']);
      } else if (resources.includes('*')) {
        // Only Describe* on "*".
        expect(list(s.Action).length, what).toBeGreaterThan(0);
        for (const action of list(s.Action)) expect(action, what).toMatch(/^ec2:Describe/);
      } else {
        // Every other grant names its resources: at least one, none empty, none "*".
        expect(resources.length, what).toBeGreaterThan(0);
        for (const r of resources) {
          expect(r, what).not.toBe('');
          expect(r, what).not.toBe('*');
        }
      }
    }
  });

  it.each(['ec2:CreateVolume', 'ec2:CopyVolumes'])('IAM: %s makes volumes only with request tag ebs.csi.aws.com/cluster=true, from sources only tagged so', (action) => {
    const statementsFor = grants(action);
    expect(statementsFor.length).toBeGreaterThan(0);
    for (const s of statementsFor) {
      const resources = list(s.Resource).map(arn);
      const requestTag = s.Condition?.StringEquals?.['aws:RequestTag/ebs.csi.aws.com/cluster'];
      const resourceTag = s.Condition?.StringEquals?.['aws:ResourceTag/ebs.csi.aws.com/cluster'];
      // A statement holds either the new volume (by the request's tags) or a source (by its own),
      // and the cluster fence on the same side: the session's cluster.
      expect([requestTag, resourceTag].filter((v) => v !== undefined)).toEqual(['true']);
      const side = requestTag === undefined ? 'aws:ResourceTag' : 'aws:RequestTag';
      expect(s.Condition?.StringEquals?.[`${side}/volhook.io/cluster`]).toBe(SESSION_CLUSTER);
      if (resources.includes(SNAPSHOT_ARN)) {
        expect(action).toBe('ec2:CreateVolume');
        expect(resourceTag).toBe('true');
        expect(resources).toEqual([SNAPSHOT_ARN]);
      } else {
        expect(resources).toEqual([VOLUME_ARN]);
      }
    }
  });

  it('IAM: CreateSnapshot only of tagged volumes and with request tag ebs.csi.aws.com/cluster=true on the snapshot', () => {
    const statementsFor = grants('ec2:CreateSnapshot');
    expect(statementsFor.map((s) => list(s.Resource).map(arn)).sort()).toEqual([[SNAPSHOT_ARN], [VOLUME_ARN]].sort());
    for (const s of statementsFor) {
      const onSnapshots = list(s.Resource).map(arn).includes(SNAPSHOT_ARN);
      const side = onSnapshots ? 'aws:RequestTag' : 'aws:ResourceTag';
      expect(s.Condition?.StringEquals?.[`${side}/ebs.csi.aws.com/cluster`]).toBe('true');
      expect(s.Condition?.StringEquals?.[`${side}/volhook.io/cluster`]).toBe(SESSION_CLUSTER);
    }
  });

  it.each(['ec2:DeleteSnapshot', 'ec2:EnableFastSnapshotRestores'])('IAM: %s only on snapshots tagged ebs.csi.aws.com/cluster=true', (action) => {
    const statementsFor = grants(action);
    expect(statementsFor.length).toBeGreaterThan(0);
    for (const s of statementsFor) {
      expect(s.Condition?.StringEquals?.['aws:ResourceTag/ebs.csi.aws.com/cluster']).toBe('true');
      expect(s.Condition?.StringEquals?.['aws:ResourceTag/volhook.io/cluster']).toBe(SESSION_CLUSTER);
      expect(list(s.Resource).map(arn)).toEqual([SNAPSHOT_ARN]);
    }
  });

  it('IAM: CopySnapshot only of snapshots tagged for the session\'s cluster, into copies the request tags so', () => {
    const statementsFor = grants('ec2:CopySnapshot');
    expect(statementsFor).toHaveLength(2);
    const sides = statementsFor.map((s) => {
      expect(list(s.Resource).map(arn)).toEqual([SNAPSHOT_ARN]);
      const side = s.Condition?.StringEquals?.['aws:RequestTag/ebs.csi.aws.com/cluster'] === undefined ? 'aws:ResourceTag' : 'aws:RequestTag';
      expect(s.Condition?.StringEquals?.[`${side}/ebs.csi.aws.com/cluster`]).toBe('true');
      expect(s.Condition?.StringEquals?.[`${side}/volhook.io/cluster`]).toBe(SESSION_CLUSTER);
      return side;
    });
    expect(sides.sort()).toEqual(['aws:RequestTag', 'aws:ResourceTag']);
  });

  it('IAM: CreateTags as part of CreateVolume/CreateSnapshot/CreateSnapshots/CopyVolumes/CopySnapshot, or on volumes tagged ebs.csi.aws.com/cluster=true without the ownership keys', () => {
    const statementsFor = grants('ec2:CreateTags');
    expect(statementsFor.length).toBe(2);
    const atCreate = statementsFor.filter((s) => s.Condition?.StringEquals?.['ec2:CreateAction'] !== undefined);
    expect(atCreate).toHaveLength(1);
    for (const s of atCreate) {
      expect(list(s.Condition?.StringEquals?.['ec2:CreateAction']).sort()).toEqual(['CopySnapshot', 'CopyVolumes', 'CreateSnapshot', 'CreateSnapshots', 'CreateVolume']);
      expect(Object.keys(s.Condition ?? {})).toEqual(['StringEquals']);
      expect(s.Condition?.StringEquals?.['aws:RequestTag/volhook.io/cluster']).toBe(SESSION_CLUSTER);
    }
  });

  it.each(['ec2:CreateTags', 'ec2:DeleteTags'])('IAM: %s on existing volumes only when tagged ebs.csi.aws.com/cluster=true, never kubernetes.io*, ebs.csi.aws.com/* or CSIVolumeName', (action) => {
    const retag = grants(action).filter((s) => s.Condition?.StringEquals?.['ec2:CreateAction'] === undefined);
    expect(retag).toHaveLength(1);
    for (const s of retag) {
      expect(list(s.Resource).map(arn)).toEqual([VOLUME_ARN]);
      expect(s.Condition?.StringEquals?.['aws:ResourceTag/ebs.csi.aws.com/cluster']).toBe('true');
      expect(s.Condition?.StringEquals?.['aws:ResourceTag/volhook.io/cluster']).toBe(SESSION_CLUSTER);
      // A DeleteTags naming no key removes every tag.
      expect(s.Condition?.['Null']?.['aws:TagKeys']).toBe('false');
      const denied = list(s.Condition?.['ForAllValues:StringNotLike']?.['aws:TagKeys'] as string[] | undefined);
      expect(denied).toEqual(expect.arrayContaining(['kubernetes.io*', 'ebs.csi.aws.com/*', 'volhook.io/*', 'CSIVolumeName']));
    }
  });

  it('IAM: outside creation, no CreateTags or DeleteTags names the scope, fence or look-up keys, in any case', () => {
    const deny = statements().filter((s) => s.Effect === 'Deny');
    expect(deny).toHaveLength(1);
    expect(deny[0]!.Condition).toEqual({
      Null: { 'ec2:CreateAction': 'true' },
      'ForAnyValue:StringEqualsIgnoreCase': { 'aws:TagKeys': ['ebs.csi.aws.com/cluster', 'volhook.io/cluster', 'CSIVolumeName', 'CSIVolumeSnapshotName'] },
    });
  });

  it.each(['ec2:AttachVolume', 'ec2:DetachVolume', 'ec2:DeleteVolume', 'ec2:ModifyVolume'])('IAM: %s on volumes only when tagged ebs.csi.aws.com/cluster=true and volhook.io/cluster=<the session\'s cluster>', (action) => {
    const statementsFor = grants(action);
    expect(statementsFor.length).toBeGreaterThan(0);
    for (const s of statementsFor) {
      const resources = list(s.Resource).map(arn);
      if (resources.includes(INSTANCE_ARN)) {
        // The instance side of attach/detach: any instance for a session without volhook-nodes,
        // else only those whose node tag carries its value.
        expect(['ec2:AttachVolume', 'ec2:DetachVolume']).toContain(action);
        expect(resources).toEqual([INSTANCE_ARN]);
        expect([
          { Null: { 'aws:PrincipalTag/volhook-nodes': 'true' } },
          { StringEquals: { 'ec2:ResourceTag/${NodeTagKey}': '${!aws:PrincipalTag/volhook-nodes}' } },
        ]).toContainEqual(s.Condition);
      } else {
        expect(s.Condition?.StringEquals?.['aws:ResourceTag/ebs.csi.aws.com/cluster']).toBe('true');
        expect(s.Condition?.StringEquals?.['aws:ResourceTag/volhook.io/cluster']).toBe(SESSION_CLUSTER);
        expect(resources).toEqual([VOLUME_ARN]);
      }
    }
    const onVolumes = statementsFor.filter((s) => list(s.Resource).map(arn).includes(VOLUME_ARN));
    expect(onVolumes.length).toBeGreaterThan(0);
  });

  it('IAM: SSM read-only and limited to the registry path; KMS decrypt only via SSM for it', () => {
    const ssm = statements().filter((s) => list(s.Action).some((a) => a.startsWith('ssm:')));
    expect(ssm.length).toBeGreaterThan(0);
    for (const s of ssm) {
      expect(list(s.Action)).toEqual(['ssm:GetParameter']);
      expect(list(s.Resource).map(arn)).toEqual([REGISTRY_ARN]);
    }
    const kms = statements().filter((s) => list(s.Action).some((a) => a.startsWith('kms:')));
    expect(kms.map((s) => s.Sid)).toEqual(['DecryptRegistrationsViaSsm', 'UseTheTablesKeyViaDynamoDb']);
    const [viaSsm, viaDynamoDb] = kms as [Statement, Statement];
    expect(list(viaSsm.Action)).toEqual(['kms:Decrypt']);
    expect(arn(viaSsm.Condition?.StringEquals?.['kms:ViaService'])).toBe('ssm.${AWS::Region}.amazonaws.com');
    expect(arn(viaSsm.Condition?.StringLike?.['kms:EncryptionContext:PARAMETER_ARN'])).toBe(REGISTRY_ARN);
    // The tables' customer key (tableKmsKeyArn), only as DynamoDB uses it.
    expect(list(viaDynamoDb.Action)).toEqual(['kms:Decrypt', 'kms:GenerateDataKey', 'kms:DescribeKey']);
    expect(viaDynamoDb.Condition).toEqual({ StringEquals: { 'kms:ViaService': { 'Fn::Sub': 'dynamodb.${AWS::Region}.amazonaws.com' } } });
  });

  it('replay protection: one PAY_PER_REQUEST DynamoDB table, TTL on expiresAt, named in VOLHOOK_REPLAY_TABLE, PutItem on that table alone', () => {
    const tables = Object.entries(template.Resources).filter(([id, r]) => r.Type === 'AWS::DynamoDB::Table' && id === 'ReplayTable');
    expect(tables).toHaveLength(1);
    const [logicalId, table] = tables[0]!;
    expect(table.Properties).toMatchObject({
      TableName: `volhook-${STAGE}-webhook-ids`,
      BillingMode: 'PAY_PER_REQUEST',
      KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
      AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
      TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: true },
    });
    expect(template.Resources.ApiLambdaFunction!.Properties.Environment.Variables.VOLHOOK_REPLAY_TABLE).toBe(table.Properties.TableName);
    // The rate budget's keys: the deployment's own account, resolved by CloudFormation (no credentials to package).
    for (const f of ofType('AWS::Lambda::Function')) expect(f.Properties.Environment.Variables.VOLHOOK_AWS_ACCOUNT).toEqual({ Ref: 'AWS::AccountId' });

    // The statement names the table's ARN as CloudFormation makes it (a standby's names the
    // primary's table instead: the describe of the shared tables below).
    const ctx = { partition: 'aws', region: 'eu-west-1', accountId: '210987654321', resources: template.Resources };
    const replayArn = resolveIntrinsics({ 'Fn::GetAtt': [logicalId, 'Arn'] }, ctx);
    expect(replayArn).toBe(`arn:aws:dynamodb:eu-west-1:210987654321:table/volhook-${STAGE}-webhook-ids`);
    const dynamo = statements().filter((s) => list(s.Action).some((a) => a.startsWith('dynamodb:')) && list(s.Resource).some((r) => resolveIntrinsics(r, ctx) === replayArn));
    expect(dynamo).toHaveLength(1);
    expect(list(dynamo[0]!.Action)).toEqual(['dynamodb:PutItem']);
    expect(list(dynamo[0]!.Resource)).toEqual([{ 'Fn::Sub': tableArnSub(`volhook-${STAGE}-webhook-ids`) }]);
    expect(dynamo[0]!.Condition).toBeUndefined();
  });

  it('volume reports: a PAY_PER_REQUEST table keyed by cluster id, TTL on expiresAt (parts of reports never completed); GetItem, PutItem and UpdateItem (a whole report with the cluster\'s item, in one transaction), ConditionCheckItem and DeleteItem (a replaced report) and Scan on it alone; DynamoDB otherwise only on the replay and rate-budget tables', () => {
    expect(template.Resources.ReportsTable!.Properties).toMatchObject({
      TableName: `volhook-${STAGE}-reports`,
      BillingMode: 'PAY_PER_REQUEST',
      KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
      TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: true },
    });
    // Three tables, each statement on its own: replay ids, reports, the EC2 rate budget.
    const dynamo = statements().filter((s) => list(s.Action).some((a) => a.startsWith('dynamodb:')));
    expect(dynamo.map((s) => [list(s.Action).sort(), list(s.Resource)])).toEqual([
      [['dynamodb:PutItem'], [{ 'Fn::Sub': tableArnSub(`volhook-${STAGE}-webhook-ids`) }]],
      [['dynamodb:ConditionCheckItem', 'dynamodb:DeleteItem', 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:Scan', 'dynamodb:UpdateItem'], [{ 'Fn::GetAtt': ['ReportsTable', 'Arn'] }]],
      [['dynamodb:GetItem', 'dynamodb:UpdateItem'], [{ 'Fn::Sub': tableArnSub(`volhook-${STAGE}-rate-budget`) }]],
    ]);
  });

  it('the zip holds exactly functions/api.mjs and its chunks (the build bench/coldstart.ts measures, byte for byte) and functions/audit.mjs', async () => {
    const zipPath = join(outDir, 'volhook.zip');
    expect(existsSync(zipPath)).toBe(true);
    const entries = readZip(readFileSync(zipPath));
    const shipped = new Map(entries.map((e) => [e.name, e.read()]));
    expect(shipped.get('functions/api.mjs')?.toString('utf8', 0, 200)).toContain("import { createRequire } from 'node:module'");

    const bench = await buildFunctionBundle(join(outDir, 'bench', 'functions'));
    expect(bench.entry).toBe('api.mjs');
    // serverless-esbuild builds each function on its own into one folder: the zip is the
    // union of the two builds (a chunk both share has one content-hashed name).
    const audit = await buildFunctionBundle(join(outDir, 'bench-audit', 'functions'), 'audit');
    expect(audit.entry).toBe('audit.mjs');
    const built = new Map([...audit.files, ...bench.files].map((f) => [`functions/${f.name}`, f.contents]));
    expect([...shipped.keys()].sort()).toEqual([...built.keys()].sort());
    for (const [name, contents] of built) {
      expect(Buffer.compare(Buffer.from(contents), shipped.get(name)!), name).toBe(0);
    }
  }, 60_000);

  let lazyBuild: ReturnType<typeof buildFunctionBundle> | undefined;
  /** The bundle's inputs `wanted` that put code into the files loaded at import, and into those loaded on first use. */
  async function bundledInputs(wanted: (input: string) => boolean): Promise<{ atImport: string[]; lazy: string[] }> {
    const bench = await (lazyBuild ??= buildFunctionBundle(join(outDir, 'bench-lazy', 'functions')));
    const inputsIn = (files: Set<string>) =>
      Object.entries(bench.metafile.outputs)
        .filter(([out]) => files.has(out.split('/').pop()!))
        .flatMap(([, meta]) => Object.entries(meta.inputs).filter(([, { bytesInOutput }]) => bytesInOutput > 0).map(([input]) => input))
        .filter(wanted);
    return { atImport: inputsIn(new Set(bench.atImport.map((f) => f.name))), lazy: inputsIn(new Set(bench.lazy.map((f) => f.name))) };
  }
  it.each([
    ['@kubernetes/client-node', 'writeBack: direct clusters only'],
    ['@aws-sdk/client-ssm', 'a registration not yet cached'],
    ['@aws-lambda-powertools/parameters', 'a registration not yet cached'],
    ['@aws-sdk/client-dynamodb', 'a reconcile request, through lib/dynamodb'],
  ])('a cold start does not load %s (needed by %s): it waits in a chunk loaded on first use', async (pkg) => {
    const { atImport, lazy } = await bundledInputs((input) => input.includes(`node_modules/${pkg}/`));
    expect(atImport).toEqual([]);
    expect(lazy.length).toBeGreaterThan(0);
  }, 60_000);

  it.each([
    ['lib/reconcile/', 'a reconcile request, once verified'],
    ['lib/storageclass/template/', 'a reconcile request whose class has tag templates'],
    ['lib/migration/', 'a reconcile request'],
  ])('a cold start does not compile %s (needed by %s): it waits in a chunk the first reconcile request loads', async (folder) => {
    const { atImport, lazy } = await bundledInputs((input) => input.startsWith(folder));
    expect(atImport).toEqual([]);
    expect(lazy.length).toBeGreaterThan(0);
  }, 60_000);
});

/**
 * A condition of the template as CloudFormation decides it, for the Fn::Not / Fn::Equals /
 * Fn::If the mutual-TLS option uses on literal strings (params are resolved at package time).
 */
function decide(t: CfnTemplate, value: unknown): unknown {
  if (Array.isArray(value)) return value.map((v) => decide(t, v));
  if (typeof value !== 'object' || value === null) return value;
  const entries = Object.entries(value);
  const [fn, args] = entries.length === 1 ? entries[0]! : ['', undefined];
  if (!fn.startsWith('Fn::')) return Object.fromEntries(entries.map(([k, v]) => [k, decide(t, v)]));
  if (fn === 'Fn::Not') return !decide(t, (args as unknown[])[0]);
  if (fn === 'Fn::Equals') return JSON.stringify(decide(t, (args as unknown[])[0])) === JSON.stringify(decide(t, (args as unknown[])[1]));
  if (fn === 'Fn::If') {
    const [name, yes, no] = args as [string, unknown, unknown];
    return decide(t, decide(t, t.Conditions?.[name]) ? yes : no);
  }
  return value;
}
const created = (t: CfnTemplate) => Object.entries(t.Resources).filter(([, r]) => r.Condition === undefined || decide(t, t.Conditions?.[r.Condition]) === true);
const outputs = (t: CfnTemplate) => Object.keys(t.Outputs ?? {}).filter((k) => t.Outputs![k]!.Condition === undefined || decide(t, t.Conditions?.[t.Outputs![k]!.Condition!]) === true);

describe('osls package with the options set: the mutual-TLS custom domain (infra/serverless/mutual-tls.yml), member accounts, a tables key, throttling', () => {
  const MTLS = {
    apiDomainName: 'volhook.example.com',
    apiCertificateArn: 'arn:aws:acm:us-east-1:111122223333:certificate/0a1b2c3d',
    apiTruststoreUri: 's3://volhook-truststore/clusters.pem',
    apiTruststoreVersion: 'v7',
  };
  const OPTIONS = {
    memberAccounts: '210987654321,444455556666',
    tableKmsKeyArn: 'arn:aws:kms:us-east-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab',
    apiThrottleRate: '25',
    apiThrottleBurst: '50',
    apiReservedConcurrency: '20',
  };
  let mtls: CfnTemplate;

  beforeAll(async () => {
    mtls = JSON.parse(await packageInto(mkdtempSync(join(tmpdir(), 'volhook-package-mtls-')), { ...MTLS, ...OPTIONS })) as CfnTemplate;
  }, 180_000);

  it('the default (apiDomainName empty) -> no domain, no mapping, the execute-api endpoint on; the same resources otherwise', () => {
    const types = created(template).map(([, r]) => r.Type);
    expect(types).not.toContain('AWS::ApiGatewayV2::DomainName');
    expect(types).not.toContain('AWS::ApiGatewayV2::ApiMapping');
    expect(decide(template, template.Resources.HttpApi!.Properties.DisableExecuteApiEndpoint)).toBe(false);
    expect(outputs(template).filter((k) => k.startsWith('MutualTls'))).toEqual([]);
    // With the option, exactly the domain and its mapping are added.
    const names = (t: CfnTemplate) => created(t).map(([name]) => name).sort();
    expect(names(mtls).filter((n) => !names(template).includes(n)).sort()).toEqual(['ApiDomainMapping', 'ApiDomainName']);
  });

  it('--param apiDomainName, apiCertificateArn, apiTruststoreUri -> a regional domain requiring client certificates of the truststore, mapped to the $default stage, the execute-api endpoint off', () => {
    const domain = created(mtls).find(([, r]) => r.Type === 'AWS::ApiGatewayV2::DomainName')![1];
    expect(decide(mtls, domain.Properties)).toEqual({
      DomainName: MTLS.apiDomainName,
      DomainNameConfigurations: [{ CertificateArn: MTLS.apiCertificateArn, EndpointType: 'REGIONAL', SecurityPolicy: 'TLS_1_2', OwnershipVerificationCertificateArn: { Ref: 'AWS::NoValue' } }],
      MutualTlsAuthentication: { TruststoreUri: MTLS.apiTruststoreUri, TruststoreVersion: MTLS.apiTruststoreVersion },
    });
    const mapping = created(mtls).find(([, r]) => r.Type === 'AWS::ApiGatewayV2::ApiMapping')![1];
    expect(mapping.Properties).toEqual({ ApiId: { Ref: 'HttpApi' }, DomainName: { Ref: 'ApiDomainName' }, Stage: { Ref: 'HttpApiStage' } });
    expect(mtls.Resources.HttpApiStage!.Properties.StageName).toBe('$default');
    expect(decide(mtls, mtls.Resources.HttpApi!.Properties.DisableExecuteApiEndpoint)).toBe(true);
    expect(outputs(mtls).filter((k) => k.startsWith('MutualTls')).sort()).toEqual(['MutualTlsApiUrl', 'MutualTlsDomainHostedZoneId', 'MutualTlsDomainTarget']);
    expect(mtls.Outputs!.MutualTlsApiUrl!.Value).toBe(`https://${MTLS.apiDomainName}`);
  });

  it('--param memberAccounts -> the Lambda role assumes and tags sessions of /volhook/ roles in this account and exactly those listed', () => {
    const sts = list<Statement>(documentOf(mtls.Resources.IamRoleLambdaExecution!.Properties.Policies[0].PolicyDocument).Statement).filter((s) => list(s.Action).some((a) => a.startsWith('sts:')));
    expect(sts).toHaveLength(2);
    for (const statement of sts) {
      expect(resolveIntrinsics(statement.Condition!.StringEquals!['aws:ResourceAccount'], { partition: 'aws', region: 'us-east-1', accountId: '123456789012', resources: {} })).toEqual(['123456789012', '210987654321', '444455556666']);
    }
  });

  it('--param tableKmsKeyArn, apiThrottleRate/Burst, apiReservedConcurrency -> every table encrypted with that key, the stage throttled and the API function reserved as given', () => {
    for (const table of created(mtls).filter(([, r]) => r.Type === 'AWS::DynamoDB::Table')) {
      expect(decide(mtls, table[1].Properties.SSESpecification), table[0]).toEqual({ SSEEnabled: true, SSEType: 'KMS', KMSMasterKeyId: OPTIONS.tableKmsKeyArn });
    }
    expect(mtls.Resources.HttpApiStage!.Properties.DefaultRouteSettings).toEqual({ ThrottlingRateLimit: '25', ThrottlingBurstLimit: '50' });
    expect(mtls.Resources.ApiLambdaFunction!.Properties.ReservedConcurrentExecutions).toBe(20);
  });
});

describe("osls package for a standby: the primary's replay and rate-budget tables (--param sharedReplayTable, sharedBudgetTable)", () => {
  const SHARED = { sharedReplayTable: 'volhook-prod-webhook-ids', sharedBudgetTable: 'volhook-prod-rate-budget' };
  /** The standby runs in another Region than its primary: the shared tables are global tables with a replica there. */
  const WHERE = { partition: 'aws', region: 'us-west-2', accountId: '210987654321' };
  const table = (name: string) => `arn:aws:dynamodb:${WHERE.region}:${WHERE.accountId}:table/${name}`;
  let standby: CfnTemplate;

  beforeAll(async () => {
    standby = JSON.parse(await packageInto(mkdtempSync(join(tmpdir(), 'volhook-package-standby-')), SHARED)) as CfnTemplate;
  }, 180_000);

  const tablesCreated = (t: CfnTemplate) => created(t).filter(([, r]) => r.Type === 'AWS::DynamoDB::Table').map(([id]) => id).sort();
  const lambdaStatements = (t: CfnTemplate) =>
    list(t.Resources.IamRoleLambdaExecution!.Properties.Policies)
      .flatMap((p: any) => list<Statement>(p.PolicyDocument.Statement))
      .filter((s) => !list(s.Action).every((a) => a.startsWith('logs:')));
  /** Each DynamoDB statement's Sid and the ARNs it names, as CloudFormation resolves them in WHERE. */
  const dynamoGrants = (t: CfnTemplate) =>
    Object.fromEntries(
      lambdaStatements(t)
        .filter((s) => list(s.Action).some((a) => a.startsWith('dynamodb:')))
        .map((s) => [s.Sid, resolveIntrinsics(list(s.Resource), { ...WHERE, resources: t.Resources })]),
    );
  const tableVariables = (t: CfnTemplate) =>
    Object.values(t.Resources)
      .filter((r) => r.Type === 'AWS::Lambda::Function')
      .map((f) => [f.Properties.Environment.Variables.VOLHOOK_REPLAY_TABLE, f.Properties.Environment.Variables.VOLHOOK_BUDGET_TABLE, f.Properties.Environment.Variables.VOLHOOK_REPORTS_TABLE]);

  it('the default (control): the stage creates its three tables, and its functions and role name its own', () => {
    expect(tablesCreated(template)).toEqual(['RateBudgetTable', 'ReplayTable', 'ReportsTable']);
    expect(tableVariables(template)).toEqual([0, 1].map(() => [`volhook-${STAGE}-webhook-ids`, `volhook-${STAGE}-rate-budget`, `volhook-${STAGE}-reports`]));
    expect(dynamoGrants(template)).toEqual({
      RecordWebhookIds: [table(`volhook-${STAGE}-webhook-ids`)],
      KeepVolumeReports: [table(`volhook-${STAGE}-reports`)],
      ShareTheRateBudget: [table(`volhook-${STAGE}-rate-budget`)],
    });
  });

  it('given both -> neither ReplayTable nor RateBudgetTable is created, the reports table still is; every other resource as by default', () => {
    expect(tablesCreated(standby)).toEqual(['ReportsTable']);
    expect(standby.Resources.ReplayTable!.Condition).toBe('CreatesReplayTable');
    expect(standby.Resources.RateBudgetTable!.Condition).toBe('CreatesRateBudgetTable');
    const names = (t: CfnTemplate) => created(t).map(([name]) => name).sort();
    expect(names(template).filter((n) => !names(standby).includes(n))).toEqual(['RateBudgetTable', 'ReplayTable']);
    expect(names(standby).filter((n) => !names(template).includes(n))).toEqual([]);
  });

  it("given both -> every function's VOLHOOK_REPLAY_TABLE and VOLHOOK_BUDGET_TABLE name the shared tables; VOLHOOK_REPORTS_TABLE the stage's own", () => {
    expect(tableVariables(standby)).toEqual([0, 1].map(() => [SHARED.sharedReplayTable, SHARED.sharedBudgetTable, `volhook-${STAGE}-reports`]));
  });

  it("given both -> RecordWebhookIds and ShareTheRateBudget on the shared tables' ARNs (this account and Region) alone, as the IAM model has them; nothing names the stage's own replay or budget table but the tables not created", () => {
    expect(dynamoGrants(standby)).toEqual({
      RecordWebhookIds: [table(SHARED.sharedReplayTable)],
      KeepVolumeReports: [table(`volhook-${STAGE}-reports`)],
      ShareTheRateBudget: [table(SHARED.sharedBudgetTable)],
    });
    // The same statements the local stack's IAM model (lib/iam/role-policy.ts) evaluates for these params.
    expect(resolveIntrinsics(lambdaStatements(standby), { ...WHERE, resources: standby.Resources })).toEqual(lambdaRolePolicy({ stage: STAGE, ...WHERE, params: SHARED }).Statement);
    const withoutTables = (t: CfnTemplate) => {
      const { ReplayTable: _replay, RateBudgetTable: _budget, ...others } = t.Resources;
      return JSON.stringify({ ...t, Resources: others });
    };
    for (const own of [`volhook-${STAGE}-webhook-ids`, `volhook-${STAGE}-rate-budget`]) {
      expect(withoutTables(standby)).not.toContain(own);
      // Control: by default the functions and the role name them.
      expect(withoutTables(template)).toContain(own);
    }
  });

  it('a value that is no table name (an ARN) or the stage\'s own table -> osls package stops, naming each param, and packages nothing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'volhook-package-refused-'));
    const refused = await packageInto(dir, { sharedReplayTable: 'arn:aws:dynamodb:us-east-1:111122223333:table/volhook-prod-webhook-ids', sharedBudgetTable: `volhook-${STAGE}-rate-budget` }).then(
      () => undefined,
      (err: { stdout?: string; stderr?: string }) => `${err.stdout ?? ''}${err.stderr ?? ''}`,
    );
    expect(refused).toContain('--param="sharedReplayTable=arn:aws:dynamodb:us-east-1:111122223333:table/volhook-prod-webhook-ids": give the table\'s name, not its ARN.');
    expect(refused).toContain(`--param="sharedBudgetTable=volhook-${STAGE}-rate-budget": that is the table this stage creates itself;`);
    expect(existsSync(join(dir, 'cloudformation-template-update-stack.json'))).toBe(false);
  }, 180_000);
});
