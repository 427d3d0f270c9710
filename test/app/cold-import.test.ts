/**
 * What the Lambda entry does at import, which every cold start pays before its first request:
 * it builds none of the contract's zod schemas (each is built by the first request that parses
 * with it, lib/contract/deferred.ts), so a schema someone makes eager again, or a use of one
 * at import, shows here. The time itself is measured by `npm run bench:coldstart`, not here.
 */
import { afterEach, expect, it, vi } from 'vitest';

afterEach(() => {
  vi.unstubAllEnvs();
});

it('importing functions/api.ts (as deployed: SSM registry, DynamoDB replay and budget) builds no contract, registration, report or budget schema', async () => {
  vi.stubEnv('AWS_REGION', 'us-east-1');
  vi.stubEnv('VOLHOOK_REGISTRY_FILE', '');
  vi.stubEnv('VOLHOOK_REGISTRY_SSM_PATH', '/volhook/test/clusters/');
  vi.stubEnv('VOLHOOK_REPLAY_TABLE', 'volhook-test-webhook-ids');
  vi.stubEnv('VOLHOOK_BUDGET_TABLE', 'volhook-test-rate-budget');
  vi.resetModules();
  const api = await import('../../functions/api.js');
  expect(typeof api.handler).toBe('function');

  const modules = await Promise.all([
    import('../../lib/contract/index.js'),
    import('../../lib/registry/index.js'),
    import('../../lib/reports/index.js'),
    import('../../lib/budget/options.js'),
  ]);
  const schemas = modules.flatMap((m) => Object.entries(m)).filter(([name]) => /Schema$/i.test(name));
  expect(schemas.length).toBeGreaterThan(40);
  // A built zod schema has own properties (`_zod`, `def`, `parse`…); a stand-in not yet used has none.
  expect(schemas.filter(([, schema]) => Reflect.ownKeys(schema as object).length > 0).map(([name]) => name)).toEqual([]);
});

it('the in-memory budget (local stack, offline) is built at import without building a schema', async () => {
  vi.stubEnv('AWS_REGION', 'us-east-1');
  vi.stubEnv('VOLHOOK_REGISTRY_FILE', '');
  vi.stubEnv('VOLHOOK_REGISTRY_SSM_PATH', '/volhook/test/clusters/');
  vi.stubEnv('VOLHOOK_BUDGET_TABLE', '');
  vi.resetModules();
  await import('../../functions/api.js');
  const { budgetRatesSchema } = await import('../../lib/budget/options.js');
  expect(Reflect.ownKeys(budgetRatesSchema)).toEqual([]);
});
