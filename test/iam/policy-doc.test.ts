/** docs/deploy.md's IAM tables are the ones the roles' statements make (`npm run docs:iam`). */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { EC2_ROLE_STATEMENTS_YML } from '../../lib/iam/ec2-role-templates.js';
import { ec2RoleTable, iamTables, lambdaRoleTable, withIamSection } from '../../lib/iam/policy-doc.js';
import { ec2RolePolicy, lambdaRolePolicy, SERVERLESS_YML } from '../../lib/iam/role-policy.js';

const page = readFileSync(new URL('../../docs/deploy.md', import.meta.url), 'utf8');
const sidsOf = (table: string) => table.split('\n').slice(2).map((r) => r.split(' | ')[0]?.replace('| ', ''));

describe('docs/deploy.md IAM section', () => {
  it('is the tables serverless.yml and infra/iam/ec2-role-statements.yml make: run `npm run docs:iam` after changing a statement', () => {
    expect(page).toBe(withIamSection(page));
  });

  it('has a row for every statement of both roles, named by its Sid, and a reason for each (the comment above it, not a file header)', () => {
    expect(sidsOf(lambdaRoleTable())).toEqual(lambdaRolePolicy().Statement.map((s) => s.Sid));
    expect(sidsOf(ec2RoleTable())).toEqual(ec2RolePolicy().Statement.map((s) => s.Sid));
    for (const row of [...lambdaRoleTable(), ...ec2RoleTable()].join('').split('\n').slice(2)) expect(row, row).not.toMatch(/\|\s*\|$/);
    const describe = ec2RoleTable().split('\n').find((r) => r.startsWith('| DescribeEverywhere '));
    expect(describe).toMatch(/\| Reads of volumes, instances, zones, modifications, volume statuses \(a restored volume's initialization\) and snapshots: EC2's Describe calls support no resource-level permissions\. \|$/);
  });

  it('shows the node tag key as the parameter it is, and the session tag as the policy variable', () => {
    expect(ec2RoleTable()).toContain('StringEquals `ec2:ResourceTag/<NodeTagKey>`: `${aws:PrincipalTag/volhook-nodes}`');
    expect(ec2RoleTable()).toContain('StringEquals `aws:ResourceTag/volhook.io/cluster`: `${aws:PrincipalTag/volhook-cluster}`');
  });

  it('a statement added to serverless.yml or to the EC2 role without the page changes the tables (the first test would fail)', () => {
    const yml = readFileSync(SERVERLESS_YML, 'utf8').replace(
      '        - Sid: AssumeVolhookEc2Roles',
      "        # Added.\n        - Sid: AddedForTheTest\n          Effect: Allow\n          Action: sqs:SendMessage\n          Resource: '*'\n        - Sid: AssumeVolhookEc2Roles",
    );
    expect(withIamSection(page, iamTables({ serverless: yml }))).not.toBe(page);
    expect(lambdaRoleTable(yml)).toContain('| AddedForTheTest | Allow | `sqs:SendMessage` |');

    const statements = readFileSync(EC2_ROLE_STATEMENTS_YML, 'utf8').replace(
      '- Sid: DescribeEverywhere',
      "- Sid: AddedForTheTest\n  Effect: Allow\n  Action: ec2:DescribeTags\n  Resource: '*'\n# Reads.\n- Sid: DescribeEverywhere",
    );
    expect(withIamSection(page, iamTables({ ec2Statements: statements }))).not.toBe(page);
    expect(ec2RoleTable(statements)).toContain('| AddedForTheTest | Allow | `ec2:DescribeTags` |');
  });
});
