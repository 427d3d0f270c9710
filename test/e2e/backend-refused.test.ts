/**
 * The acceptance of a refused forwarder, on the local stack (backend, EC2 simulator, Kubernetes
 * API and controllers): a forwarder whose Secret file holds a secret the cluster's registration
 * does not accept leaves a Warning Event on the pending claim within its event threshold, fails
 * `/readyz` (from its check at start, before VOLHOOK_REFUSED_READY_SECONDS would), and — the
 * file corrected, re-read without a restart — is ready again and the claim binds. The control is the same claim once served.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger, startForwarder, type Forwarder } from '../../lib/forwarder/index.js';
import { kubeConfigFor } from '../../lib/kube/index.js';
import { SECRET_C2 } from '../app/harness.js';
import { createClaim, createNamespace, eventsFor, readClaim } from './support/kube.js';
import { waitClaimBound, type ScenarioContext } from './support/scenarios.js';
import { IMMEDIATE_CLASS, startScenarioStack, type E2eStack } from './support/stack.js';
import { waitFor } from './support/wait.js';

let stack: E2eStack;
let ctx: ScenarioContext;
let forwarder: Forwarder;
const dir = mkdtempSync(join(tmpdir(), 'volhook-e2e-refused-'));
const secretFile = join(dir, 'secret');

beforeAll(async () => {
  ({ stack, ctx } = await startScenarioStack({ immediateClass: true, forwarder: false }));
  writeFileSync(secretFile, SECRET_C2);
  forwarder = await startForwarder(
    {
      apiUrl: stack.urls.backend,
      clusterId: stack.clusterId,
      secretFile,
      secretPollMs: 100,
      refusedEventMs: 500,
      refusedReadySeconds: 2,
      kubeServer: stack.urls.kube,
      port: 0,
      listenHost: '127.0.0.1',
      backoffInitialMs: 100,
      backoffMaxMs: 500,
      resyncSeconds: 2,
    },
    { kubeConfig: kubeConfigFor({ server: stack.urls.kube }), logger: silentLogger },
  );
}, 60_000);
afterAll(async () => {
  await forwarder?.stop();
  await stack?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const readyz = async () => {
  const res = await fetch(`http://127.0.0.1:${forwarder.port}/readyz`);
  return { status: res.status, text: await res.text() };
};

describe('a forwarder with a wrong secret, on the local stack', () => {
  it('-> Warning BackendRefused on the pending claim naming show --show-secrets, /readyz 503 (the check refused), the claim unbound; the Secret file fixed -> /readyz 200 and the claim Bound', async () => {
    await createNamespace(stack.kube, 'refused');
    await createClaim(stack.kube, 'refused', 'data', { storageClassName: IMMEDIATE_CLASS });

    const [event] = await waitFor(() => eventsFor(stack.kube, 'refused', 'PersistentVolumeClaim', 'data'), (events) => events.some((e) => e.reason === 'BackendRefused'), {
      what: 'a BackendRefused Event on refused/data',
      timeoutMs: 30_000,
    }).then((events) => events.filter((e) => e.reason === 'BackendRefused'));
    expect(event?.type).toBe('Warning');
    expect(event?.message).toContain("the backend refuses this cluster's signature (HTTP 401");
    expect(event?.message).toContain(`\`npm run cluster -- show ${stack.clusterId} --show-secrets\``);

    const notReady = await waitFor(readyz, (r) => r.status === 503, { what: '/readyz failing', timeoutMs: 30_000 });
    expect(notReady.text).toContain("not ready: the backend refuses this forwarder; the backend refuses this cluster's signature (HTTP 401");
    expect((await readClaim(stack.kube, 'refused', 'data')).status?.phase).not.toBe('Bound');

    // Control: the same claim, once the forwarder's requests are served.
    writeFileSync(secretFile, stack.secret);
    await waitFor(readyz, (r) => r.status === 200, { what: '/readyz passing again', timeoutMs: 30_000 });
    await waitClaimBound(ctx, 'refused', 'data');
  }, 120_000);
});
