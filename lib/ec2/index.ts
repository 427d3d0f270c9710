export * from './types.js';
export { classifyEc2Error } from './errors.js';
export { createEc2Client, type Ec2ClientOptions } from './client.js';
export { createEc2Gateway, type Ec2GatewayOptions } from './gateway.js';
export { clientTokenFor } from './token.js';
export { Ec2CallStats, type ActionCounts } from './call-stats.js';
export { BUDGET_UNAVAILABLE_RETRY_SECONDS, budgetAccount, DEFAULT_BUDGET_ACCOUNT, type Ec2CallOutcome, type Ec2Observer, type PacingOptions } from './pacing.js';
export {
  assumeRoleError,
  assumeRoleInput,
  createClusterSessions,
  createStsClient,
  credentialsUsable,
  noRoleError,
  REFRESH_BEFORE_EXPIRY_MS,
  roleSessionName,
  SESSION_DURATION_SECONDS,
  sessionKeyOf,
  type ClusterSessions,
  type ClusterSessionsOptions,
  type SessionCredentials,
  type SessionCredentialsProvider,
  type SessionKey,
  type SessionStats,
  type StsClientOptions,
} from './sessions.js';
export {
  createClusterClients,
  ec2AccessOf,
  refusingGateway,
  type ClusterClients,
  type ClusterClientsOptions,
  type ClusterEc2,
  type Ec2Access,
  type Ec2AccessDefaults,
  type Ec2AccessOf,
} from './cluster-clients.js';
export { ec2FromEnvironment, type Ec2Environment } from './from-environment.js';
