export { createLogger, createMetrics, METRICS_NAMESPACE, SERVICE_NAME } from './powertools.js';
export { OUTCOME_METRICS, RECONCILED_MESSAGE, recordReconcileResults } from './reconcile-results.js';
export { withObservability } from './lambda.js';
