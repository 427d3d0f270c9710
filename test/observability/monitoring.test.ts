import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { AUDIT_METRICS } from '../../lib/audit/index.js';
import { dashboardBody, dashboardWidgets, EC2_METRICS, FUNCTION_LOGICAL_IDS, monitoringJson, monitoringResources } from '../../lib/observability/monitoring.js';
import { ERROR_METRICS, OUTCOME_METRICS } from '../../lib/observability/index.js';
import { REFUSED_METRIC } from '../../lib/observability/reconcile-results.js';

const committed = readFileSync(new URL('../../infra/monitoring.json', import.meta.url), 'utf8');

describe('the dashboard and alarms (one definition, infra/monitoring.json)', () => {
  it('infra/monitoring.json is what lib/observability/monitoring.ts makes (run npm run monitoring after changing it)', () => {
    expect(committed).toBe(monitoringJson());
  });

  it('the dashboard body is valid dashboard JSON once substituted: widgets in a 24-column grid, each with a title and metrics', () => {
    const substituted = dashboardBody().replaceAll('${AWS::Region}', 'us-east-1').replace(/\$\{(\w+)\}/g, 'fn-$1');
    const body = JSON.parse(substituted) as { widgets: { x: number; width: number; properties: { title: string; metrics: unknown[]; region: string } }[] };
    expect(body.widgets.length).toBeGreaterThanOrEqual(9);
    for (const w of body.widgets) {
      expect(w.x + w.width).toBeLessThanOrEqual(24);
      expect(w.properties.title).not.toBe('');
      expect(w.properties.metrics.length).toBeGreaterThan(0);
      expect(w.properties.region).toBe('us-east-1');
    }
    // Every ${…} left is a pseudo parameter or a function the template declares.
    for (const [, name] of dashboardBody().matchAll(/\$\{([^}]+)\}/g)) expect(['AWS::Region', ...Object.values(FUNCTION_LOGICAL_IDS)]).toContain(name);
  });

  it('the dashboard shows items done/requeued/failed and inputs refused per cluster, reconcile errors and write-back failures, EC2 calls and throttles per action, orphans, function duration and errors', () => {
    const text = JSON.stringify(dashboardWidgets());
    for (const metric of [...Object.values(OUTCOME_METRICS), REFUSED_METRIC, ...Object.values(ERROR_METRICS), EC2_METRICS.calls, EC2_METRICS.throttles, AUDIT_METRICS.orphanedVolumes, AUDIT_METRICS.orphanedGiB, AUDIT_METRICS.lostVolumes, AUDIT_METRICS.driftedAttachments, AUDIT_METRICS.orphanedSnapshots, AUDIT_METRICS.orphanedSnapshotGiB, AUDIT_METRICS.lostSnapshots]) {
      expect(text).toContain(`MetricName=\\"${metric}\\"`);
    }
    expect(text).toContain('"Duration"');
    expect(text).toContain('"Errors"');
  });

  it('alarms: system failures (not refused inputs), reconcile errors, write-back failures, the throttled share of every action, orphans in 2 audits in a row; all to the SNS topic', () => {
    const { Resources } = monitoringResources();
    expect(Resources.FailedItemsAlarm.Properties.Metrics[0]!.Expression).toContain(`SUM(${OUTCOME_METRICS.failed})`);
    expect(JSON.stringify(Resources.FailedItemsAlarm)).not.toContain(REFUSED_METRIC);
    expect(Resources.ReconcileErrorsAlarm.Properties.Metrics[0]!.Expression).toBe(`SELECT SUM(${ERROR_METRICS.reconcile}) FROM SCHEMA("volhook", clusterId, service)`);
    expect(Resources.WriteBackFailedAlarm.Properties.Metrics[0]!.Expression).toBe(`SELECT SUM(${ERROR_METRICS.writeBack}) FROM SCHEMA("volhook", clusterId, service)`);
    // The share weighs the sums over every action the backend publishes without `Action`: no action left out.
    const share = Resources.ThrottlingShareAlarm.Properties.Metrics;
    const stats = share.flatMap((m) => ('MetricStat' in m && m.MetricStat ? [m.MetricStat.Metric] : []));
    expect(stats.map((m) => m.MetricName).sort()).toEqual([EC2_METRICS.calls, EC2_METRICS.throttles].sort());
    for (const m of stats) expect(m.Dimensions).toEqual([{ Name: 'service', Value: 'volhook' }]);
    expect(share.filter((m) => m.ReturnData)).toHaveLength(1);
    const orphans = Resources.OrphansAlarm.Properties;
    expect(orphans.Metrics[0]!.Expression).toContain(`MAX(${AUDIT_METRICS.orphanedVolumes})`);
    expect(orphans).toMatchObject({ EvaluationPeriods: 2, DatapointsToAlarm: 2, Threshold: 0, ComparisonOperator: 'GreaterThanThreshold' });
    for (const alarm of [Resources.FailedItemsAlarm, Resources.ReconcileErrorsAlarm, Resources.WriteBackFailedAlarm, Resources.ThrottlingShareAlarm, Resources.OrphansAlarm]) expect(alarm.Properties.AlarmActions).toEqual([{ Ref: 'AlarmTopic' }]);
  });
});
