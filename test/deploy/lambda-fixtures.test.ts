/**
 * API Gateway HTTP API (payload 2.0) events in the shape AWS sends them — lower-cased headers,
 * X-Forwarded-*, requestContext, base64 bodies — from test/fixtures/apigw/, answered by the
 * Lambda handler exactly as by the node server. The signed fixtures were signed with the
 * harness's SECRET_C1 at NOW_MS; the clock is set there so they are fresh.
 */
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DescribeVolumesCommand, EC2Client } from '@aws-sdk/client-ec2';
import { serve, type ServerType } from '@hono/node-server';
import { mockClient } from 'aws-sdk-client-mock';
import type { LambdaEvent } from 'hono/aws-lambda';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createBackendApp } from '../../lib/app/index.js';
import { createFileRegistry } from '../../lib/registry/index.js';
import { NOW_MS, SECRET_C1 } from '../app/harness.js';

const fixtureDir = new URL('../fixtures/apigw/', import.meta.url);
const ec2Mock = mockClient(EC2Client);
const EC2_ROLE = 'arn:aws:iam::123456789012:role/volhook/volhook-ec2';

interface Answer {
  status: number;
  type: string | undefined;
  body: string;
}
type Handler = (event: LambdaEvent) => Promise<{ statusCode: number; body: string; headers?: Record<string, string>; isBase64Encoded: boolean }>;
let handler: Handler;
let server: ServerType;
let baseUrl: string;

beforeAll(async () => {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(NOW_MS);
  const registryFile = join(mkdtempSync(join(tmpdir(), 'volhook-apigw-')), 'clusters.json');
  writeFileSync(registryFile, JSON.stringify({ clusters: { c1: { clusterId: 'c1', secrets: [SECRET_C1], region: 'us-east-1' } } }));
  Object.assign(process.env, {
    VOLHOOK_REGISTRY_FILE: registryFile,
    AWS_ACCESS_KEY_ID: 'test',
    AWS_SECRET_ACCESS_KEY: 'test',
    AWS_REGION: 'us-east-1',
    // The deployment's EC2 role (EC2 is mocked: no STS call is signed).
    VOLHOOK_EC2_ROLE_ARN: EC2_ROLE,
  });
  ec2Mock.on(DescribeVolumesCommand).resolves({ Volumes: [] });
  ({ handler } = (await import('../../functions/api.js')) as unknown as { handler: Handler });
  server = serve({ fetch: createBackendApp({ registry: createFileRegistry(registryFile), ec2RoleArn: EC2_ROLE }).fetch, port: 0, hostname: '127.0.0.1' });
  await new Promise((resolve) => server.once('listening', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => {
  server?.close();
  ec2Mock.restore();
  vi.useRealTimers();
});

function fixture(name: string): LambdaEvent & Record<string, unknown> {
  return JSON.parse(readFileSync(new URL(name, fixtureDir), 'utf8'));
}

async function viaLambda(event: LambdaEvent): Promise<Answer> {
  const out = await handler(event);
  return {
    status: out.statusCode,
    type: out.headers?.['content-type'],
    body: out.isBase64Encoded ? Buffer.from(out.body, 'base64').toString('utf8') : out.body,
  };
}

/** The same request as the event describes, sent over HTTP to the node server. */
async function viaNode(event: Record<string, unknown>): Promise<Answer> {
  const e = event as { rawPath: string; rawQueryString: string; headers: Record<string, string>; body?: string; isBase64Encoded: boolean; requestContext: { http: { method: string } } };
  const headers = Object.fromEntries(Object.entries(e.headers).filter(([k]) => !['host', 'content-length', 'connection'].includes(k)));
  const body = e.body === undefined ? undefined : e.isBase64Encoded ? Buffer.from(e.body, 'base64') : e.body;
  const res = await fetch(`${baseUrl}${e.rawPath}${e.rawQueryString ? `?${e.rawQueryString}` : ''}`, { method: e.requestContext.http.method, headers, body });
  return { status: res.status, type: res.headers.get('content-type') ?? undefined, body: await res.text() };
}

const cases: Array<[file: string, status: number, check?: (body: any) => void]> = [
  ['healthz.json', 200, (b) => expect(b).toEqual({ status: 'ok' })],
  ['reconcile-signed-base64.json', 200, (b) => expect(b.results.map((r: { outcome: string }) => r.outcome)).toEqual(['done', 'done'])],
  ['reconcile-signed-text.json', 200, (b) => expect(b.results).toHaveLength(2)],
  ['reconcile-bad-signature.json', 401, (b) => expect(b.error.code).toBe('bad_signature')],
  ['reconcile-stale-timestamp.json', 401, (b) => expect(b.error.message).toMatch(/old/)],
  ['reconcile-unknown-cluster.json', 404, (b) => expect(b.error.code).toBe('unknown_cluster')],
  ['reconcile-malformed-json.json', 400, (b) => expect(b.error.code).toBe('malformed_json')],
];

describe('captured API Gateway v2 events -> the Lambda handler answers as the node server does', () => {
  it('every fixture in test/fixtures/apigw has a case here', () => {
    expect(readdirSync(fixtureDir).filter((f) => f.endsWith('.json')).sort()).toEqual(cases.map(([f]) => f).sort());
  });

  it.each(cases)('%s -> %i from both runtimes, same body and type', async (file, status, check) => {
    const event = fixture(file);
    const lambda = await viaLambda(event);
    const node = await viaNode(event);
    expect(node.status).toBe(status);
    expect(lambda).toEqual(node);
    check?.(JSON.parse(lambda.body));
  });
});
