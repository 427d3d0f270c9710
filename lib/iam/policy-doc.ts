/**
 * docs/deploy.md's IAM section, made from the roles' policies themselves (`npm run docs:iam`
 * writes it; test/iam/policy-doc.test.ts fails when the page and the sources disagree): for the
 * Lambda role (serverless.yml) and the EC2 role (infra/iam/ec2-role-statements.yml), one row a
 * statement, with the comment above it in its source as the reason.
 */
import { readFileSync } from 'node:fs';
import { isMap, isSeq, parseDocument, type YAMLSeq } from 'yaml';
import { EC2_ROLE_STATEMENTS_YML } from './ec2-role-templates.js';
import { listOf, type PolicyDocument, type PolicyStatement } from './policy.js';
import { ec2RoleStatementsPolicy, lambdaRolePolicy, SERVERLESS_YML } from './role-policy.js';

export const IAM_SECTION = { begin: '<!-- iam-statements:begin (npm run docs:iam) -->', end: '<!-- iam-statements:end -->' } as const;

/** The comment above each statement of a list, by Sid. */
function statementComments(statements: unknown): Map<string, string> {
  const out = new Map<string, string>();
  if (!isSeq(statements)) return out;
  (statements as YAMLSeq).items.forEach((item, n) => {
    // The parser gives the comment above the first item to the list.
    const own = isMap(item) ? item.commentBefore : undefined;
    const comment = (n === 0 ? (own ?? (statements as YAMLSeq).commentBefore) : own) ?? '';
    const sid = isMap(item) ? item.get('Sid') : undefined;
    // Only the paragraph right above the statement: a file's header stands apart by a blank line.
    const paragraph = comment.split(/\n\s*\n/).at(-1) ?? '';
    if (typeof sid === 'string') out.set(sid, paragraph.split('\n').map((l: string) => l.trim()).join(' ').trim());
  });
  return out;
}

const code = (s: string) => `\`${s}\``;

function conditionText(condition: PolicyStatement['Condition'], show: (s: string) => string): string {
  if (!condition) return '—';
  return Object.entries(condition)
    .flatMap(([op, keys]) => Object.entries(keys).map(([key, value]) => `${op} ${code(show(key))}: ${listOf(value).map((v) => code(show(v))).join(', ')}`))
    .join('<br>');
}

const ACCOUNT_ID = '123456789012';
const REGION = 'us-east-1';
/** The node tag key as the table shows it: the parameter's name. */
const NODE_TAG_KEY = '<NodeTagKey>';

/** Placeholders in place of the example account and Region, so the table reads for any. */
function generic(value: string): string {
  return value
    .replaceAll(ACCOUNT_ID, '<account>')
    .replaceAll(`:${REGION}:`, ':<region>:')
    .replaceAll(`.${REGION}.`, '.<region>.')
    .replaceAll('volhook/dev/', 'volhook/<stage>/')
    .replaceAll('volhook-dev-', 'volhook-<stage>-');
}

function table(policy: PolicyDocument, comments: Map<string, string>): string {
  const rows = policy.Statement.map((s) => {
    const resources = listOf(s.Resource).map((r) => code(generic(r))).join('<br>');
    return `| ${s.Sid ?? ''} | ${s.Effect} | ${listOf(s.Action).map(code).join('<br>')} | ${resources} | ${conditionText(s.Condition, generic)} | ${comments.get(s.Sid ?? '') ?? ''} |`;
  });
  return ['| statement | effect | actions | resources | conditions | why |', '|---|---|---|---|---|---|', ...rows].join('\n');
}

export interface IamSources {
  /** serverless.yml's text. */
  serverless?: string;
  /** infra/iam/ec2-role-statements.yml's text. */
  ec2Statements?: string;
}

/** The markdown table of the Lambda role's statements. */
export function lambdaRoleTable(text = readFileSync(SERVERLESS_YML, 'utf8')): string {
  const comments = statementComments(parseDocument(text).getIn(['provider', 'iam', 'role', 'statements'], true));
  return table(lambdaRolePolicy({ text, accountId: ACCOUNT_ID, region: REGION }), comments);
}

/**
 * The markdown table of the EC2 role's statements, from the statements file (its policy as
 * serverless.yml packages it is checked to be these statements: test/iam/ec2-role-templates.test.ts).
 */
export function ec2RoleTable(text = readFileSync(EC2_ROLE_STATEMENTS_YML, 'utf8')): string {
  const doc = parseDocument(text);
  const comments = statementComments(doc.contents);
  const policy = ec2RoleStatementsPolicy({ accountId: ACCOUNT_ID, region: REGION, nodeTagKey: NODE_TAG_KEY, statementsText: text });
  return table(policy, comments);
}

/** The IAM section's generated part: both roles' tables. */
export function iamTables(sources: IamSources = {}): string {
  return [
    '**The Lambda role** (serverless.yml `provider.iam.role.statements`):',
    '',
    lambdaRoleTable(sources.serverless),
    '',
    '**The EC2 role** (infra/iam/ec2-role-statements.yml; the deployment\'s own `Ec2Role` and a member account\'s `infra/member-account/ec2-role.yaml` alike):',
    '',
    ec2RoleTable(sources.ec2Statements),
  ].join('\n');
}

/** `page` with its IAM section replaced by `tables`. */
export function withIamSection(page: string, tables = iamTables()): string {
  const begin = page.indexOf(IAM_SECTION.begin);
  const end = page.indexOf(IAM_SECTION.end);
  if (begin < 0 || end < begin) throw new Error(`the page has no ${IAM_SECTION.begin} … ${IAM_SECTION.end} section`);
  return `${page.slice(0, begin + IAM_SECTION.begin.length)}\n${tables}\n${page.slice(end)}`;
}
