/**
 * Every error log line of the backend carries the request's correlation id and its cluster:
 * the 500 "unhandled error" line and the reconciler-error line alike, by default and through
 * the Lambda's logger; the id is the request's `webhook-id`, else API Gateway's request id,
 * else a generated one, and the answer echoes it in `x-volhook-request-id`.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { afterEach, describe, expect, it, vi, type MockInstance } from 'vitest';
import { correlationOf, createApp, REQUEST_ID_HEADER, type AppDependencies } from '../../lib/app/index.js';
import type { Ec2Gateway } from '../../lib/ec2/index.js';
import { recordReconcileErrors } from '../../lib/observability/index.js';
import { createStaticRegistry, type ClusterRegistry } from '../../lib/registry/index.js';
import { fixtureBody, NOW_MS, registration, SECRET_C1, signedRequest } from './harness.js';

const WEBHOOK_ID = 'msg_2bQyZ4cJ7kFh0vT9xW1nR3pL';
const LAMBDA_EVENT = { event: { requestContext: { requestId: 'Kx3nVhD1IAMEbZw=' } } };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** A registry whose store is down: its error is no refusal, so the app answers 500. */
const brokenRegistry: ClusterRegistry = {
  get: async () => {
    throw new Error('connect ETIMEDOUT 10.0.0.1:443');
  },
};
/** A gateway with a bug: every call throws a TypeError, not an EC2 error. */
const buggyGateway = new Proxy({} as Ec2Gateway, {
  get: () => () => {
    throw new TypeError("Cannot read properties of undefined (reading 'volumeId')");
  },
});

let errorLog: MockInstance<typeof console.error>;
afterEach(() => errorLog?.mockRestore());

function app(deps: Partial<AppDependencies>) {
  errorLog = vi.spyOn(console, 'error').mockImplementation(() => {});
  return createApp({ registry: createStaticRegistry([registration('c1', SECRET_C1)]), gatewayFor: () => buggyGateway, now: () => NOW_MS, ...deps });
}

function errorLines(): Array<Record<string, unknown>> {
  return errorLog.mock.calls.map(([line]) => JSON.parse(String(line)) as Record<string, unknown>);
}

describe('the 500 "unhandled error" line', () => {
  it('a signed request (webhook-id) meets an unexpected error -> the line carries that id and the cluster, the answer echoes the id', async () => {
    const { path, ...init } = signedRequest('/v1/clusters/c1/reconcile', fixtureBody, SECRET_C1, { id: WEBHOOK_ID });
    const res = await app({ registry: brokenRegistry }).request(path, init);
    expect(res.status).toBe(500);
    expect(res.headers.get(REQUEST_ID_HEADER)).toBe(WEBHOOK_ID);
    expect(errorLines()).toEqual([expect.objectContaining({ level: 'ERROR', message: 'unhandled error', requestId: WEBHOOK_ID, clusterId: 'c1', error: expect.stringContaining('ETIMEDOUT') })]);
  });

  it('behind API Gateway, no webhook-id -> API Gateway\'s request id', async () => {
    const res = await app({ registry: brokenRegistry }).request('/v1/clusters/c1/reconcile', { method: 'POST', body: fixtureBody }, LAMBDA_EVENT);
    expect(res.status).toBe(500);
    expect(res.headers.get(REQUEST_ID_HEADER)).toBe('Kx3nVhD1IAMEbZw=');
    expect(errorLines()[0]).toMatchObject({ requestId: 'Kx3nVhD1IAMEbZw=', clusterId: 'c1' });
  });

  it('no id at all -> one generated, the same in the line and the header', async () => {
    const res = await app({ registry: brokenRegistry }).request('/v1/clusters/c1/reconcile', { method: 'POST', body: fixtureBody });
    const id = res.headers.get(REQUEST_ID_HEADER) ?? '';
    expect(id).toMatch(UUID);
    expect(errorLines()[0]).toMatchObject({ requestId: id, clusterId: 'c1' });
  });

  it('a refusal (control: 404 unknown cluster) -> no error line, the id still echoed', async () => {
    const { path, ...init } = signedRequest('/v1/clusters/c9/reconcile', fixtureBody, SECRET_C1, { id: WEBHOOK_ID });
    const res = await app({}).request(path, init);
    expect(res.status).toBe(404);
    expect(res.headers.get(REQUEST_ID_HEADER)).toBe(WEBHOOK_ID);
    expect(errorLines()).toEqual([]);
  });
});

describe('the reconciler-error line', () => {
  it('default onError -> the line carries the webhook-id and the cluster', async () => {
    const { path, ...init } = signedRequest('/v1/clusters/c1/reconcile', fixtureBody, SECRET_C1, { id: WEBHOOK_ID });
    const res = await app({}).request(path, init);
    expect(res.status).toBe(200);
    expect(res.headers.get(REQUEST_ID_HEADER)).toBe(WEBHOOK_ID);
    expect(errorLines()).toEqual([expect.objectContaining({ message: 'reconciler error', requestId: WEBHOOK_ID, clusterId: 'c1' })]);
  });

  it("the Lambda's logger (recordReconcileErrors) -> its ERROR line carries the webhook-id and the cluster", async () => {
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const stdout = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    try {
      const onError = recordReconcileErrors(new Logger({ serviceName: 'volhook' }), new Metrics({ namespace: 'volhook', serviceName: 'volhook' }));
      const { path, ...init } = signedRequest('/v1/clusters/c1/reconcile', fixtureBody, SECRET_C1, { id: WEBHOOK_ID });
      expect((await app({ onError }).request(path, init)).status).toBe(200);
      const lines = [...stderr.mock.calls, ...stdout.mock.calls]
        .flatMap(([chunk]) => String(chunk).split('\n'))
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(lines.filter((l) => l.level === 'ERROR')).toEqual([expect.objectContaining({ requestId: WEBHOOK_ID, clusterId: 'c1' })]);
    } finally {
      stderr.mockRestore();
      stdout.mockRestore();
    }
  });
});

describe('correlationOf', () => {
  const at = (path: string, headers: Record<string, string>, env: unknown = undefined) => correlationOf({ path, headers: new Headers(headers), env }, () => 'generated');
  it('webhook-id, then API Gateway\'s id, then a generated one', () => {
    expect(at('/v1/clusters/c1/reconcile', { 'webhook-id': 'a' }, LAMBDA_EVENT)).toEqual({ requestId: 'a', clusterId: 'c1' });
    expect(at('/v1/clusters/c1/reconcile', {}, LAMBDA_EVENT)).toEqual({ requestId: 'Kx3nVhD1IAMEbZw=', clusterId: 'c1' });
    expect(at('/healthz', {})).toEqual({ requestId: 'generated' });
  });
  it('a webhook-id that could break a log line (spaces, too long) -> not used', () => {
    expect(at('/v1/clusters/c1/reconcile', { 'webhook-id': 'a b' }).requestId).toBe('generated');
    expect(at('/v1/clusters/c1/reconcile', { 'webhook-id': 'x'.repeat(129) }).requestId).toBe('generated');
  });
});
