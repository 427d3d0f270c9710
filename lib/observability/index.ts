export { createLogger, createMetrics, METRICS_NAMESPACE, SERVICE_NAME } from './powertools.js';
export { ERROR_METRICS, OUTCOME_METRICS, RECONCILED_MESSAGE, recordReconcileErrors, recordReconcileResults } from './reconcile-results.js';
export { withObservability } from './lambda.js';
