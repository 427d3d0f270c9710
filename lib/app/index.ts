export { createApp, ERROR_MESSAGES, MAX_BODY_BYTES, RECONCILE_BUDGET_MS, type AppDependencies, type ContractSeen, type ErrorStage } from './app.js';
export { createBackendApp, type BackendOptions } from './backend.js';
export { ApiError, ContractRefusedError } from './errors.js';
export { correlationOf, REQUEST_ID_HEADER, type Correlation } from './correlation.js';
