/**
 * The fleet's CloudWatch dashboard and alarms, defined once here and written to
 * infra/monitoring.json (`npm run monitoring`), which serverless.yml includes as CloudFormation.
 * A test checks the file is what this definition makes, so the two never drift apart.
 *
 * Metrics, all in namespace `volhook` with Powertools' `service` dimension:
 * - per cluster (`clusterId`): the reconcile outcomes — refused inputs apart from system
 *   failures — and the errors an operator must see (reconcile-results.ts), the audit's figures
 *   (lib/audit/metrics.ts);
 * - per EC2 action (`Action`): the gateway's calls, throttles, errors, latency and the rate
 *   budget's tokens, and calls and throttles summed over every action (ec2-metrics.ts).
 * Function duration and errors come from AWS/Lambda.
 */
import { AUDIT_METRICS } from '../audit/metrics.js';
import { EC2_METRICS } from './ec2-metrics.js';
import { METRICS_NAMESPACE, SERVICE_NAME } from './powertools.js';
import { ERROR_METRICS, OUTCOME_METRICS, REFUSED_METRIC } from './reconcile-results.js';

export { EC2_METRICS };

/** CloudFormation logical IDs of the functions serverless.yml declares (`api`, `audit`). */
export const FUNCTION_LOGICAL_IDS = { api: 'ApiLambdaFunction', audit: 'AuditLambdaFunction' } as const;

/** Throttled share of EC2 calls above which the throttling alarm fires, over 3 of 3 periods of 5 minutes. */
export const THROTTLE_SHARE_THRESHOLD = 0.1;
/** The audit runs this often (serverless.yml's schedule); the orphan alarm's period. */
export const AUDIT_PERIOD_SECONDS = 3600;

const ns = METRICS_NAMESPACE;
/** A dashboard metric entry: every series of `metric` by `dimension`, found by SEARCH. */
const search = (id: string, dimension: string, metric: string, stat: string, period: number) => [
  { id, expression: `SEARCH('{${ns},${dimension},service} MetricName="${metric}"', '${stat}', ${period})` },
];

interface Widget {
  type: 'metric';
  x: number;
  y: number;
  width: number;
  height: number;
  properties: Record<string, unknown>;
}

function graph(title: string, metrics: unknown[], position: { x: number; y: number }, extra: Record<string, unknown> = {}): Widget {
  return {
    type: 'metric',
    ...position,
    width: 8,
    height: 6,
    properties: { title, view: 'timeSeries', stacked: false, region: '${AWS::Region}', metrics, ...extra },
  };
}

const perCluster = (metric: string, stat: string, period = 300, id = 'e1') => [search(id, 'clusterId', metric, stat, period)];
const perAction = (metric: string, stat: string) => [search('e1', 'Action', metric, stat, 300)];
const lambda = (metric: string, stat: string) =>
  Object.values(FUNCTION_LOGICAL_IDS).map((id) => ['AWS/Lambda', metric, 'FunctionName', `\${${id}}`, { stat }]);

/** The dashboard's widgets, three to a row. */
export function dashboardWidgets(): Widget[] {
  const rows: [string, unknown[], Record<string, unknown>?][] = [
    ['Items done per cluster', perCluster(OUTCOME_METRICS.done, 'Sum')],
    ['Items requeued per cluster', perCluster(OUTCOME_METRICS.requeue, 'Sum')],
    ['Items failed per cluster (system: ownership, IAM, capacity, EC2)', perCluster(OUTCOME_METRICS.failed, 'Sum')],
    ['Inputs refused per cluster (a StorageClass, a claim, a limit of the registration)', perCluster(REFUSED_METRIC, 'Sum')],
    ['Reconcile errors and write-back failures per cluster', [...perCluster(ERROR_METRICS.reconcile, 'Sum', 300, 'errors'), ...perCluster(ERROR_METRICS.writeBack, 'Sum', 300, 'writeback')]],
    ['EC2 calls per action', perAction(EC2_METRICS.calls, 'Sum')],
    ['EC2 throttles per action', perAction(EC2_METRICS.throttles, 'Sum')],
    ['EC2 rate budget: tokens waited per action', perAction(EC2_METRICS.tokensWaited, 'Sum')],
    ['Orphaned volumes per cluster', perCluster(AUDIT_METRICS.orphanedVolumes, 'Maximum', AUDIT_PERIOD_SECONDS)],
    ['Orphaned GiB per cluster', perCluster(AUDIT_METRICS.orphanedGiB, 'Maximum', AUDIT_PERIOD_SECONDS)],
    ['Lost volumes and drifted attachments per cluster', [...perCluster(AUDIT_METRICS.lostVolumes, 'Maximum', AUDIT_PERIOD_SECONDS, 'lost'), ...perCluster(AUDIT_METRICS.driftedAttachments, 'Maximum', AUDIT_PERIOD_SECONDS, 'drift')]],
    ['Orphaned snapshots per cluster', perCluster(AUDIT_METRICS.orphanedSnapshots, 'Maximum', AUDIT_PERIOD_SECONDS)],
    ['Orphaned snapshot GiB per cluster', perCluster(AUDIT_METRICS.orphanedSnapshotGiB, 'Maximum', AUDIT_PERIOD_SECONDS)],
    ['Lost snapshots per cluster', perCluster(AUDIT_METRICS.lostSnapshots, 'Maximum', AUDIT_PERIOD_SECONDS)],
    ['Function duration (p99)', lambda('Duration', 'p99')],
    ['Function errors', lambda('Errors', 'Sum')],
    ['Function throttles', lambda('Throttles', 'Sum')],
  ];
  return rows.map(([title, metrics, extra], n) => graph(title, metrics, { x: (n % 3) * 8, y: Math.floor(n / 3) * 6 }, extra));
}

