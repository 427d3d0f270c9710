/**
 * Lambda entry point: the same hono app the local stack serves, behind API Gateway HTTP API.
 * Built once per container so EC2 clients, cluster sessions and registry caches live across
 * invocations. Every cluster's EC2 calls run in its own session of an EC2 role (the
 * registration's aws.roleArn, else VOLHOOK_EC2_ROLE_ARN; lib/ec2/sessions.ts), never under the
 * function's role. Seen webhook ids live in DynamoDB (VOLHOOK_REPLAY_TABLE), shared by every
 * container, and so do the clusters' volume reports (VOLHOOK_REPORTS_TABLE, which the audit
 * function reads) and the EC2 rate budget (VOLHOOK_BUDGET_TABLE), keyed by the account of
 * the cluster's role and the cluster's Region. EC2 calls are counted per action (EMF, dimension `Action`).
 * Every reconciled item is logged (cluster id, item key, outcome) and counted per outcome,
 * every reconciler exception and failed direct write logged at ERROR and counted; each
 * request's contract and forwarder version logged and counted per cluster; metrics are
 * flushed as EMF at the end of each invocation.
 */
import { handle } from 'hono/aws-lambda';
import { createBackendApp } from '../lib/app/index.js';
import { gzipBodyAsText } from '../lib/app/lambda-body.js';
import { budgetFromEnvironment } from '../lib/budget/from-environment.js';
import { ec2FromEnvironment } from '../lib/ec2/from-environment.js';
import { createLogger, createMetrics, recordEc2Metrics, recordForwarderContracts, recordReconcileErrors, recordReconcileResults, withObservability } from '../lib/observability/index.js';
import { registryFromEnvironment } from '../lib/registry/index.js';
import { replayStoreFromEnvironment } from '../lib/replay/index.js';
import { reportStoreFromEnvironment } from '../lib/reports/index.js';

const logger = createLogger();
const metrics = createMetrics();

const app = handle(
  createBackendApp({
    registry: registryFromEnvironment(process.env),
    replay: replayStoreFromEnvironment(process.env),
    // The clusters' volume reports, in DynamoDB (VOLHOOK_REPORTS_TABLE), where the audit function reads them.
    reports: reportStoreFromEnvironment(process.env),
    // VOLHOOK_EC2_ROLE_ARN, VOLHOOK_NODE_TAG_KEY, the EC2 and STS endpoints.
    ...ec2FromEnvironment(process.env),
    // Every EC2 call takes its token from the budget all containers share (VOLHOOK_BUDGET_TABLE).
    budget: budgetFromEnvironment(process.env),
    onResult: recordReconcileResults(logger, metrics),
    // The contract and forwarder version of each request, per cluster (docs/upgrade.md).
    onContract: recordForwarderContracts(logger, metrics),
    onError: recordReconcileErrors(logger, metrics),
    onEc2Calls: recordEc2Metrics(() => createMetrics()),
  }),
);

// A gzip'd body API Gateway passed as text cannot be decoded: refused before the app (lib/app/lambda-body.ts).
export const handler = withObservability(
  async (event: Parameters<typeof app>[0], context?: Parameters<typeof app>[1]) => gzipBodyAsText(event) ?? app(event, context),
  { logger, metrics },
);
