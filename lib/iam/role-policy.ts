/**
 * The roles the deployment packages, read from serverless.yml as `osls package` and
 * CloudFormation together would make them: the Serverless variables first (`${param:…}`, with
 * a fallback `${param:a, param:b}` or `${param:a, 'text'}` when the param is not given,
 * `${self:service}`, `${sls:stage}`, `${file(…)}`), then the intrinsics (cloudformation.ts).
 *
 * - The Lambda role (`provider.iam.role.statements`): assumes EC2 roles, reads its tables and
 *   parameters; no EC2 action.
 * - The EC2 role (`resources` → `Ec2Role`, its policy infra/iam/ec2-role-statements.yml): what
 *   one cluster's session (session tag `volhook-cluster=<id>`) may do in EC2. A member account's
 *   EC2 role (infra/member-account/ec2-role.yaml) has the same statements.
 *
 * The EC2 simulator evaluates every call of the backend against these, so the local stack
 * refuses what the deployed roles would; test/deploy/package.test.ts holds them equal to the
 * packaged template's.
 */
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import type { Ec2Role } from '../local/ec2/sts.js';
import { resolveIntrinsics, type CloudFormationContext } from './cloudformation.js';
import { DEFAULT_MEMBER_ROLE_NAME, DEFAULT_NODE_TAG_KEY, EC2_ROLE_POLICY_NAME, ec2RolePolicyText, MEMBER_ROLE_TEMPLATE } from './ec2-role-templates.js';
import type { IamPrincipal } from './evaluate.js';
import { listOf, PolicyDocument } from './policy.js';

export const SERVERLESS_YML = fileURLToPath(new URL('../../serverless.yml', import.meta.url));
/** The EC2 role's logical ID in serverless.yml. */
export const EC2_ROLE_LOGICAL_ID = 'Ec2Role';

export interface RolePolicyOptions {
  stage?: string;
  region?: string;
  accountId?: string;
  partition?: string;
  /** serverless.yml's text; default the file beside the package. */
  text?: string;
  /** Stage params given as `osls package --param="key=value"` would give them, over serverless.yml's. */
  params?: Readonly<Record<string, string>>;
}

export interface Ec2RolePolicyOptions extends RolePolicyOptions {
  /** The node tag key the deployment fences instances by; default serverless.yml's `nodeTagKey` param. */
  nodeTagKey?: string;
}

type Resources = CloudFormationContext['resources'];

interface ServerlessYml {
  service: string;
  params?: Record<string, Record<string, unknown>>;
  provider: { iam?: { role?: { statements?: unknown[] } } };
  resources?: unknown[];
}

interface Resolving {
  yml: ServerlessYml;
  stage: string;
  params: Readonly<Record<string, string>>;
  /** Where `${file(…)}` paths start. */
  dir: string;
}

const VARIABLE = /\$\{(param|self|sls|opt|env|file)([:(])([^}]*)\}/g;

function readFileVariable(rest: string, r: Resolving, whole: string): unknown {
  const m = /^([^)]+)\)(?::(.+))?$/.exec(rest);
  if (!m) throw new Error(`serverless.yml: ${whole} is not a file variable this reader understands`);
  const [, path, address] = m as unknown as [string, string, string | undefined];
  const content: unknown = parse(readFileSync(resolve(r.dir, path.trim()), 'utf8'));
  const value = address === undefined ? content : (content as Record<string, unknown> | null)?.[address.trim()];
  if (value === undefined) throw new Error(`serverless.yml: ${whole} names nothing in ${path}`);
  return value;
}

/** A variable's fallback, as the framework writes it after a comma: `'literal'`, or another param (`param:name`). */
function fallbackOf(text: string, whole: string): { literal: string } | { param: string } {
  const literal = /^'([^']*)'$/.exec(text);
  if (literal) return { literal: literal[1] as string };
  const param = /^param:([A-Za-z0-9_.-]+)$/.exec(text);
  if (param) return { param: param[1] as string };
  throw new Error(`serverless.yml: ${whole} has a fallback this reader does not resolve`);
}

