/**
 * The forwarder against the backend as API Gateway routes it: `npm run offline` (serverless-offline
 * models the HTTP API's routes from serverless.yml and answers any other path itself, as API
 * Gateway does), its function calling the local stack's EC2 simulator and STS as the deployed one
 * calls AWS (as the Lambda role, each cluster in a session of the EC2 role). The forwarder runs in
 * this process against the local Kubernetes API. It becomes ready — its check before ready
 * (`POST /v1/clusters/<id>/check`) routed to the function and accepted, not taken as "a backend
 * without the check" — and a claim is provisioned and Bound.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SERVED_FEATURES, sign } from '../../lib/contract/index.js';
import { createJsonLogger, startForwarder, type Forwarder } from '../../lib/forwarder/index.js';
import { deploymentIam } from '../../lib/iam/role-policy.js';
import { kubeConfigFor } from '../../lib/kube/index.js';
import { DEFAULT_ACCOUNT_ID } from '../../lib/local/ec2/index.js';
import { localPaths } from '../../lib/local/stack/local-files.js';
import { BACKEND_CREDENTIALS } from '../../lib/local/stack/stack.js';
import { createClaim, createNamespace } from './support/kube.js';
import { startOffline, stopOffline, type Offline } from './support/offline.js';
import { waitClaimBound, type ScenarioContext } from './support/scenarios.js';
import { IMMEDIATE_CLASS, startScenarioStack, type E2eStack } from './support/stack.js';
import { waitFor } from './support/wait.js';

const dir = mkdtempSync(join(tmpdir(), 'volhook-e2e-offline-'));
let stack: E2eStack;
let ctx: ScenarioContext;
let offline: Offline;
let forwarder: Forwarder;
const logLines: Array<Record<string, unknown>> = [];

beforeAll(async () => {
  const localDir = join(dir, 'local');
  // No backend of the stack's own: the registration is written to localDir for `npm run offline`.
  ({ stack, ctx } = await startScenarioStack({ immediateClass: true, forwarder: false, backendUrl: 'http://127.0.0.1:1', localDir }));
  const { ec2RoleArn } = deploymentIam({ backendKey: BACKEND_CREDENTIALS.accessKeyId, region: stack.region, accountId: DEFAULT_ACCOUNT_ID });
  offline = await startOffline({
    dir,
    registryFile: localPaths(localDir).registryFile,
    // The function signs as the Lambda role and assumes the deployment's EC2 role, at the simulator.
    env: {
      AWS_ENDPOINT_URL_EC2: stack.urls.ec2,
      AWS_ENDPOINT_URL_STS: stack.urls.ec2,
      AWS_ACCESS_KEY_ID: BACKEND_CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: BACKEND_CREDENTIALS.secretAccessKey,
      AWS_REGION: stack.region,
    },
    params: { ec2RoleArn },
  });
  forwarder = await startForwarder(
    {
      apiUrl: offline.baseUrl,
      clusterId: stack.clusterId,
      secret: stack.secret,
      kubeServer: stack.urls.kube,
      port: 0,
      listenHost: '127.0.0.1',
      backoffInitialMs: 100,
      backoffMaxMs: 2_000,
      resyncSeconds: 2,
      // The first request of a cold bundle takes a while in serverless-offline.
      requestTimeoutMs: 25_000,
    },
    {
      kubeConfig: kubeConfigFor({ server: stack.urls.kube }),
      logger: createJsonLogger({ level: 'info', write: (line) => void logLines.push(JSON.parse(line) as Record<string, unknown>) }),
    },
  );
}, 240_000);

afterAll(async () => {
  await forwarder?.stop();
  await stopOffline(offline);
  await stack?.stop();
  rmSync(dir, { recursive: true, force: true });
}, 60_000);

const readyz = async () => {
  const res = await fetch(`http://127.0.0.1:${forwarder.port}/readyz`);
  return { status: res.status, text: await res.text() };
};

describe('the forwarder through `npm run offline` (API Gateway routing as serverless-offline models it)', () => {
  it('the check is routed to the function: a signed check -> 200 accepted; control: a path the template does not route -> the gateway\'s own 404, not the app\'s', async () => {
    const body = JSON.stringify({ clusterId: stack.clusterId });
    const res = await fetch(`${offline.baseUrl}/v1/clusters/${stack.clusterId}/check`, { method: 'POST', body, headers: { 'content-type': 'application/json', ...sign(body, stack.secret) } });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ clusterId: stack.clusterId, accepted: true, serves: [...SERVED_FEATURES] });
    const unrouted = await fetch(`${offline.baseUrl}/v1/clusters/${stack.clusterId}/nothing`, { method: 'POST', body });
    expect(unrouted.status).toBe(404);
    expect(JSON.stringify(await unrouted.json())).not.toContain('"code":"not_found"');
  }, 60_000);

  it('-> /readyz 200 with the backend\'s acceptance (not "no check"), and a claim is provisioned and Bound', async () => {
    await waitFor(readyz, (r) => r.status === 200, { what: "the forwarder's /readyz passing", timeoutMs: 60_000 });
    expect(logLines.filter((l) => String(l.msg).includes('the backend has no check'))).toEqual([]);
    expect(logLines.filter((l) => l.level === 'error')).toEqual([]);

    await createNamespace(stack.kube, 'offline');
    await createClaim(stack.kube, 'offline', 'data', { storageClassName: IMMEDIATE_CLASS });
    await waitClaimBound(ctx, 'offline', 'data');
    expect((await readyz()).status).toBe(200);
  }, 150_000);
});
