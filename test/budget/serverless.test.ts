/**
 * The deployed budget as serverless.yml declares it (the packaged template is checked by
 * test/deploy/package.test.ts).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

interface Statement { Sid?: string; Action: string | string[]; Resource: unknown; Condition?: unknown }
const config = parse(readFileSync(new URL('../../serverless.yml', import.meta.url), 'utf8')) as {
  params: Record<string, Record<string, string>>;
  provider: { environment: Record<string, string>; iam: { role: { statements: Statement[] } } };
  /** Files (`${file(...)}`, strings here) and inline `Resources` blocks. */
  resources: Array<string | { Resources: Record<string, { Type: string; Properties: Record<string, unknown> }> }>;
};
const inlineResources = Object.assign({}, ...config.resources.flatMap((r) => (typeof r === 'string' ? [] : [r.Resources])));

describe('serverless.yml: the rate budget', () => {
  it('one on-demand table keyed by pk, its name in VOLHOOK_BUDGET_TABLE (empty offline: memory); a standby\'s sharedBudgetTable in its place', () => {
    expect(inlineResources.RateBudgetTable).toEqual({
      Type: 'AWS::DynamoDB::Table',
      // Not created when the stage shares its primary's (infra/serverless/shared-tables.yml).
      Condition: 'CreatesRateBudgetTable',
      Properties: {
        TableName: '${param:budgetTable}',
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
        KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
        // The security defaults every table has (test/deploy/package.test.ts checks them packaged).
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
        SSESpecification: '${file(./infra/serverless/table-encryption.yml):sse}',
      },
    });
    expect(config.provider.environment.VOLHOOK_BUDGET_TABLE).toBe('${param:sharedBudgetTable, param:budgetTable}');
    expect(config.params.default!.budgetTable).toBe('${self:service}-${sls:stage}-rate-budget');
    expect(config.params.offline!.budgetTable).toBe('');
  });

  it('IAM: GetItem and UpdateItem on that table (or the shared one), nothing else on it', () => {
    const onBudget = config.provider.iam.role.statements.filter((s) => JSON.stringify(s.Resource).includes('budgetTable') || JSON.stringify(s.Resource).includes('BudgetTable'));
    expect(onBudget).toEqual([
      {
        Sid: 'ShareTheRateBudget',
        Effect: 'Allow',
        Action: ['dynamodb:GetItem', 'dynamodb:UpdateItem'],
        Resource: { 'Fn::Sub': 'arn:${AWS::Partition}:dynamodb:${AWS::Region}:${AWS::AccountId}:table/${param:sharedBudgetTable, param:budgetTable}' },
      },
    ]);
  });
});
