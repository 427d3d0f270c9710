import type { RateBudget } from './budget.js';

/** Memory unless VOLHOOK_BUDGET_TABLE is set. */
export function budgetFromEnvironment(_env: NodeJS.ProcessEnv): RateBudget {
  throw new Error('budgetFromEnvironment: being built');
}
