/**
 * What a standby's shared-table params may be (lib/dynamodb/shared-table.ts), as
 * infra/serverless/shared-tables.cjs checks them before any command; the packaged template
 * with them set, and a refused value stopping `osls package`, are test/deploy/package.test.ts's.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { sharedTableRefusal, sharedTableRefusals } from '../../lib/dynamodb/shared-table.js';

const replay = (value: string) => ({ param: 'sharedReplayTable', value, own: 'volhook-prod-standby-webhook-ids' });

describe('sharedTableRefusal', () => {
  it.each(['volhook-prod-webhook-ids', 'volhook-prod-rate-budget', 'a.b_c', 'x'.repeat(255)])('%s (a table name) -> used', (name) => {
    expect(sharedTableRefusal(replay(name))).toBeUndefined();
  });

  it('not given (empty) -> nothing to refuse: the stage creates its own', () => {
    expect(sharedTableRefusal(replay(''))).toBeUndefined();
  });

  it('an ARN -> refused, asking for the name in this account and Region (a global table\'s replica)', () => {
    expect(sharedTableRefusal(replay('arn:aws:dynamodb:us-east-1:111122223333:table/volhook-prod-webhook-ids'))).toBe(
      '--param="sharedReplayTable=arn:aws:dynamodb:us-east-1:111122223333:table/volhook-prod-webhook-ids": give the table\'s name, not its ARN. The table must be in this deployment\'s account and Region (for a primary in another Region, give the name of its global table, which has a replica here); the functions\' role is granted that table\'s ARN alone.',
    );
  });

  it.each(['ab', 'x'.repeat(256), 'volhook prod', 'volhook/prod', 'table/*', '*', 'volhook-prod-${x}'])('%s (no table name) -> refused, naming the param and the rule', (value) => {
    expect(sharedTableRefusal(replay(value))).toBe(`--param="sharedReplayTable=${value}": not a DynamoDB table name (3 to 255 letters, digits, "_", "-" or "."). Give the name of the primary's table, e.g. volhook-prod-webhook-ids.`);
  });

  it("the stage's own table -> refused: sharing it would stop the stack creating (and keeping) it", () => {
    expect(sharedTableRefusal(replay('volhook-prod-standby-webhook-ids'))).toMatch(/^--param="sharedReplayTable=volhook-prod-standby-webhook-ids": that is the table this stage creates itself; .* leaves sharedReplayTable unset\.$/);
  });

  it('sharedTableRefusals: one message for each refused param, none for the good ones', () => {
    const budget = { param: 'sharedBudgetTable', value: 'arn:aws:dynamodb:us-east-1:1:table/t', own: 'volhook-x-rate-budget' };
    expect(sharedTableRefusals([replay('volhook-prod-webhook-ids'), budget])).toEqual([sharedTableRefusal(budget)]);
    expect(sharedTableRefusals([replay('volhook-prod-webhook-ids'), { ...budget, value: 'volhook-prod-rate-budget' }])).toEqual([]);
  });
});

describe("serverless.yml's custom.sharedTables: what the plugin checks", () => {
  const yml = parse(readFileSync(new URL('../../serverless.yml', import.meta.url), 'utf8')) as {
    plugins: string[];
    custom: { sharedTables: { param: string; value: string; own: string }[] };
    provider: { environment: Record<string, string> };
  };

  it('both shared-table params, each beside the stage\'s own table, and the very variables the environment reads', () => {
    expect(yml.custom.sharedTables).toEqual([
      { param: 'sharedReplayTable', value: "${param:sharedReplayTable, ''}", own: '${param:replayTable}' },
      { param: 'sharedBudgetTable', value: "${param:sharedBudgetTable, ''}", own: '${param:budgetTable}' },
    ]);
    expect(yml.provider.environment.VOLHOOK_REPLAY_TABLE).toBe('${param:sharedReplayTable, param:replayTable}');
    expect(yml.provider.environment.VOLHOOK_BUDGET_TABLE).toBe('${param:sharedBudgetTable, param:budgetTable}');
    expect(yml.plugins).toContain('./infra/serverless/shared-tables.cjs');
  });
});
