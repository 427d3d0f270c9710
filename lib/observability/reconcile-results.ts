/**
 * What every reconciled item leaves behind: one structured log line (cluster id, item key,
 * outcome) and one count in the metric of its outcome. Hung on the app's `onResult` hook;
 * errors an operator must see, on its `onError` hook.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import { MetricUnit, type Metrics } from '@aws-lambda-powertools/metrics';
import { ERROR_MESSAGES, type ErrorStage } from '../app/app.js';
import type { Correlation } from '../app/correlation.js';
import type { Item, Outcome, Result } from '../contract/index.js';
import { failureParty } from './failure-party.js';

/**
 * One metric per outcome, in namespace `volhook`, dimensions `service` and `clusterId`. A failed
 * item counts in `ReconcileFailed` when it is a system failure, in `ReconcileRefused` when it is
 * a refused input (lib/reconcile/failure-party.ts): a tenant's typo is no operator's page.
 */
export const OUTCOME_METRICS: Readonly<Record<Outcome, string>> = {
  done: 'ReconcileDone',
  requeue: 'ReconcileRequeue',
  failed: 'ReconcileFailed',
};
export const REFUSED_METRIC = 'ReconcileRefused';

/** The metric a result counts in. */
export function outcomeMetric(result: Result): string {
  return result.outcome === 'failed' && failureParty(result.reason) === 'input' ? REFUSED_METRIC : OUTCOME_METRICS[result.outcome];
}

export const RECONCILED_MESSAGE = 'reconciled';

export function recordReconcileResults(logger: Logger, metrics: Metrics) {
  return (clusterId: string, item: Item, result: Result): void => {
    const fields = {
      clusterId,
      itemKey: result.key,
      kind: item.kind,
      outcome: result.outcome,
      writes: result.writes.length,
      ...(result.outcome === 'failed' ? { reason: result.reason, party: failureParty(result.reason), detail: result.message } : {}),
      ...(result.outcome === 'requeue' && result.message ? { detail: result.message } : {}),
      ...(result.outcome !== 'done' && result.requeueAfterSeconds !== undefined ? { requeueAfterSeconds: result.requeueAfterSeconds } : {}),
    };
    if (result.outcome === 'failed') logger.warn(RECONCILED_MESSAGE, fields);
    else logger.info(RECONCILED_MESSAGE, fields);

    countPerCluster(metrics, clusterId, outcomeMetric(result));
  };
}

/** One metric per kind of error an operator must see (see the app's `onError`). */
export const ERROR_METRICS: Readonly<Record<ErrorStage, string>> = {
  reconcile: 'ReconcileError',
  writeBack: 'WriteBackFailed',
};

/**
 * The app's `onError`: an exception in a reconciler (not an EC2 error: a bug) or writes that
 * could not be applied leave one log line at level ERROR, with the stack, and one count in
 * `ReconcileError` / `WriteBackFailed` — so a crash loop is loud, not a quiet 10 s requeue.
 */
export function recordReconcileErrors(logger: Logger, metrics: Metrics) {
  return (clusterId: string, itemKey: string, error: unknown, stage: ErrorStage, correlation?: Correlation): void => {
    logger.error(ERROR_MESSAGES[stage], { ...(correlation && { requestId: correlation.requestId }), clusterId, itemKey, stage, error: error instanceof Error ? error : new Error(String(error)) });
    countPerCluster(metrics, clusterId, ERROR_METRICS[stage]);
  };
}

/** One count of `name` in this invocation's metrics, whose dimension is the request's cluster. */
export function countPerCluster(metrics: Metrics, clusterId: string, name: string): void {
  // A request carries one cluster's items and metrics are flushed per request, so the
  // dimension set with the first metric of a flush holds for all of it.
  if (!metrics.hasStoredMetrics()) metrics.addDimension('clusterId', clusterId);
  metrics.addMetric(name, MetricUnit.Count, 1);
}
