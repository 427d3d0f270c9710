/**
 * Errors an operator must see are loud: an exception in a reconciler that is not an EC2 error
 * (a bug), and writes the backend cannot apply for a `writeBack: direct` cluster, each leave
 * a log line at level ERROR (with the stack) and a count in a metric — wired as in
 * functions/api.ts — and the item is requeued, never `done`.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { afterEach, describe, expect, it, vi, type MockInstance } from 'vitest';
import { createApp, ERROR_MESSAGES, type AppDependencies, type ErrorStage } from '../../lib/app/index.js';
import { ReconcileResponseSchema } from '../../lib/contract/index.js';
import type { Ec2Gateway } from '../../lib/ec2/index.js';
import { recordReconcileErrors, recordReconcileResults } from '../../lib/observability/index.js';
import { createStaticRegistry } from '../../lib/registry/index.js';
import { fixtureBody, NOW_MS, registration, SECRET_C1, signedRequest } from './harness.js';

// Powertools writes INFO and EMF to stdout, WARN and ERROR to stderr.
let stdout: MockInstance<typeof process.stdout.write>;
let stderr: MockInstance<typeof process.stderr.write>;
afterEach(() => {
  stdout?.mockRestore();
  stderr?.mockRestore();
});
function captured(): Array<Record<string, any>> {
  return [...stdout.mock.calls, ...stderr.mock.calls]
    .flatMap(([chunk]) => String(chunk).split('\n'))
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line));
}

const KEY = 'PersistentVolumeClaim/default/data-web-0';

/** A gateway with a bug: every call throws a TypeError, not an `Ec2Error`. */
const buggyGateway = new Proxy({} as Ec2Gateway, {
  get: () => () => {
    throw new TypeError("Cannot read properties of undefined (reading 'volumeId')");
  },
});

/** The fixture's claim; `protectedClaim: false` drops volhook's finalizer (so the answer is a write). */
function request(options: { protectedClaim: boolean }) {
  const body = JSON.parse(fixtureBody);
  if (!options.protectedClaim) body.items[0].pvc.metadata.finalizers = ['kubernetes.io/pvc-protection'];
  return signedRequest('/v1/clusters/c1/reconcile', JSON.stringify(body), SECRET_C1);
}

async function reconcile(deps: Partial<AppDependencies>, reg: Record<string, unknown>, protectedClaim: boolean) {
  stdout = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
  stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
  const logger = new Logger({ serviceName: 'volhook' });
  const metrics = new Metrics({ namespace: 'volhook', serviceName: 'volhook' });
  const app = createApp({
    registry: createStaticRegistry([registration('c1', SECRET_C1, reg)]),
    gatewayFor: () => buggyGateway,
    now: () => NOW_MS,
    onResult: recordReconcileResults(logger, metrics),
    onError: recordReconcileErrors(logger, metrics),
    ...deps,
  });
  const { path, ...init } = request({ protectedClaim });
  const res = await app.request(path, init);
  expect(res.status).toBe(200);
  const { results } = ReconcileResponseSchema.parse(await res.json());
  metrics.publishStoredMetrics();
  const lines = captured();
  return { result: results[0]!, errors: lines.filter((l) => l.level === 'ERROR'), emf: lines.filter((l) => l._aws) };
}

/** The one ERROR line of a request, about the fixture's claim. */
function theErrorLine(errors: Array<Record<string, any>>, stage: ErrorStage): Record<string, any> {
  expect(errors).toHaveLength(1);
  expect(errors[0]).toMatchObject({ message: ERROR_MESSAGES[stage], clusterId: 'c1', itemKey: KEY, stage });
  return errors[0]!;
}

describe('errors an operator must see', () => {
  it('a reconciler throws a TypeError (a bug, not EC2) -> ERROR line with the item and the stack, ReconcileError counted; the item requeued', async () => {
    const { result, errors, emf } = await reconcile({}, {}, true);
    expect(result).toMatchObject({ outcome: 'requeue', message: expect.stringContaining('unexpected error') });
    expect(theErrorLine(errors, 'reconcile').error).toMatchObject({ name: 'TypeError', message: expect.stringContaining('volumeId'), stack: expect.stringContaining('TypeError') });
    expect(emf).toHaveLength(1);
    expect(emf[0]).toMatchObject({ clusterId: 'c1', ReconcileError: 1, ReconcileRequeue: 1 });
    expect(emf[0]!._aws.CloudWatchMetrics[0].Metrics).toContainEqual({ Name: 'ReconcileError', Unit: 'Count' });
  });

  it('writeBack: direct and the writes cannot be applied -> ERROR line with the item and the cause, WriteBackFailed counted; requeue, no writes, never done', async () => {
    const applyDirect = vi.fn(async () => {
      throw new Error('persistentvolumeclaims "data-web-0" is forbidden: User "system:serviceaccount:volhook:backend" cannot patch resource');
    });
    const { result, errors, emf } = await reconcile({ applyDirect }, { writeBack: 'direct', kubernetes: { server: 'https://k8s.example' } }, false);
    expect(applyDirect).toHaveBeenCalledOnce();
    expect(result).toMatchObject({ outcome: 'requeue', writes: [], message: expect.stringContaining('forbidden') });
    expect(theErrorLine(errors, 'writeBack').error).toMatchObject({ message: expect.stringContaining('forbidden'), stack: expect.any(String) });
    expect(emf[0]).toMatchObject({ clusterId: 'c1', WriteBackFailed: 1, ReconcileRequeue: 1 });
    expect(emf[0]).not.toHaveProperty('ReconcileDone');
  });

  it('no onError given -> the app still logs one ERROR line with the stack to stderr', async () => {
    const errorLog = vi.spyOn(console, 'error').mockImplementation(() => {});
    try {
      await reconcile({ onError: undefined }, {}, true);
      const lines = errorLog.mock.calls.map(([line]) => JSON.parse(String(line)));
      expect(lines).toEqual([
        expect.objectContaining({ level: 'ERROR', message: 'reconciler error', stage: 'reconcile', itemKey: KEY, error: expect.stringMatching(/^TypeError: .*\n\s+at /) }),
      ]);
    } finally {
      errorLog.mockRestore();
    }
  });
});
