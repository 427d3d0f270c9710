/**
 * Every reconciled item leaves one structured log line (cluster id, item key, outcome) and
 * one count in the metric of its outcome, flushed as CloudWatch EMF once per invocation.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Logger } from '@aws-lambda-powertools/logger';
import { DescribeVolumesCommand, EC2Client } from '@aws-sdk/client-ec2';
import { mockClient } from 'aws-sdk-client-mock';
import { Metrics } from '@aws-lambda-powertools/metrics';
import type { LambdaContext, LambdaEvent } from 'hono/aws-lambda';
import { afterEach, beforeAll, describe, expect, it, vi, type MockInstance } from 'vitest';
import type { Item, Result } from '../../lib/contract/index.js';
import { Ec2CallStats } from '../../lib/ec2/index.js';
import { CONTRACT_REFUSED_MESSAGE, recordEc2Metrics, recordForwarderContracts, recordReconcileResults } from '../../lib/observability/index.js';
import { NOW_MS, SECRET_C1 } from '../app/harness.js';

// Powertools writes INFO and EMF to stdout, WARN and ERROR to stderr.
let stdout: MockInstance<typeof process.stdout.write>;
let stderr: MockInstance<typeof process.stderr.write>;
function captured(): Array<Record<string, any>> {
  return [...stdout.mock.calls, ...stderr.mock.calls]
    .flatMap(([chunk]) => String(chunk).split('\n'))
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line));
}
const logLines = () => captured().filter((l) => l.message === 'reconciled');
const emfBlobs = () => captured().filter((l) => l._aws);

function startCapture() {
  stdout = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
  stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
}
afterEach(() => {
  stdout?.mockRestore();
  stderr?.mockRestore();
});

const item = (uid: string): Item => ({ kind: 'PersistentVolumeClaimDeleted', uid, namespace: 'default', name: `data-${uid}`, pvExists: false, pvCheckedLive: false });

describe('recordReconcileResults', () => {
  it('done, requeue, failed -> a log line each (failed as WARN with its reason) and one EMF blob counting each outcome', () => {
    startCapture();
    const logger = new Logger({ serviceName: 'volhook' });
    const metrics = new Metrics({ namespace: 'volhook', serviceName: 'volhook' });
    const record = recordReconcileResults(logger, metrics);
    const results: Result[] = [
      { key: 'PersistentVolumeClaimDeleted/a', outcome: 'done', writes: [] },
      { key: 'PersistentVolumeClaimDeleted/b', outcome: 'requeue', requeueAfterSeconds: 2, message: 'volume is being created', writes: [] },
      { key: 'PersistentVolumeClaimDeleted/c', outcome: 'failed', reason: 'InvalidParameter', message: 'type "gp9" is unknown', writes: [] },
      { key: 'PersistentVolumeClaimDeleted/d', outcome: 'failed', reason: 'UnauthorizedOperation', message: 'ec2:CreateVolume is not allowed', writes: [] },
    ];
    results.forEach((r, i) => record('c1', item('abcd'[i]!), r));
    metrics.publishStoredMetrics();

    const byKey = (a: Record<string, any>, b: Record<string, any>) => a.itemKey.localeCompare(b.itemKey);
    expect(logLines().sort(byKey).map((l) => [l.level, l.clusterId, l.itemKey, l.outcome])).toEqual([
      ['INFO', 'c1', 'PersistentVolumeClaimDeleted/a', 'done'],
      ['INFO', 'c1', 'PersistentVolumeClaimDeleted/b', 'requeue'],
      ['WARN', 'c1', 'PersistentVolumeClaimDeleted/c', 'failed'],
      ['WARN', 'c1', 'PersistentVolumeClaimDeleted/d', 'failed'],
    ]);
    const [, requeued, refused, failed] = logLines().sort(byKey);
    // A tenant's bad parameter is a refused input; a denied EC2 call a system failure.
    expect(refused).toMatchObject({ reason: 'InvalidParameter', party: 'input', detail: 'type "gp9" is unknown', service: 'volhook' });
    expect(failed).toMatchObject({ reason: 'UnauthorizedOperation', party: 'system' });
    expect(requeued).toMatchObject({ requeueAfterSeconds: 2, detail: 'volume is being created' });

    const [blob, ...more] = emfBlobs();
    expect(more).toEqual([]);
    expect(blob!._aws.CloudWatchMetrics).toEqual([
      {
        Namespace: 'volhook',
        Dimensions: [['service', 'clusterId']],
        Metrics: expect.arrayContaining([
          { Name: 'ReconcileDone', Unit: 'Count' },
          { Name: 'ReconcileRequeue', Unit: 'Count' },
          { Name: 'ReconcileRefused', Unit: 'Count' },
          { Name: 'ReconcileFailed', Unit: 'Count' },
        ]),
      },
    ]);
    expect(blob).toMatchObject({ clusterId: 'c1', service: 'volhook', ReconcileDone: 1, ReconcileRequeue: 1, ReconcileRefused: 1, ReconcileFailed: 1 });
  });
});

describe('recordForwarderContracts', () => {
  it('a served request of contract 2 -> its reconciled lines carry contract and forwarder version; one count in ContractRequests2 per cluster', () => {
    startCapture();
    const logger = new Logger({ serviceName: 'volhook' });
    const metrics = new Metrics({ namespace: 'volhook', serviceName: 'volhook' });
    recordForwarderContracts(logger, metrics)('c1', { contract: 2, forwarderVersion: '0.2.0', served: true });
    recordReconcileResults(logger, metrics)('c1', item('a'), { key: 'PersistentVolumeClaimDeleted/a', outcome: 'done', writes: [] });
    metrics.publishStoredMetrics();
    logger.resetKeys();

    expect(logLines().map((l) => [l.clusterId, l.contract, l.forwarderVersion])).toEqual([['c1', 2, '0.2.0']]);
    const [blob, ...more] = emfBlobs();
    expect(more).toEqual([]);
    expect(blob).toMatchObject({ clusterId: 'c1', ContractRequests2: 1, ReconcileDone: 1 });
    expect(blob!._aws.CloudWatchMetrics[0].Dimensions).toEqual([['service', 'clusterId']]);
  });

  it('a refused request of contract 99 -> a WARN line "contract refused" naming both versions; one count in ContractRefused', () => {
    startCapture();
    const logger = new Logger({ serviceName: 'volhook' });
    const metrics = new Metrics({ namespace: 'volhook', serviceName: 'volhook' });
    recordForwarderContracts(logger, metrics)('c1', { contract: 99, forwarderVersion: '9.0.0', served: false });
    metrics.publishStoredMetrics();

    expect(captured().filter((l) => l.message === CONTRACT_REFUSED_MESSAGE)).toEqual([expect.objectContaining({ level: 'WARN', clusterId: 'c1', contract: 99, forwarderVersion: '9.0.0' })]);
    expect(emfBlobs()).toEqual([expect.objectContaining({ clusterId: 'c1', ContractRefused: 1 })]);
  });
});

describe('recordEc2Metrics', () => {
  it('calls, throttles, errors, latency and tokens per EC2 action -> one EMF blob per action, dimension Action; and the calls and throttles of every action summed, without it', () => {
    startCapture();
    const stats = new Ec2CallStats();
    stats.tokens('CreateVolume', 2, 3);
    stats.call('CreateVolume', { ms: 120.4, throttled: false });
    stats.call('CreateVolume', { ms: 80, code: 'RequestLimitExceeded', throttled: true });
    stats.tokens('AttachVolume', 1, 0);
    stats.call('AttachVolume', { ms: 30, code: 'AttachmentLimitExceeded', throttled: false });
    recordEc2Metrics(() => new Metrics({ namespace: 'volhook', serviceName: 'volhook' }))('c1', stats);

    const blobs = emfBlobs();
    expect(blobs).toHaveLength(3);
    const totals = blobs.filter((b) => b.Action === undefined);
    expect(totals).toEqual([expect.objectContaining({ service: 'volhook', Ec2Calls: 3, Ec2Throttles: 1 })]);
    expect(totals[0]!._aws.CloudWatchMetrics[0]).toMatchObject({ Namespace: 'volhook', Dimensions: [['service']] });
    expect(totals[0]).not.toHaveProperty('Ec2Errors');
    const create = blobs.find((b) => b.Action === 'CreateVolume');
    expect(create).toMatchObject({ service: 'volhook', Ec2Calls: 2, Ec2Throttles: 1, Ec2Errors: 0, Ec2LatencyMs: [120, 80], BudgetTokensGranted: 2, BudgetTokensWaited: 3 });
    expect(create!._aws.CloudWatchMetrics[0]).toMatchObject({ Namespace: 'volhook', Dimensions: [['service', 'Action']] });
    expect(create!._aws.CloudWatchMetrics[0].Metrics).toEqual(
      expect.arrayContaining([
        { Name: 'Ec2Calls', Unit: 'Count' },
        { Name: 'Ec2LatencyMs', Unit: 'Milliseconds' },
        { Name: 'BudgetTokensWaited', Unit: 'Count' },
      ]),
    );
    expect(blobs.find((b) => b.Action === 'AttachVolume')).toMatchObject({ Ec2Calls: 1, Ec2Throttles: 0, Ec2Errors: 1, BudgetTokensGranted: 1, BudgetTokensWaited: 0 });
  });

  it('a request without EC2 calls -> no blob at all', () => {
    startCapture();
    recordEc2Metrics(() => new Metrics({ namespace: 'volhook', serviceName: 'volhook' }))('c1', new Ec2CallStats());
    expect(emfBlobs()).toEqual([]);
  });
});

describe('functions/api.ts handler', () => {
  type Handler = (event: LambdaEvent, context?: LambdaContext) => Promise<{ statusCode: number }>;
  let handler: Handler;
  const context = {
    functionName: 'volhook-test-api',
    functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:us-east-1:123456789012:function:volhook-test-api',
    memoryLimitInMB: '512',
    awsRequestId: '9f1c7d2e-5b3a-4c8d-9e0f-1a2b3c4d5e6f',
    logGroupName: '/aws/lambda/volhook-test-api',
    logStreamName: '2026/11/30/[$LATEST]abc',
    callbackWaitsForEmptyEventLoop: true,
    getRemainingTimeInMillis: () => 28_000,
  } satisfies LambdaContext;
  const fixture = (name: string) => JSON.parse(readFileSync(new URL(`../fixtures/apigw/${name}`, import.meta.url), 'utf8')) as LambdaEvent & { requestContext: { requestId: string } };

  beforeAll(async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(NOW_MS);
    const registryFile = join(mkdtempSync(join(tmpdir(), 'volhook-obs-')), 'clusters.json');
    writeFileSync(registryFile, JSON.stringify({ clusters: { c1: { clusterId: 'c1', secrets: [SECRET_C1], region: 'us-east-1' } } }));
    Object.assign(process.env, {
      VOLHOOK_REGISTRY_FILE: registryFile,
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'test',
      AWS_SECRET_ACCESS_KEY: 'test',
      AWS_EC2_METADATA_DISABLED: 'true',
      // The deployment's EC2 role (EC2 is mocked: no STS call is signed).
      VOLHOOK_EC2_ROLE_ARN: 'arn:aws:iam::123456789012:role/volhook/volhook-ec2',
    });
    // The fixture's second claim has no PV: its disk is looked up (and found gone) in EC2.
    mockClient(EC2Client).on(DescribeVolumesCommand).resolves({ Volumes: [] });
    ({ handler } = (await import('../../functions/api.js')) as unknown as { handler: Handler });
  });

  it('signed request with two items -> two log lines with the Lambda and API request ids, one EMF blob counting 2 done', async () => {
    startCapture();
    const event = fixture('reconcile-signed-base64.json');
    const res = await handler(event, context);
    expect(res.statusCode).toBe(200);

    const lines = logLines();
    expect(lines.length).toBe(2);
    for (const line of lines) {
      expect(line).toMatchObject({ clusterId: 'c1', function_request_id: context.awsRequestId, correlation_id: event.requestContext.requestId, service: 'volhook' });
      expect(line.itemKey).toMatch(/^PersistentVolumeClaimDeleted\//);
      expect(line.outcome).toBe('done');
      // The fixture carries no version header: a 0.1.0 forwarder's request, contract 1.
      expect(line.contract).toBe(1);
      expect(line).not.toHaveProperty('forwarderVersion');
    }
    const blobs = emfBlobs().filter((b) => 'clusterId' in b);
    expect(blobs).toHaveLength(1);
    expect(blobs[0]!._aws.CloudWatchMetrics[0].Namespace).toBe('volhook');
    expect(blobs[0]).toMatchObject({ clusterId: 'c1', ReconcileDone: [1, 1], ContractRequests1: 1 });
    expect(blobs[0]).not.toHaveProperty('ReconcileFailed');
    // The one describe the request made, counted under its action, its token from the budget.
    const perAction = emfBlobs().filter((b) => 'Action' in b);
    expect(perAction).toHaveLength(1);
    expect(perAction[0]).toMatchObject({ Action: 'DescribeVolumes', Ec2Calls: 1, Ec2Throttles: 0, Ec2Errors: 0, BudgetTokensGranted: 1, BudgetTokensWaited: 0 });
    expect(perAction[0]!._aws.CloudWatchMetrics[0].Dimensions).toEqual([['service', 'Action']]);
  });

  it('healthz -> no reconcile log line and no EMF blob', async () => {
    startCapture();
    const res = await handler(fixture('healthz.json'), context);
    expect(res.statusCode).toBe(200);
    expect(logLines()).toEqual([]);
    expect(emfBlobs()).toEqual([]);
  });
});
