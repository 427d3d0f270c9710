/**
 * Wraps an API Gateway handler so that each invocation logs with the Lambda context and the
 * API request id, records a ColdStart metric once, and flushes its metrics (EMF on stdout)
 * before returning — also when the handler throws.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import type { LambdaContext } from 'hono/aws-lambda';

export function withObservability<E, R>(
  handler: (event: E, context?: LambdaContext) => Promise<R>,
  { logger, metrics }: { logger: Logger; metrics: Metrics },
): (event: E, context?: LambdaContext) => Promise<R> {
  return async (event, context) => {
    if (context) logger.addContext(context);
    const requestId = apiRequestId(event);
    if (requestId) logger.setCorrelationId(requestId);
    metrics.captureColdStartMetric(context?.functionName);
    try {
      return await handler(event, context);
    } finally {
      // Requests that reconciled nothing (healthz, refusals) have no metrics: skip the empty flush.
      if (metrics.hasStoredMetrics()) metrics.publishStoredMetrics();
      else metrics.clearDimensions();
      logger.resetKeys();
    }
  };
}

/** API Gateway's `requestContext.requestId`, the id its access logs and the caller see. */
function apiRequestId(event: unknown): string | undefined {
  const requestContext = (event as { requestContext?: { requestId?: unknown } } | null)?.requestContext;
  return typeof requestContext?.requestId === 'string' ? requestContext.requestId : undefined;
}
