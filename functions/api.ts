/**
 * Lambda entry point: the same hono app the local stack serves, behind API Gateway HTTP API.
 * Built once per container so EC2 clients and registry caches live across invocations.
 * Seen webhook ids live in DynamoDB (VOLHOOK_REPLAY_TABLE), shared by every container.
 * Every reconciled item is logged (cluster id, item key, outcome) and counted per outcome,
 * every reconciler exception and failed direct write logged at ERROR and counted; metrics are
 * flushed as EMF at the end of each invocation.
 */
import { handle } from 'hono/aws-lambda';
import { createBackendApp } from '../lib/app/index.js';
import { createLogger, createMetrics, recordReconcileErrors, recordReconcileResults, withObservability } from '../lib/observability/index.js';
import { registryFromEnvironment } from '../lib/registry/index.js';
import { replayStoreFromEnvironment } from '../lib/replay/index.js';

const logger = createLogger();
const metrics = createMetrics();

export const handler = withObservability(
  handle(
    createBackendApp({
      registry: registryFromEnvironment(process.env),
      replay: replayStoreFromEnvironment(process.env),
      ec2Endpoint: process.env.AWS_ENDPOINT_URL_EC2 ?? process.env.AWS_ENDPOINT_URL,
      onResult: recordReconcileResults(logger, metrics),
      onError: recordReconcileErrors(logger, metrics),
    }),
  ),
  { logger, metrics },
);