function resolveOne(source: string, rest: string, whole: string, r: Resolving, depth: number): unknown {
  if (source === 'self' && rest === 'service') return r.yml.service;
  if (source === 'sls' && rest === 'stage') return r.stage;
  if (source === 'param') {
    const comma = rest.indexOf(',');
    const name = (comma < 0 ? rest : rest.slice(0, comma)).trim();
    const found = r.params[name] ?? r.yml.params?.[r.stage]?.[name] ?? r.yml.params?.['default']?.[name];
    if (found == null && comma >= 0) {
      const fallback = fallbackOf(rest.slice(comma + 1).trim(), whole);
      return 'literal' in fallback ? fallback.literal : resolveOne('param', fallback.param, whole, r, depth + 1);
    }
    if (typeof found === 'number') return String(found);
    if (typeof found !== 'string') throw new Error(`serverless.yml: ${whole} has no string value for stage ${r.stage}`);
    return resolveVariables(found, r, depth + 1);
  }
  if (source === 'file') return resolveVariables(readFileVariable(rest, r, whole), r, depth + 1);
  throw new Error(`serverless.yml: a role uses ${whole}, which this reader does not resolve`);
}

/** Serverless's own variables, as `osls package` resolves them; CloudFormation's `${AWS::…}` and `${!…}` stay. */
function resolveVariables(value: unknown, r: Resolving, depth = 0): unknown {
  if (depth > 10) throw new Error('serverless.yml: variables nest more than 10 deep');
  if (Array.isArray(value)) return value.map((v) => resolveVariables(v, r, depth));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolveVariables(v, r, depth)]));
  }
  if (typeof value !== 'string') return value;
  // A value that is one variable takes the variable's value, whatever its type (a file's object).
  const alone = /^\$\{(param|self|sls|opt|env|file)([:(])([^}]*)\}$/.exec(value);
  if (alone) return resolveOne(alone[1] as string, alone[3] as string, value, r, depth);
  return value.replace(VARIABLE, (whole, source: string, _sep: string, rest: string) => {
    const resolved = resolveOne(source, rest, whole, r, depth);
    if (typeof resolved !== 'string') throw new Error(`serverless.yml: ${whole} inside a string is not a string`);
    return resolved;
  });
}

/** The template's resources serverless.yml writes itself (not those of `${file(…)}` includes). */
function ownResources(yml: ServerlessYml): Resources {
  const blocks = (yml.resources ?? []).filter((r): r is { Resources: Record<string, never> } => typeof r === 'object' && r !== null && 'Resources' in r);
  return Object.assign({}, ...blocks.map((b) => b.Resources));
}

interface Read {
  yml: ServerlessYml;
  resources: Resources;
  context: CloudFormationContext;
  resolving: Resolving;
}

function readServerless(options: RolePolicyOptions): Read {
  const stage = options.stage ?? 'dev';
  const yml = parse(options.text ?? readFileSync(SERVERLESS_YML, 'utf8')) as ServerlessYml;
  const resolving = { yml, stage, params: options.params ?? {}, dir: dirname(SERVERLESS_YML) };
  const resources = resolveVariables(ownResources(yml), resolving) as Resources;
  const context = { partition: options.partition ?? 'aws', region: options.region ?? 'us-east-1', accountId: options.accountId ?? '123456789012', resources };
  return { yml, resources, context, resolving };
}

/** A resolved policy document, written as an object or as the JSON text an Fn::Sub makes. */
function policyDocument(resolved: unknown): PolicyDocument {
  const document = PolicyDocument.parse(typeof resolved === 'string' ? JSON.parse(resolved) : resolved);
  // The framework writes every statement's Action as a list; so does this, to be the same document.
  return { ...document, Statement: document.Statement.map((s) => (s.Action === undefined ? s : { ...s, Action: listOf(s.Action) })) };
}

interface RoleResource {
  Type: string;
  Properties?: { Policies?: { PolicyName: string; PolicyDocument: unknown }[] } & Record<string, unknown>;
}

function inlinePolicy(role: RoleResource | undefined, name: string, where: string): unknown {
  if (role?.Type !== 'AWS::IAM::Role') throw new Error(`${where}: no AWS::IAM::Role`);
  const policy = role.Properties?.Policies?.find((p) => p.PolicyName === name);
  if (!policy) throw new Error(`${where}: the role has no inline policy ${name}`);
  return policy.PolicyDocument;
}

