export { BudgetUnavailableError, type BucketKey, type Grant, type RateBudget } from './budget.js';
export { DEFAULT_AIMD, DEFAULT_SHARE, parseBudgetRates, type AimdOptions, type BudgetOptions, type BudgetRates } from './options.js';
export { createMemoryBudget } from './memory.js';
export { createBudgetDynamoDbClient, createDynamoDbBudget, type DynamoDbBudgetOptions } from './dynamodb.js';
export { budgetFromEnvironment, budgetOptionsFromEnvironment } from './from-environment.js';
export { bucketFor } from '../ec2/throttling.js';
