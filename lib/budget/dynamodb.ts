import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { RateBudget } from './budget.js';
import type { BudgetOptions } from './options.js';

export type DynamoDbBudgetOptions = BudgetOptions & { tableName: string; client?: DynamoDBClient };

export function createDynamoDbBudget(_options: DynamoDbBudgetOptions): RateBudget {
  throw new Error('createDynamoDbBudget: being built');
}