/** The Lambda role's policy (`provider.iam.role.statements`), resolved for one stage, Region and account. */
export function lambdaRolePolicy(options: RolePolicyOptions = {}): PolicyDocument {
  const { yml, context, resolving } = readServerless(options);
  const statements = yml.provider.iam?.role?.statements;
  if (!statements) throw new Error('serverless.yml: provider.iam.role.statements is missing');
  return policyDocument({ Version: '2012-10-17', Statement: resolveIntrinsics(resolveVariables(statements, resolving), context) });
}

/** The deployment's own EC2 role's policy (serverless.yml's Ec2Role), resolved for one stage, Region and account. */
export function ec2RolePolicy(options: Ec2RolePolicyOptions = {}): PolicyDocument {
  const { resources, context } = readServerless(options);
  const role = resources[EC2_ROLE_LOGICAL_ID] as RoleResource | undefined;
  let document = inlinePolicy(role, EC2_ROLE_POLICY_NAME, `serverless.yml resources.${EC2_ROLE_LOGICAL_ID}`);
  if (options.nodeTagKey !== undefined) document = withSubVariable(document, 'NodeTagKey', options.nodeTagKey);
  return policyDocument(resolveIntrinsics(document, context));
}

/**
 * The EC2 role's statements resolved straight from infra/iam/ec2-role-statements.yml (or
 * `statementsText`), as CloudFormation would make them in an account: what both templates must
 * come to.
 */
export function ec2RoleStatementsPolicy(options: Omit<Ec2RolePolicyOptions, 'text' | 'stage'> & { statementsText?: string } = {}): PolicyDocument {
  const context = { partition: options.partition ?? 'aws', region: options.region ?? 'us-east-1', accountId: options.accountId ?? '123456789012', resources: {} };
  return policyDocument(resolveIntrinsics({ 'Fn::Sub': [ec2RolePolicyText(options.statementsText), { NodeTagKey: options.nodeTagKey ?? DEFAULT_NODE_TAG_KEY }] }, context));
}

/** An `Fn::Sub [text, variables]` with one variable given another value (a deployment parameter set otherwise). */
function withSubVariable(document: unknown, name: string, value: string): unknown {
  const sub = (document as { 'Fn::Sub'?: unknown })['Fn::Sub'];
  if (!Array.isArray(sub) || typeof sub[1] !== 'object' || sub[1] === null || !(name in sub[1])) throw new Error(`the EC2 role's policy is no Fn::Sub with the variable ${name}`);
  return { 'Fn::Sub': [sub[0], { ...(sub[1] as object), [name]: value }] };
}

/** The ARN of the deployment's own EC2 role (`arn:<partition>:iam::<account>:role/volhook/<name>`). */
export function ec2RoleArn(options: RolePolicyOptions = {}): string {
  const { context } = readServerless(options);
  return resolveIntrinsics({ 'Fn::GetAtt': [EC2_ROLE_LOGICAL_ID, 'Arn'] }, context) as string;
}

interface MemberTemplate {
  Parameters: Record<string, { Default?: string }>;
  Resources: Resources;
}

export interface MemberRoleOptions {
  region?: string;
  accountId?: string;
  partition?: string;
  /** The stack's NodeTagKey parameter; default the template's default. */
  nodeTagKey?: string;
  /** The stack's RoleName parameter; default the template's default. */
  roleName?: string;
}

function memberContext(options: MemberRoleOptions): { template: MemberTemplate; context: CloudFormationContext } {
  const template = parse(readFileSync(MEMBER_ROLE_TEMPLATE, 'utf8')) as MemberTemplate;
  const defaults = Object.fromEntries(Object.entries(template.Parameters).flatMap(([k, p]) => (p.Default === undefined ? [] : [[k, p.Default]])));
  const given = { ...(options.nodeTagKey === undefined ? {} : { NodeTagKey: options.nodeTagKey }), ...(options.roleName === undefined ? {} : { RoleName: options.roleName }) };
  const context = {
    partition: options.partition ?? 'aws',
    region: options.region ?? 'us-east-1',
    accountId: options.accountId ?? '210987654321',
    resources: template.Resources,
    parameters: { ...defaults, ...given },
  };
  return { template, context };
}

