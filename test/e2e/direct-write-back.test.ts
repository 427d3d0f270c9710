/**
 * A cluster registered with `writeBack: direct`: the backend applies the Kubernetes writes
 * itself, through the local Kubernetes API, and answers with no writes: the forwarder only forwards.
 * The forwarder here is started by the test with a fetch that records every answer it gets,
 * so the test can show that no write ever reached it and the PV was made all the same.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Result } from '../../lib/contract/index.js';
import { silentLogger, startForwarder, type Forwarder } from '../../lib/forwarder/index.js';
import { kubeConfigFor } from '../../lib/kube/index.js';
import { provisionForPod, type ScenarioContext } from './support/scenarios.js';
import { startScenarioStack, type E2eStack } from './support/stack.js';
import { show } from './support/wait.js';

let stack: E2eStack;
let forwarder: Forwarder;
let ctx: ScenarioContext;
/** Every result the forwarder received from the backend. */
const received: Result[] = [];

beforeAll(async () => {
  ({ stack, ctx } = await startScenarioStack({ writeBack: 'direct', forwarder: false }));
  const recordingFetch = async (url: string, init: RequestInit): Promise<Response> => {
    const response = await fetch(url, init);
    if (response.ok) {
      const body = (await response.clone().json()) as { results?: Result[] };
      received.push(...(body.results ?? []));
    }
    return response;
  };
  forwarder = await startForwarder(
    {
      apiUrl: stack.urls.backend,
      clusterId: stack.clusterId,
      secret: stack.secret,
      kubeServer: stack.urls.kube,
      port: 0,
      listenHost: '127.0.0.1',
      backoffInitialMs: 100,
      backoffMaxMs: 2_000,
      resyncSeconds: 2,
    },
    { kubeConfig: kubeConfigFor({ server: stack.urls.kube }), fetch: recordingFetch, logger: silentLogger },
  );
}, 60_000);
afterAll(async () => {
  await forwarder?.stop();
  await stack?.stop();
});

describe('writeBack: direct', () => {
  it('WaitForFirstConsumer PVC + pod, backend writing directly -> PVC Bound, PV in the node zone, attached, pod Running; the forwarder got no writes', async () => {
    const { pvName } = await provisionForPod(ctx, 'direct');

    // The backend reconciled the claim and the attachment to done (its results, after it applied their writes).
    const keys = new Set(ctx.results.filter((r) => r.outcome === 'done').map((r) => r.key));
    expect(keys).toContain(`PersistentVolumeClaim/direct/data`);
    expect([...keys].some((k) => k.startsWith('VolumeAttachment/'))).toBe(true);

    // The forwarder did forward (it got the answers), but none held a write for it to apply.
    expect(received.some((r) => r.key === 'PersistentVolumeClaim/direct/data' && r.outcome === 'done')).toBe(true);
    expect(received.some((r) => r.key.startsWith('VolumeAttachment/') && r.outcome === 'done')).toBe(true);
    const withWrites = received.filter((r) => r.writes.length > 0);
    expect(withWrites, show(withWrites)).toEqual([]);
    const { values } = await forwarder.metrics.writeFailures.get();
    expect(values.reduce((sum, v) => sum + v.value, 0)).toBe(0);
    // And the PV the forwarder never wrote is there, made by the backend.
    const pv = await stack.kube.core.readPersistentVolume({ name: pvName });
    expect(pv.metadata?.annotations?.['pv.kubernetes.io/provisioned-by']).toBe('ebs.csi.aws.com');
  }, 120_000);
});
