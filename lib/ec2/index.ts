export * from './types.js';
export { classifyEc2Error } from './errors.js';
export { createEc2Client, type Ec2ClientOptions } from './client.js';
export { createEc2Gateway, type Ec2GatewayOptions } from './gateway.js';
export { clientTokenFor } from './token.js';
export { Ec2CallStats, type ActionCounts } from './call-stats.js';
export { BUDGET_UNAVAILABLE_RETRY_SECONDS, budgetAccount, DEFAULT_BUDGET_ACCOUNT, type Ec2CallOutcome, type Ec2Observer, type PacingOptions } from './pacing.js';
