/**
 * EC2 calls per action in the backend's EMF metrics, as the EBS CSI driver exports them
 * (`aws_ebs_csi_api_request_*`): in namespace `volhook`, dimension `Action` (the EC2 API,
 * e.g. `CreateVolume`), one EMF blob per action per request:
 *
 * - `Ec2Calls`: calls made (each one the budget granted);
 * - `Ec2Throttles`: of those, answered RequestLimitExceeded;
 * - `Ec2Errors`: answered with any other error (or none at all: network, deadline);
 * - `Ec2LatencyMs`: each call's latency, the SDK's retries included;
 * - `BudgetTokensGranted` / `BudgetTokensWaited`: tokens the rate budget granted, and items
 *   it sent back to wait for theirs.
 *
 * And once per request, without the `Action` dimension, `Ec2Calls` and `Ec2Throttles` summed
 * over every action: what the throttling alarm weighs, so that it covers every paced action
 * (an alarm's math may use 10 metrics at most: two per action would cover five).
 *
 * Hung on the app's `onEc2Calls` hook.
 */
import { MetricUnit, type Metrics } from '@aws-lambda-powertools/metrics';
import type { Ec2CallStats } from '../ec2/index.js';

export const EC2_METRICS = {
  calls: 'Ec2Calls',
  throttles: 'Ec2Throttles',
  errors: 'Ec2Errors',
  latency: 'Ec2LatencyMs',
  tokensGranted: 'BudgetTokensGranted',
  tokensWaited: 'BudgetTokensWaited',
} as const;

export const ACTION_DIMENSION = 'Action';

/**
 * The app's `onEc2Calls`: `metricsFor()` gives a fresh Metrics (namespace and service set)
 * per action, so that each action's figures go out under its own `Action` dimension, apart
 * from the request's per-cluster outcome counts.
 */
export function recordEc2Metrics(metricsFor: () => Metrics) {
  return (_clusterId: string, stats: Ec2CallStats): void => {
    if (stats.actions.size === 0) return;
    let calls = 0;
    let throttles = 0;
    for (const [action, counts] of stats.actions) {
      calls += counts.calls;
      throttles += counts.throttles;
      const metrics = metricsFor();
      metrics.addDimension(ACTION_DIMENSION, action);
      metrics.addMetric(EC2_METRICS.calls, MetricUnit.Count, counts.calls);
      metrics.addMetric(EC2_METRICS.throttles, MetricUnit.Count, counts.throttles);
      metrics.addMetric(EC2_METRICS.errors, MetricUnit.Count, counts.errors);
      for (const ms of counts.latenciesMs) metrics.addMetric(EC2_METRICS.latency, MetricUnit.Milliseconds, Math.round(ms));
      metrics.addMetric(EC2_METRICS.tokensGranted, MetricUnit.Count, counts.tokensGranted);
      metrics.addMetric(EC2_METRICS.tokensWaited, MetricUnit.Count, counts.tokensWaited);
      metrics.publishStoredMetrics();
    }
    const totals = metricsFor();
    totals.addMetric(EC2_METRICS.calls, MetricUnit.Count, calls);
    totals.addMetric(EC2_METRICS.throttles, MetricUnit.Count, throttles);
    totals.publishStoredMetrics();
  };
}
