/**
 * The EC2 role's statements are defined once (infra/iam/ec2-role-statements.yml) and both
 * templates that make an EC2 role hold exactly them: serverless.yml's own-account Ec2Role
 * (through infra/iam/ec2-role-policy.json) and the member account's
 * infra/member-account/ec2-role.yaml, each checked in as `npm run iam:templates` writes it.
 */
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { SessionTagKeys, TagKeys } from '../../lib/contract/tags.js';
import {
  EC2_ROLE_PATH,
  EC2_ROLE_POLICY_JSON,
  EC2_ROLE_STATEMENTS_YML,
  ec2RolePolicyJson,
  ec2RoleStatements,
  MEMBER_ROLE_TEMPLATE,
  memberRoleTemplateYaml,
} from '../../lib/iam/ec2-role-templates.js';
import { ec2Role, ec2RoleArn, ec2RolePolicy, ec2RoleStatementsPolicy, memberEc2Role, memberEc2RoleArn, memberEc2RolePolicy } from '../../lib/iam/role-policy.js';

const where = { region: 'eu-west-1', accountId: '210987654321' };

describe('the EC2 role templates (one definition: infra/iam/ec2-role-statements.yml)', () => {
  it('infra/iam/ec2-role-policy.json and infra/member-account/ec2-role.yaml are what the statements make (run npm run iam:templates after changing them)', () => {
    expect(readFileSync(EC2_ROLE_POLICY_JSON, 'utf8')).toBe(ec2RolePolicyJson());
    expect(readFileSync(MEMBER_ROLE_TEMPLATE, 'utf8')).toBe(memberRoleTemplateYaml());
  });

  it('a changed statement changes both generated files (the first test would fail)', () => {
    const changed = readFileSync(EC2_ROLE_STATEMENTS_YML, 'utf8').replace('ec2:DescribeSnapshots', 'ec2:DescribeTags');
    expect(ec2RolePolicyJson(changed)).not.toBe(ec2RolePolicyJson());
    expect(memberRoleTemplateYaml(changed)).not.toBe(memberRoleTemplateYaml());
  });

  it('serverless.yml’s EC2 role and a member account’s resolve to the same statements, those of the statements file, for any node tag key', () => {
    const own = ec2RolePolicy({ ...where, stage: 'prod' });
    expect(own).toEqual(ec2RoleStatementsPolicy(where));
    expect(memberEc2RolePolicy(where)).toEqual(own);
    const karpenter = { ...where, nodeTagKey: 'karpenter.sh/nodepool' };
    expect(memberEc2RolePolicy(karpenter)).toEqual(ec2RolePolicy(karpenter));
    expect(JSON.stringify(memberEc2RolePolicy(karpenter))).toContain('"ec2:ResourceTag/karpenter.sh/nodepool":"${aws:PrincipalTag/volhook-nodes}"');
    expect(JSON.stringify(own)).toContain('"ec2:ResourceTag/eks:cluster-name":"${aws:PrincipalTag/volhook-nodes}"');
  });

  it('names the agreed tag keys: volhook.io/cluster and the session tags volhook-cluster, volhook-nodes', () => {
    const text = JSON.stringify(ec2RoleStatementsPolicy());
    expect(text).toContain(`aws:ResourceTag/${TagKeys.volhookCluster}`);
    expect(text).toContain(`aws:RequestTag/${TagKeys.volhookCluster}`);
    expect(text).toContain(`\${aws:PrincipalTag/${SessionTagKeys.cluster}}`);
    expect(text).toContain(`aws:PrincipalTag/${SessionTagKeys.nodes}`);
  });

  it('the statements file substitutes only the pseudo parameters, ${NodeTagKey} and ${!…}: anything else is refused by name', () => {
    expect(ec2RoleStatements().length).toBeGreaterThan(0);
    const bad = readFileSync(EC2_ROLE_STATEMENTS_YML, 'utf8').replace("'${!aws:PrincipalTag/volhook-nodes}'", "'${aws:PrincipalTag/volhook-nodes}'");
    expect(() => ec2RoleStatements(bad)).toThrow('names ${aws:PrincipalTag/volhook-nodes}');
  });

  it('the member template: parameters BackendRoleArn and ExternalId (required), NodeTagKey (eks:cluster-name) and RoleName (volhook-ec2); the role under /volhook/, trusting the backend with the ExternalId', () => {
    const template = parse(readFileSync(MEMBER_ROLE_TEMPLATE, 'utf8'));
    expect(template.AWSTemplateFormatVersion).toBe('2010-09-09');
    const params = template.Parameters;
    expect(Object.keys(params)).toEqual(['BackendRoleArn', 'ExternalId', 'NodeTagKey', 'RoleName']);
    expect(params.BackendRoleArn.Default).toBeUndefined();
    expect(params.ExternalId.Default).toBeUndefined();
    expect(params.NodeTagKey.Default).toBe('eks:cluster-name');
    expect(params.RoleName.Default).toBe('volhook-ec2');
    const role = template.Resources.Ec2Role;
    expect(Object.keys(template.Resources)).toEqual(['Ec2Role']);
    expect(role.Type).toBe('AWS::IAM::Role');
    expect(role.Properties.Path).toBe(EC2_ROLE_PATH);
    expect(role.Properties.AssumeRolePolicyDocument.Statement).toEqual([
      { Sid: 'TheBackendWithTheExternalId', Effect: 'Allow', Principal: { AWS: { Ref: 'BackendRoleArn' } }, Action: 'sts:AssumeRole', Condition: { StringEquals: { 'sts:ExternalId': { Ref: 'ExternalId' } } } },
      { Sid: 'TheBackendTagsItsSessions', Effect: 'Allow', Principal: { AWS: { Ref: 'BackendRoleArn' } }, Action: 'sts:TagSession' },
    ]);
    expect(template.Outputs.RoleArn.Value).toEqual({ 'Fn::GetAtt': ['Ec2Role', 'Arn'] });
    expect(memberEc2RoleArn(where)).toBe('arn:aws:iam::210987654321:role/volhook/volhook-ec2');
    expect(memberEc2RoleArn({ ...where, roleName: 'team-a-volhook' })).toBe('arn:aws:iam::210987654321:role/volhook/team-a-volhook');
  });

  it('the deployment’s own EC2 role: under /volhook/, named for stage and Region', () => {
    expect(ec2RoleArn({ ...where, stage: 'prod' })).toBe('arn:aws:iam::210987654321:role/volhook/volhook-prod-eu-west-1-ec2');
  });

  it('ec2Role and memberEc2Role: the roles the simulator’s STS holds — the policy and the trust (the member’s with its ExternalId)', () => {
    const own = ec2Role({ ...where, trust: { principals: ['backend'] } });
    expect(own).toEqual({ policies: [{ name: 'volhook-ec2', document: ec2RolePolicy(where) }], trust: { principals: ['backend'] } });
    const member = memberEc2Role({ ...where, trust: { principals: ['backend'], externalId: 'ext-1' } });
    expect(member).toEqual({ policies: [{ name: 'volhook-ec2', document: memberEc2RolePolicy(where) }], trust: { principals: ['backend'], externalId: 'ext-1' } });
  });
});
