/**
 * `npm run iam:templates` (or `npm run docs:iam`): after changing a role's statements, writes
 * what is made from them — the EC2 role's policy text serverless.yml includes
 * (infra/iam/ec2-role-policy.json), the member account's template
 * (infra/member-account/ec2-role.yaml), both from infra/iam/ec2-role-statements.yml
 * (lib/iam/ec2-role-templates.ts) — and then docs/deploy.md's IAM tables (lib/iam/policy-doc.ts).
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { EC2_ROLE_POLICY_JSON, ec2RolePolicyJson, MEMBER_ROLE_TEMPLATE, memberRoleTemplateYaml } from '../lib/iam/ec2-role-templates.js';
import { withIamSection } from '../lib/iam/policy-doc.js';

for (const [path, text] of [
  [EC2_ROLE_POLICY_JSON, ec2RolePolicyJson()],
  [MEMBER_ROLE_TEMPLATE, memberRoleTemplateYaml()],
] as const) {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
  console.log(`wrote ${path}`);
}

const page = new URL('../docs/deploy.md', import.meta.url);
writeFileSync(page, withIamSection(readFileSync(page, 'utf8')));
console.log(`wrote ${page.pathname}`);
