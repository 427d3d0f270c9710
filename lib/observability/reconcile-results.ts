/**
 * What every reconciled item leaves behind: one structured log line (cluster id, item key,
 * outcome) and one count in the metric of its outcome. Hung on the app's `onResult` hook.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import { MetricUnit, type Metrics } from '@aws-lambda-powertools/metrics';
import type { Item, Outcome, Result } from '../contract/index.js';

/** One metric per outcome, in namespace `volhook`, dimensions `service` and `clusterId`. */
export const OUTCOME_METRICS: Readonly<Record<Outcome, string>> = {
  done: 'ReconcileDone',
  requeue: 'ReconcileRequeue',
  failed: 'ReconcileFailed',
};

export const RECONCILED_MESSAGE = 'reconciled';

export function recordReconcileResults(logger: Logger, metrics: Metrics) {
  return (clusterId: string, item: Item, result: Result): void => {
    const fields = {
      clusterId,
      itemKey: result.key,
      kind: item.kind,
      outcome: result.outcome,
      writes: result.writes.length,
      ...(result.outcome === 'failed' ? { reason: result.reason, detail: result.message } : {}),
      ...(result.outcome === 'requeue' && result.message ? { detail: result.message } : {}),
      ...(result.outcome !== 'done' && result.requeueAfterSeconds !== undefined ? { requeueAfterSeconds: result.requeueAfterSeconds } : {}),
    };
    if (result.outcome === 'failed') logger.warn(RECONCILED_MESSAGE, fields);
    else logger.info(RECONCILED_MESSAGE, fields);

    // A request carries one cluster's items and metrics are flushed per request, so the
    // dimension set with the first metric of a flush holds for all of it.
    if (!metrics.hasStoredMetrics()) metrics.addDimension('clusterId', clusterId);
    metrics.addMetric(OUTCOME_METRICS[result.outcome], MetricUnit.Count, 1);
  };
}
