export { createLogger, createMetrics, METRICS_NAMESPACE, SERVICE_NAME } from './powertools.js';
export { ERROR_METRICS, OUTCOME_METRICS, RECONCILED_MESSAGE, recordReconcileErrors, recordReconcileResults } from './reconcile-results.js';
export { withObservability } from './lambda.js';
export { ACTION_DIMENSION, EC2_METRICS, recordEc2Metrics } from './ec2-metrics.js';
export { CONTRACT_METRICS, CONTRACT_REFUSED_MESSAGE, recordForwarderContracts } from './forwarder-contracts.js';
