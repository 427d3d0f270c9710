/**
 * The role policy the deployment packages, read from serverless.yml as `osls package` and
 * CloudFormation together would make it: the Serverless variables the statements use
 * (`${param:…}`, `${self:service}`, `${sls:stage}`) first, then the intrinsics
 * (cloudformation.ts). The EC2 simulator evaluates every call of the backend against this, so
 * the local stack refuses what the deployed role would; test/deploy/package.test.ts holds it
 * equal to the packaged template's.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { resolveIntrinsics } from './cloudformation.js';
import type { IamPrincipal } from './evaluate.js';
import { listOf, PolicyDocument } from './policy.js';

export const SERVERLESS_YML = fileURLToPath(new URL('../../serverless.yml', import.meta.url));

export interface RolePolicyOptions {
  stage?: string;
  region?: string;
  accountId?: string;
  partition?: string;
  /** serverless.yml's text; default the file beside the package. */
  text?: string;
}

interface ServerlessYml {
  service: string;
  params?: Record<string, Record<string, unknown>>;
  provider: { iam?: { role?: { statements?: unknown[] } } };
  resources?: unknown[];
}

/** Serverless's own variables, as `osls package` resolves them; CloudFormation's `${AWS::…}` and `${!…}` stay. */
function resolveVariables(value: unknown, yml: ServerlessYml, stage: string, depth = 0): unknown {
  if (depth > 10) throw new Error('serverless.yml: variables nest more than 10 deep');
  if (Array.isArray(value)) return value.map((v) => resolveVariables(v, yml, stage, depth));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolveVariables(v, yml, stage, depth)]));
  }
  if (typeof value !== 'string') return value;
  const out = value.replace(/\$\{(param|self|sls|opt|env|file)([:(])([^}]*)\}/g, (whole, source: string, _sep: string, rest: string) => {
    if (source === 'self' && rest === 'service') return yml.service;
    if (source === 'sls' && rest === 'stage') return stage;
    if (source === 'param') {
      const found = yml.params?.[stage]?.[rest] ?? yml.params?.['default']?.[rest];
      if (typeof found !== 'string') throw new Error(`serverless.yml: ${whole} has no string value for stage ${stage}`);
      return String(resolveVariables(found, yml, stage, depth + 1));
    }
    throw new Error(`serverless.yml: the role policy uses ${whole}, which this reader does not resolve`);
  });
  return out;
}

/** The template's resources serverless.yml writes itself (not those of `${file(…)}` includes). */
function ownResources(yml: ServerlessYml): Record<string, { Type: string; Properties?: Record<string, unknown> }> {
  const blocks = (yml.resources ?? []).filter((r): r is { Resources: Record<string, never> } => typeof r === 'object' && r !== null && 'Resources' in r);
  return Object.assign({}, ...blocks.map((b) => b.Resources));
}

/** The Lambda role's policy, resolved for one stage, Region and account. */
export function rolePolicy(options: RolePolicyOptions = {}): PolicyDocument {
  const stage = options.stage ?? 'dev';
  const yml = parse(options.text ?? readFileSync(SERVERLESS_YML, 'utf8')) as ServerlessYml;
  const statements = yml.provider.iam?.role?.statements;
  if (!statements) throw new Error('serverless.yml: provider.iam.role.statements is missing');
  const resources = resolveVariables(ownResources(yml), yml, stage) as ReturnType<typeof ownResources>;
  const resolved = resolveIntrinsics(resolveVariables(statements, yml, stage), {
    partition: options.partition ?? 'aws',
    region: options.region ?? 'us-east-1',
    accountId: options.accountId ?? '123456789012',
    resources,
  });
  const document = PolicyDocument.parse({ Version: '2012-10-17', Statement: resolved });
  // The framework writes every statement's Action as a list; so does this, to be the same document.
  return { ...document, Statement: document.Statement.map((s) => (s.Action === undefined ? s : { ...s, Action: listOf(s.Action) })) };
}

/**
 * The Lambda role as IAM sees its calls: the session of serverless.yml's functions (the
 * framework's default role name) under the packaged policy, or `policy` in its place.
 */
export function lambdaRolePrincipal(options: { stage?: string; region?: string; accountId?: string; policy?: PolicyDocument } = {}): IamPrincipal {
  const stage = options.stage ?? 'dev';
  const region = options.region ?? 'us-east-1';
  const accountId = options.accountId ?? '123456789012';
  return {
    arn: `arn:aws:sts::${accountId}:assumed-role/volhook-${stage}-${region}-lambdaRole/volhook-${stage}-api`,
    accountId,
    policies: [{ name: 'volhook-lambda-role', document: options.policy ?? rolePolicy({ stage, region, accountId }) }],
  };
}
