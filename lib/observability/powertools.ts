/**
 * The Powertools logger and metrics volhook's functions share. Service name and namespace
 * come from POWERTOOLS_SERVICE_NAME / POWERTOOLS_METRICS_NAMESPACE (set in serverless.yml);
 * these defaults apply elsewhere (tests, `npm run offline` without them).
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';

export const SERVICE_NAME = 'volhook';
export const METRICS_NAMESPACE = 'volhook';

export function createLogger(env: NodeJS.ProcessEnv = process.env): Logger {
  return new Logger({ serviceName: env.POWERTOOLS_SERVICE_NAME || SERVICE_NAME });
}

export function createMetrics(env: NodeJS.ProcessEnv = process.env): Metrics {
  return new Metrics({
    namespace: env.POWERTOOLS_METRICS_NAMESPACE || METRICS_NAMESPACE,
    serviceName: env.POWERTOOLS_SERVICE_NAME || SERVICE_NAME,
  });
}
