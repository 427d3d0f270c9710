import { mkdtempSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DescribeVolumesCommand, EC2Client } from '@aws-sdk/client-ec2';
import { serve, type ServerType } from '@hono/node-server';
import { mockClient } from 'aws-sdk-client-mock';
import type { LambdaEvent } from 'hono/aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBackendApp } from '../../lib/app/index.js';
import { sign } from '../../lib/contract/index.js';
import { createFileRegistry } from '../../lib/registry/index.js';
import { CREATING_VOLUME, fixtureBody, SECRET_C1 } from './harness.js';

const ec2Mock = mockClient(EC2Client);
const EC2_ROLE = 'arn:aws:iam::123456789012:role/volhook/volhook-ec2';
let handler: (event: LambdaEvent) => Promise<{ statusCode: number; body: string; headers?: Record<string, string>; isBase64Encoded: boolean }>;
let server: ServerType;
let baseUrl: string;

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'volhook-lambda-'));
  const registryFile = join(dir, 'clusters.json');
  writeFileSync(registryFile, JSON.stringify({ clusters: { c1: { clusterId: 'c1', secrets: [SECRET_C1], region: 'us-east-1' } } }));
  process.env.VOLHOOK_REGISTRY_FILE = registryFile;
  process.env.AWS_ACCESS_KEY_ID = 'test';
  process.env.AWS_SECRET_ACCESS_KEY = 'test';
  process.env.AWS_REGION = 'us-east-1';
  // The deployment's EC2 role, which both runtimes assume for c1 (EC2 is mocked: no STS call is signed).
  process.env.VOLHOOK_EC2_ROLE_ARN = EC2_ROLE;
  // The volume already exists and is creating: both runtimes answer "requeue" without creating.
  ec2Mock.on(DescribeVolumesCommand).resolves({
    Volumes: [
      {
        ...CREATING_VOLUME,
        Tags: [
          { Key: 'CSIVolumeName', Value: 'pvc-6f1c2a9e-4b7d-4c1e-9f3a-2d8e5b7c1a04' },
          { Key: 'kubernetes.io/cluster/c1', Value: 'owned' },
          { Key: 'ebs.csi.aws.com/cluster', Value: 'true' },
          { Key: 'volhook.io/cluster', Value: 'c1' },
        ],
      },
    ],
  });
  ({ handler } = (await import('../../functions/api.js')) as unknown as { handler: typeof handler });
  const app = createBackendApp({ registry: createFileRegistry(registryFile), ec2RoleArn: EC2_ROLE });
  server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' });
  await new Promise((resolve) => server.once('listening', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => {
  server.close();
  ec2Mock.restore();
});

function httpApiEvent(method: string, path: string, headers: Record<string, string>, body: string | null, base64: boolean): LambdaEvent {
  return {
    version: '2.0',
    routeKey: `${method} ${path.replace('/c1/', '/{clusterId}/')}`,
    rawPath: path,
    rawQueryString: '',
    headers: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v])),
    requestContext: {
      accountId: '123456789012',
      apiId: 'abc123',
      domainName: 'abc123.execute-api.us-east-1.amazonaws.com',
      domainPrefix: 'abc123',
      http: { method, path, protocol: 'HTTP/1.1', sourceIp: '203.0.113.7', userAgent: 'volhook-forwarder' },
      requestId: 'req-1',
      routeKey: `${method} ${path}`,
      stage: '$default',
      time: '30/Nov/2026:10:00:00 +0000',
      timeEpoch: Date.now(),
    },
    pathParameters: path.includes('/clusters/') ? { clusterId: 'c1' } : undefined,
    body: body === null ? null : base64 ? Buffer.from(body).toString('base64') : body,
    isBase64Encoded: base64,
  } as unknown as LambdaEvent;
}

async function both(method: string, path: string, headers: Record<string, string>, body: string | null, base64 = false) {
  const lambda = await handler(httpApiEvent(method, path, headers, body, base64));
  const node = await fetch(baseUrl + path, { method, headers, body: body ?? undefined });
  return {
    lambda: { status: lambda.statusCode, body: lambda.isBase64Encoded ? Buffer.from(lambda.body, 'base64').toString() : lambda.body, type: lambda.headers?.['content-type'] },
    node: { status: node.status, body: await node.text(), type: node.headers.get('content-type') ?? undefined },
  };
}

describe('Lambda handler (API Gateway HTTP API v2) answers as the node server does', () => {
  it('GET /healthz -> same 200 body', async () => {
    const { lambda, node } = await both('GET', '/healthz', {}, null);
    expect(lambda).toEqual(node);
    expect(node.status).toBe(200);
  });

  it('signed reconcile (base64 body) -> same results', async () => {
    const headers = { 'content-type': 'application/json', ...sign(fixtureBody, SECRET_C1) };
    const { lambda, node } = await both('POST', '/v1/clusters/c1/reconcile', headers, fixtureBody, true);
    expect(node.status).toBe(200);
    expect(JSON.parse(lambda.body)).toEqual(JSON.parse(node.body));
    expect(lambda.status).toBe(node.status);
    expect(JSON.parse(node.body).results[0].outcome).toBe('requeue');
  });

  it('badly signed reconcile -> same 401', async () => {
    const headers = { 'content-type': 'application/json', ...sign(fixtureBody, SECRET_C1), 'webhook-signature': 'v1,AAAA' };
    const { lambda, node } = await both('POST', '/v1/clusters/c1/reconcile', headers, fixtureBody);
    expect(node.status).toBe(401);
    expect(lambda).toEqual(node);
  });

  it('unknown route -> same 404', async () => {
    const { lambda, node } = await both('GET', '/nope', {}, null);
    expect(node.status).toBe(404);
    expect(lambda).toEqual(node);
  });
});
