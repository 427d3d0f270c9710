/**
 * The deployed API function keeps the clusters' volume reports where the audit function reads
 * them: the DynamoDB table named by VOLHOOK_REPORTS_TABLE (moto's DynamoDB here), not the
 * memory of one Lambda container.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { LambdaEvent } from 'hono/aws-lambda';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { canonicalReport, reportDigest, sign } from '../../lib/contract/index.js';
import { reconcileBody } from '../../lib/forwarder/backend-client.js';
import { createDynamoDbReportStore } from '../../lib/reports/dynamodb.js';
import { SECRET_C1 } from '../app/harness.js';
import { bigReport } from '../contract/big-report.js';
import { startMoto, type Moto } from './support/moto.js';

const REGION = 'us-east-1';
const TABLE = 'volhook-test-reports';
const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };
let moto: Moto;
let admin: DynamoDBClient;

beforeAll(async () => {
  moto = await startMoto();
  admin = new DynamoDBClient({ region: REGION, endpoint: moto.url, credentials });
  await admin.send(
    new CreateTableCommand({
      TableName: TABLE,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
      KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
    }),
  );
  const dir = mkdtempSync(join(tmpdir(), 'volhook-lambda-reports-'));
  const registryFile = join(dir, 'clusters.json');
  writeFileSync(registryFile, JSON.stringify({ clusters: { c1: { clusterId: 'c1', secrets: [SECRET_C1], region: REGION } } }));
  vi.stubEnv('VOLHOOK_REGISTRY_FILE', registryFile);
  vi.stubEnv('VOLHOOK_REPORTS_TABLE', TABLE);
  vi.stubEnv('AWS_ENDPOINT_URL_DYNAMODB', moto.url);
  vi.stubEnv('AWS_REGION', REGION);
  vi.stubEnv('AWS_ACCESS_KEY_ID', credentials.accessKeyId);
  vi.stubEnv('AWS_SECRET_ACCESS_KEY', credentials.secretAccessKey);
  vi.stubEnv('VOLHOOK_EC2_ROLE_ARN', 'arn:aws:iam::123456789012:role/volhook/volhook-ec2');
}, 90_000);

afterAll(async () => {
  admin?.destroy();
  vi.unstubAllEnvs();
  await moto?.stop();
});

function reconcileEvent(body: string): LambdaEvent {
  const path = '/v1/clusters/c1/reconcile';
  return {
    version: '2.0',
    routeKey: 'POST /v1/clusters/{clusterId}/reconcile',
    rawPath: path,
    rawQueryString: '',
    headers: Object.fromEntries(Object.entries({ 'content-type': 'application/json', ...sign(body, SECRET_C1) }).map(([k, v]) => [k.toLowerCase(), v])),
    requestContext: {
      accountId: '123456789012',
      apiId: 'abc123',
      domainName: 'abc123.execute-api.us-east-1.amazonaws.com',
      domainPrefix: 'abc123',
      http: { method: 'POST', path, protocol: 'HTTP/1.1', sourceIp: '203.0.113.7', userAgent: 'volhook-forwarder' },
      requestId: 'req-reports',
      routeKey: 'POST /v1/clusters/{clusterId}/reconcile',
      stage: '$default',
      time: '04/Dec/2026:10:00:00 +0000',
      timeEpoch: Date.now(),
    },
    pathParameters: { clusterId: 'c1' },
    body,
    isBase64Encoded: false,
  } as unknown as LambdaEvent;
}

describe('functions/api: volume reports', () => {
  it('a VolumeReport through the Lambda handler -> kept in the VOLHOOK_REPORTS_TABLE table, where the audit reads it', async () => {
    const store = createDynamoDbReportStore({ tableName: TABLE, client: admin });
    expect(await store.get('c1')).toBeUndefined();
    const report = bigReport(3);
    const digest = reportDigest(canonicalReport(report));
    const { handler } = (await import('../../functions/api.js')) as unknown as { handler: (event: LambdaEvent) => Promise<{ statusCode: number; body: string }> };
    const answer = await handler(reconcileEvent(reconcileBody('c1', [{ kind: 'VolumeReport', digest, observedAt: Date.now(), report }])));
    expect(answer.statusCode).toBe(200);
    expect(JSON.parse(answer.body)).toMatchObject({ results: [{ outcome: 'done' }] });
    const stored = await store.get('c1');
    expect(stored?.digest).toBe(digest);
    expect(stored?.report.volumes.map((v) => v.volumeId)).toEqual(report.volumes.map((v) => v.volumeId));
  });
});
