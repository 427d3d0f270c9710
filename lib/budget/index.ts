export { BudgetUnavailableError, type BucketKey, type Grant, type RateBudget } from './budget.js';
export { type AimdOptions, type BudgetOptions, type BudgetRates } from './options.js';
export { createMemoryBudget } from './memory.js';
export { createDynamoDbBudget, type DynamoDbBudgetOptions } from './dynamodb.js';
export { budgetFromEnvironment } from './from-environment.js';
export { bucketFor } from '../ec2/throttling.js';