/** A member account's EC2 role's policy, as infra/member-account/ec2-role.yaml makes it in that account. */
export function memberEc2RolePolicy(options: MemberRoleOptions = {}): PolicyDocument {
  const { template, context } = memberContext(options);
  const document = inlinePolicy(template.Resources[EC2_ROLE_LOGICAL_ID] as RoleResource | undefined, EC2_ROLE_POLICY_NAME, `infra/member-account/ec2-role.yaml Resources.${EC2_ROLE_LOGICAL_ID}`);
  return policyDocument(resolveIntrinsics(document, context));
}

/** The ARN of a member account's EC2 role (default name `volhook-ec2`). */
export function memberEc2RoleArn(options: MemberRoleOptions = {}): string {
  const { context } = memberContext({ roleName: DEFAULT_MEMBER_ROLE_NAME, ...options });
  return resolveIntrinsics({ 'Fn::GetAtt': [EC2_ROLE_LOGICAL_ID, 'Arn'] }, context) as string;
}

/**
 * The Lambda role as IAM sees its calls: the session of serverless.yml's functions (the
 * framework's default role name) under the packaged policy, or `policy` in its place.
 */
export function lambdaRolePrincipal(options: { stage?: string; region?: string; accountId?: string; policy?: PolicyDocument; params?: Readonly<Record<string, string>> } = {}): IamPrincipal {
  const stage = options.stage ?? 'dev';
  const region = options.region ?? 'us-east-1';
  const accountId = options.accountId ?? '123456789012';
  return {
    arn: `arn:aws:sts::${accountId}:assumed-role/volhook-${stage}-${region}-lambdaRole/volhook-${stage}-api`,
    accountId,
    policies: [{ name: 'volhook-lambda-role', document: options.policy ?? lambdaRolePolicy({ stage, region, accountId, ...(options.params && { params: options.params }) }) }],
  };
}

/** Who may assume an EC2 role in the simulator: access keys or principal ARNs (STS matches either). */
export interface Ec2RoleTrust {
  principals: readonly string[];
}

/** The deployment's own EC2 role as the simulator's STS holds it: its policy, trusting `trust` (no ExternalId, as serverless.yml's trust). */
export function ec2Role(options: Ec2RolePolicyOptions & { trust: Ec2RoleTrust }): Ec2Role {
  const { trust, ...rest } = options;
  return { policies: [{ name: EC2_ROLE_POLICY_NAME, document: ec2RolePolicy(rest) }], trust: { principals: trust.principals } };
}

/** A deployment as the simulator holds it: its Lambda role, and its own EC2 role trusting that role. */
export interface DeploymentIam {
  /** The Lambda role's session (the backend's calls). */
  backend: IamPrincipal;
  ec2RoleArn: string;
  /** The simulator's `iam.principals`: `backendKey` signs as the Lambda role. */
  principals: Record<string, IamPrincipal>;
  /** The simulator's `iam.roles`: the deployment's EC2 role, by its ARN. */
  roles: Record<string, Ec2Role>;
}

export function deploymentIam(options: { backendKey: string; stage?: string; region?: string; accountId?: string }): DeploymentIam {
  const { backendKey, ...where } = options;
  const backend = lambdaRolePrincipal(where);
  const arn = ec2RoleArn(where);
  return { backend, ec2RoleArn: arn, principals: { [backendKey]: backend }, roles: { [arn]: ec2Role({ ...where, trust: { principals: [backend.arn] } }) } };
}

/** A member account's EC2 role as the simulator's STS holds it: the member template's policy, trusting `trust` with its ExternalId. */
export function memberEc2Role(options: MemberRoleOptions & { trust: Ec2RoleTrust & { externalId: string } }): Ec2Role {
  const { trust, ...rest } = options;
  return { policies: [{ name: EC2_ROLE_POLICY_NAME, document: memberEc2RolePolicy(rest) }], trust: { principals: trust.principals, externalId: trust.externalId } };
}
