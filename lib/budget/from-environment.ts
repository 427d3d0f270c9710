/**
 * Picks the budget the deployment is configured for, as the replay store is picked:
 * - `VOLHOOK_BUDGET_TABLE`: that DynamoDB table (deployed; see serverless.yml), shared by every
 *   function instance and cluster of the account;
 * - otherwise in memory, which paces one process (the local stack, `npm run offline`).
 *
 * Also read: `VOLHOOK_BUDGET_SHARE` (share of AWS's rates, default 0.98),
 * `VOLHOOK_BUDGET_RATES` (per-Region JSON, see docs/pacing.md), `VOLHOOK_BUDGET_TIME_SCALE`
 * (local simulator run faster than real time only), `AWS_ENDPOINT_URL_DYNAMODB`.
 * A bad value is refused with a message naming the variable and field.
 */
import type { RateBudget } from './budget.js';
import { createMemoryBudget } from './memory.js';
import { parseBudgetRates, type BudgetOptions } from './options.js';

/** `defaults` (e.g. an injected clock) apply where the environment says nothing. */
export function budgetFromEnvironment(env: NodeJS.ProcessEnv, defaults: BudgetOptions = {}): RateBudget {
  const options = { ...defaults, ...budgetOptionsFromEnvironment(env) };
  const table = env.VOLHOOK_BUDGET_TABLE?.trim();
  if (!table) return createMemoryBudget(options);
  const endpoint = env.AWS_ENDPOINT_URL_DYNAMODB?.trim() || undefined;
  const region = env.AWS_REGION?.trim() || undefined;
  // The DynamoDB SDK is loaded on the first take, not at import: it waits in a chunk of the
  // function's bundle instead of weighing on every cold start (test/deploy/package.test.ts).
  let loaded: Promise<RateBudget> | undefined;
  const budget = () =>
    (loaded ??= import('./dynamodb.js').then(({ createBudgetDynamoDbClient, createDynamoDbBudget }) =>
      createDynamoDbBudget({ ...options, tableName: table, client: createBudgetDynamoDbClient({ endpoint, region }) }),
    ));
  return {
    take: async (key, wanted) => (await budget()).take(key, wanted),
    throttled: async (key) => (await budget()).throttled(key),
  };
}

export function budgetOptionsFromEnvironment(env: NodeJS.ProcessEnv): BudgetOptions {
  const options: BudgetOptions = {};
  const share = numberVariable(env, 'VOLHOOK_BUDGET_SHARE');
  if (share !== undefined) {
    if (!(share > 0 && share <= 1)) throw new Error(`VOLHOOK_BUDGET_SHARE must be in (0, 1], got ${share}`);
    options.share = share;
  }
  const timeScale = numberVariable(env, 'VOLHOOK_BUDGET_TIME_SCALE');
  if (timeScale !== undefined) {
    if (!(timeScale > 0)) throw new Error(`VOLHOOK_BUDGET_TIME_SCALE must be positive, got ${timeScale}`);
    options.timeScale = timeScale;
  }
  const rates = env.VOLHOOK_BUDGET_RATES?.trim();
  if (rates) {
    let json: unknown;
    try {
      json = JSON.parse(rates);
    } catch (err) {
      throw new Error(`VOLHOOK_BUDGET_RATES is not JSON: ${(err as Error).message}`);
    }
    options.rates = parseBudgetRates(json, 'VOLHOOK_BUDGET_RATES');
  }
  return options;
}

function numberVariable(env: NodeJS.ProcessEnv, name: string): number | undefined {
  const raw = env[name]?.trim();
  if (!raw) return undefined;
  const n = Number(raw);
  if (!Number.isFinite(n)) throw new Error(`${name} must be a number, got ${JSON.stringify(raw)}`);
  return n;
}
