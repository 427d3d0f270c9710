import type { RateBudget } from './budget.js';
import type { BudgetOptions } from './options.js';

export function createMemoryBudget(_options?: BudgetOptions): RateBudget {
  throw new Error('createMemoryBudget: being built');
}