/** The dashboard body as CloudFormation wants it: one JSON string, with `${…}` for Fn::Sub. */
export function dashboardBody(): string {
  return JSON.stringify({ widgets: dashboardWidgets() });
}

interface AlarmMetric {
  Id: string;
  ReturnData: boolean;
  Expression?: string;
  MetricStat?: { Metric: { Namespace: string; MetricName: string; Dimensions: { Name: string; Value: string }[] }; Period: number; Stat: string };
  Period?: number;
  Label?: string;
}

interface AlarmProps {
  Metrics: AlarmMetric[];
  EvaluationPeriods: number;
  DatapointsToAlarm: number;
  Threshold: number;
}

function alarm(name: string, description: string, props: AlarmProps) {
  return {
    Type: 'AWS::CloudWatch::Alarm',
    Properties: {
      AlarmName: { 'Fn::Sub': `\${AWS::StackName}-${name}` },
      AlarmDescription: description,
      AlarmActions: [{ Ref: 'AlarmTopic' }],
      OKActions: [{ Ref: 'AlarmTopic' }],
      ComparisonOperator: 'GreaterThanThreshold',
      TreatMissingData: 'notBreaching',
      ...props,
    },
  };
}

const serviceOnly = [{ Name: 'service', Value: SERVICE_NAME }];

/** The CloudFormation resources (and outputs) serverless.yml includes from infra/monitoring.json. */
export function monitoringResources() {
  // Every action's calls and throttles, summed by the backend (no `Action` dimension).
  const total = (id: string, metric: string): AlarmMetric => ({ Id: id, ReturnData: false, MetricStat: { Metric: { Namespace: ns, MetricName: metric, Dimensions: serviceOnly }, Period: 300, Stat: 'Sum' } });
  return {
    Resources: {
      AlarmTopic: {
        Type: 'AWS::SNS::Topic',
        Properties: { TopicName: { 'Fn::Sub': '${AWS::StackName}-alarms' }, DisplayName: 'volhook alarms' },
      },
      FleetDashboard: {
        Type: 'AWS::CloudWatch::Dashboard',
        Properties: { DashboardName: { 'Fn::Sub': '${AWS::StackName}-fleet' }, DashboardBody: { 'Fn::Sub': dashboardBody() } },
      },
      FailedItemsAlarm: alarm('failed-items', 'Items failed for a system cause (ownership, IAM, capacity, EC2), in 3 consecutive 5-minute periods, any cluster; refused inputs (a bad StorageClass, a size over the limit) are not counted: they are the tenant\'s to fix', {
        Metrics: [{ Id: 'failed', ReturnData: true, Period: 300, Expression: `SELECT SUM(${OUTCOME_METRICS.failed}) FROM SCHEMA("${ns}", clusterId, service)` }],
        EvaluationPeriods: 3,
        DatapointsToAlarm: 3,
        Threshold: 0,
      }),
      // One Metrics Insights query per alarm: a query cannot be a term of another expression.
      ReconcileErrorsAlarm: alarm('reconcile-errors', `A reconciler failed unexpectedly (${ERROR_METRICS.reconcile}: a bug, or an outage of something it depends on) in any 5 minutes, any cluster: the log lines at ERROR carry the stack`, {
        Metrics: [{ Id: 'errors', ReturnData: true, Period: 300, Expression: `SELECT SUM(${ERROR_METRICS.reconcile}) FROM SCHEMA("${ns}", clusterId, service)` }],
        EvaluationPeriods: 1,
        DatapointsToAlarm: 1,
        Threshold: 0,
      }),
      WriteBackFailedAlarm: alarm('write-back-failed', `Writes the backend applies itself (writeBack: direct) could not be applied (${ERROR_METRICS.writeBack}) in any 5 minutes, any cluster: the log lines at ERROR say which and why`, {
        Metrics: [{ Id: 'failures', ReturnData: true, Period: 300, Expression: `SELECT SUM(${ERROR_METRICS.writeBack}) FROM SCHEMA("${ns}", clusterId, service)` }],
        EvaluationPeriods: 1,
        DatapointsToAlarm: 1,
        Threshold: 0,
      }),
      ThrottlingShareAlarm: alarm('ec2-throttling', `More than ${THROTTLE_SHARE_THRESHOLD * 100}% of EC2 calls (every action) throttled, 3 periods of 5 minutes in a row`, {
        Metrics: [
          total('calls', EC2_METRICS.calls),
          total('throttles', EC2_METRICS.throttles),
          { Id: 'share', ReturnData: true, Label: 'throttled share of EC2 calls', Expression: 'FILL(throttles, 0) / MAX([FILL(calls, 0), 1])' },
        ],
        EvaluationPeriods: 3,
        DatapointsToAlarm: 3,
        Threshold: THROTTLE_SHARE_THRESHOLD,
      }),
      OrphansAlarm: alarm('orphaned-volumes', 'Orphaned volumes found by 2 audits in a row, any cluster: npm run cluster -- audit <id>', {
        Metrics: [{ Id: 'orphans', ReturnData: true, Period: AUDIT_PERIOD_SECONDS, Expression: `SELECT MAX(${AUDIT_METRICS.orphanedVolumes}) FROM SCHEMA("${ns}", clusterId, service)` }],
        EvaluationPeriods: 2,
        DatapointsToAlarm: 2,
        Threshold: 0,
      }),
    },
    Outputs: {
      AlarmTopicArn: { Description: 'Subscribe to be told of volhook alarms', Value: { Ref: 'AlarmTopic' } },
      FleetDashboardName: { Value: { Ref: 'FleetDashboard' } },
    },
  };
}

/** infra/monitoring.json's content. */
export function monitoringJson(): string {
  return `${JSON.stringify(monitoringResources(), null, 2)}\n`;
}
