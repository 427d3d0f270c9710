/** docs/deploy.md's IAM table is the one serverless.yml's statements make (`npm run docs:iam`). */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { iamStatementsTable, withIamSection } from '../../lib/iam/policy-doc.js';
import { rolePolicy, SERVERLESS_YML } from '../../lib/iam/role-policy.js';

const page = readFileSync(new URL('../../docs/deploy.md', import.meta.url), 'utf8');

describe('docs/deploy.md IAM section', () => {
  it('is the table serverless.yml makes: run `npm run docs:iam` after changing a statement', () => {
    expect(page).toBe(withIamSection(page));
  });

  it('has a row for every statement, named by its Sid, and a reason for each', () => {
    const sids = rolePolicy().Statement.map((s) => s.Sid);
    const rows = iamStatementsTable().split('\n').slice(2);
    expect(rows.map((r) => r.split(' | ')[0]?.replace('| ', ''))).toEqual(sids);
    for (const row of rows) expect(row, row).not.toMatch(/\|\s*\|$/);
  });

  it('a statement added to serverless.yml without the page changes the table (the first test would fail)', () => {
    const yml = readFileSync(SERVERLESS_YML, 'utf8').replace(
      '        - Sid: DescribeEverywhere',
      '        # Added.\n        - Sid: AddedForTheTest\n          Effect: Allow\n          Action: ec2:DescribeTags\n          Resource: \'*\'\n        - Sid: DescribeEverywhere',
    );
    expect(withIamSection(page, iamStatementsTable(yml))).not.toBe(page);
    expect(iamStatementsTable(yml)).toContain('| AddedForTheTest | Allow | `ec2:DescribeTags` |');
  });
});
