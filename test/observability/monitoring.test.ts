import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { AUDIT_METRICS } from '../../lib/audit/index.js';
import { ALARMED_ACTIONS, dashboardBody, dashboardWidgets, EC2_METRICS, FUNCTION_LOGICAL_IDS, monitoringJson, monitoringResources } from '../../lib/observability/monitoring.js';
import { OUTCOME_METRICS } from '../../lib/observability/index.js';

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

  it('the dashboard shows items done/requeued/failed per cluster, EC2 calls and throttles per action, orphans, function duration and errors', () => {
    const text = JSON.stringify(dashboardWidgets());
    for (const metric of [...Object.values(OUTCOME_METRICS), EC2_METRICS.calls, EC2_METRICS.throttles, AUDIT_METRICS.orphanedVolumes, AUDIT_METRICS.orphanedGiB, AUDIT_METRICS.lostVolumes, AUDIT_METRICS.driftedAttachments, AUDIT_METRICS.orphanedSnapshots, AUDIT_METRICS.orphanedSnapshotGiB, AUDIT_METRICS.lostSnapshots]) {
      expect(text).toContain(`MetricName=\\"${metric}\\"`);
    }
    expect(text).toContain('"Duration"');
    expect(text).toContain('"Errors"');
  });

  it('alarms: failed items, throttling share within the 10-metric limit, orphans in 2 audits in a row; all to the SNS topic', () => {
    const { Resources } = monitoringResources();
    expect(Resources.FailedItemsAlarm.Properties.Metrics[0]!.Expression).toContain(`SUM(${OUTCOME_METRICS.failed})`);
    const share = Resources.ThrottlingShareAlarm.Properties.Metrics;
    expect(share.filter((m) => 'MetricStat' in m)).toHaveLength(2 * ALARMED_ACTIONS.length);
    expect(share.filter((m) => 'MetricStat' in m).length).toBeLessThanOrEqual(10);
    expect(share.filter((m) => m.ReturnData)).toHaveLength(1);
    const orphans = Resources.OrphansAlarm.Properties;
    expect(orphans.Metrics[0]!.Expression).toContain(`MAX(${AUDIT_METRICS.orphanedVolumes})`);
    expect(orphans).toMatchObject({ EvaluationPeriods: 2, DatapointsToAlarm: 2, Threshold: 0, ComparisonOperator: 'GreaterThanThreshold' });
    for (const alarm of [Resources.FailedItemsAlarm, Resources.ThrottlingShareAlarm, Resources.OrphansAlarm]) expect(alarm.Properties.AlarmActions).toEqual([{ Ref: 'AlarmTopic' }]);
  });
});
