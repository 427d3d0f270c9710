/**
 * docs/deploy.md's IAM section, made from the role policy itself (`npm run docs:iam` writes
 * it; test/iam/policy-doc.test.ts fails when the page and serverless.yml disagree): one row a
 * statement, with the comment serverless.yml has above it as the reason.
 */
import { readFileSync } from 'node:fs';
import { isMap, isSeq, parseDocument } from 'yaml';
import { listOf, type PolicyStatement } from './policy.js';
import { rolePolicy, SERVERLESS_YML } from './role-policy.js';

export const IAM_SECTION = { begin: '<!-- iam-statements:begin (npm run docs:iam) -->', end: '<!-- iam-statements:end -->' } as const;

/** The comment above each statement in serverless.yml, by Sid. */
function statementComments(text: string): Map<string, string> {
  const doc = parseDocument(text);
  const statements = doc.getIn(['provider', 'iam', 'role', 'statements'], true);
  const out = new Map<string, string>();
  if (!isSeq(statements)) return out;
  statements.items.forEach((item, n) => {
    // The parser gives the comment above the first item to the list.
    const comment = (n === 0 ? statements.commentBefore : isMap(item) ? item.commentBefore : undefined) ?? '';
    const sid = isMap(item) ? item.get('Sid') : undefined;
    if (typeof sid === 'string') out.set(sid, comment.split('\n').map((l: string) => l.trim()).join(' ').trim());
  });
  return out;
}

const code = (s: string) => `\`${s}\``;

function conditionText(condition: PolicyStatement['Condition'], show: (s: string) => string): string {
  if (!condition) return '—';
  return Object.entries(condition)
    .flatMap(([op, keys]) => Object.entries(keys).map(([key, value]) => `${op} ${code(key)}: ${listOf(value).map((v) => code(show(v))).join(', ')}`))
    .join('<br>');
}

/** Placeholders in place of the example account and Region, so the table reads for any. */
function generic(value: string, accountId: string, region: string): string {
  return value
    .replaceAll(accountId, '<account>')
    .replaceAll(`:${region}:`, ':<region>:')
    .replaceAll(`.${region}.`, '.<region>.')
    .replaceAll('volhook/dev/', 'volhook/<stage>/')
    .replaceAll('volhook-dev-', 'volhook-<stage>-');
}

/** The markdown table of the role's statements. */
export function iamStatementsTable(text = readFileSync(SERVERLESS_YML, 'utf8')): string {
  const accountId = '123456789012';
  const region = 'us-east-1';
  const policy = rolePolicy({ text, accountId, region });
  const comments = statementComments(text);
  const show = (v: string) => generic(v, accountId, region);
  const rows = policy.Statement.map((s) => {
    const resources = listOf(s.Resource).map((r) => code(show(r))).join('<br>');
    return `| ${s.Sid ?? ''} | ${s.Effect} | ${listOf(s.Action).map(code).join('<br>')} | ${resources} | ${conditionText(s.Condition, show)} | ${comments.get(s.Sid ?? '') ?? ''} |`;
  });
  return ['| statement | effect | actions | resources | conditions | why |', '|---|---|---|---|---|---|', ...rows].join('\n');
}

/** `page` with its IAM section replaced by the table of `text`'s statements. */
export function withIamSection(page: string, table = iamStatementsTable()): string {
  const begin = page.indexOf(IAM_SECTION.begin);
  const end = page.indexOf(IAM_SECTION.end);
  if (begin < 0 || end < begin) throw new Error(`the page has no ${IAM_SECTION.begin} … ${IAM_SECTION.end} section`);
  return `${page.slice(0, begin + IAM_SECTION.begin.length)}\n${table}\n${page.slice(end)}`;
}
