/**
 * An answer that is not the backend's — a 2xx with a proxy's or firewall's HTML page, JSON of
 * another shape, or `{"results":[]}` for a batch of items; API Gateway's own 404 for a path it
 * does not route — is a refusal of its own (`backend_unusable`),
 * on the surface every other refusal has: a Warning Event on the claim held back, the metric,
 * one error line, `/readyz` failing after VOLHOOK_REFUSED_READY_SECONDS. Against the real backend
 * app over HTTP, behind a front the test scripts (the check passes through, so the replica is
 * ready and only its reconcile answers are garbled); the control is the same front passing the
 * answers through: ready again, the disk created.
 */
import { createServer, type Server } from 'node:http';
import { CreateVolumeCommand, DescribeVolumesCommand } from '@aws-sdk/client-ec2';
import { afterEach, describe, expect, it } from 'vitest';
import { createJsonLogger, startForwarder, type Forwarder } from '../../lib/forwarder/index.js';
import { listen } from '../../lib/http/index.js';
import { startBackendServer } from '../../lib/local/stack/backend-server.js';
import { CREATING_VOLUME, makeApp, SECRET_C1 } from '../app/harness.js';
import { pvcObject } from '../kube/fixtures.js';
import { startKube } from '../kube/harness.js';
import { eventually } from './fake-backend.js';

const ZONE = 'us-east-1a';
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

type Garble = 'html' | 'wrong-shape' | 'no-results' | 'gateway-404' | 'pass';
const GARBLED: Record<Exclude<Garble, 'pass'>, { status: number; type: string; body: string }> = {
  html: { status: 200, type: 'text/html', body: '<html><body><h1>Request blocked</h1></body></html>' },
  'wrong-shape': { status: 200, type: 'application/json', body: '{"status":"ok"}' },
  'no-results': { status: 200, type: 'application/json', body: '{"results":[]}' },
  // API Gateway's own answer for a path its template does not route (a URL with a wrong stage, say).
  'gateway-404': { status: 404, type: 'application/json', body: '{"message":"Not Found"}' },
};

/** A front that answers the reconcile route itself with `garble`, and passes everything else to `target`. */
async function startFront(target: string, state: { garble: Garble }): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    if (req.url?.endsWith('/reconcile') && state.garble !== 'pass') {
      const { status, type, body } = GARBLED[state.garble];
      res.writeHead(status, { 'content-type': type }).end(body);
      return;
    }
    const headers = Object.fromEntries(Object.entries(req.headers).filter((e): e is [string, string] => typeof e[1] === 'string' && e[0] !== 'host' && e[0] !== 'content-length'));
    const answer = await fetch(`${target}${req.url}`, { method: req.method!, headers, ...(chunks.length > 0 && { body: Buffer.concat(chunks) }) });
    res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' }).end(Buffer.from(await answer.arrayBuffer()));
  });
  const listening = await listen(server, 0, '127.0.0.1');
  return { url: `http://127.0.0.1:${listening.port}`, close: () => listening.close() };
}

interface KubeEvent {
  reason?: string;
  type?: string;
  message?: string;
  involvedObject?: { name?: string };
}

async function scenario(garble: Garble) {
  const kube = await startKube();
  closers.push(() => kube.close());
  kube.store.create('storageclasses', { apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name: 'gp3' }, provisioner: 'ebs.csi.aws.com', parameters: { type: 'gp3' }, volumeBindingMode: 'WaitForFirstConsumer' });
  kube.store.create('nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1', labels: { 'topology.kubernetes.io/zone': ZONE } }, spec: { providerID: `aws:///${ZONE}/i-0123456789abcdef0` } });
  kube.store.create('csinodes', { apiVersion: 'storage.k8s.io/v1', kind: 'CSINode', metadata: { name: 'n1' }, spec: { drivers: [{ name: 'ebs.csi.aws.com', nodeID: 'i-0123456789abcdef0', allocatable: { count: 25 } }] } });
  kube.store.create('persistentvolumeclaims', pvcObject('held', 'default', { 'volume.kubernetes.io/storage-provisioner': 'ebs.csi.aws.com', 'volume.kubernetes.io/selected-node': 'n1' }));

  const made = makeApp({ now: () => Date.now() });
  made.ec2Mock.on(DescribeVolumesCommand).resolves({ Volumes: [] });
  made.ec2Mock.on(CreateVolumeCommand).resolves(CREATING_VOLUME);
  closers.push(async () => made.ec2Mock.restore());
  const backend = await startBackendServer(made.app, '127.0.0.1', 0);
  closers.push(() => backend.stop());
  const state = { garble };
  const front = await startFront(backend.url, state);
  closers.push(() => front.close());

  const logLines: Array<Record<string, unknown>> = [];
  const forwarder: Forwarder = await startForwarder(
    {
      apiUrl: front.url,
      clusterId: 'c1',
      secret: SECRET_C1,
      refusedEventMs: 300,
      refusedReadySeconds: 1,
      port: 0,
      listenHost: '127.0.0.1',
      resyncSeconds: 3600,
      backoffInitialMs: 50,
      backoffMaxMs: 200,
      informerRestartMs: 100,
      requestTimeoutMs: 5_000,
      shutdownTimeoutMs: 1_000,
    },
    { kubeConfig: kube.kubeConfig, logger: createJsonLogger({ level: 'debug', write: (line) => void logLines.push(JSON.parse(line) as Record<string, unknown>) }) },
  );
  closers.push(() => forwarder.stop());

  return {
    state,
    front,
    events: (reason: string) => (kube.store.list('events').items as KubeEvent[]).filter((e) => e.reason === reason && e.involvedObject?.name === 'held'),
    readyz: async () => {
      const res = await fetch(`http://127.0.0.1:${forwarder.port}/readyz`);
      return { status: res.status, text: await res.text() };
    },
    created: () => made.ec2Mock.commandCalls(CreateVolumeCommand).length > 0,
    metric: () => forwarder.metrics.registry.getSingleMetricAsString('volhook_forwarder_backend_refused'),
    errors: (msg: string) => logLines.filter((l) => l.level === 'error' && l.msg === msg),
  };
}

const SURFACED = 'the backend refuses every request; Warning Events on the claims and VolumeAttachments held back';

describe('an answer that is not the backend answer to the request -> refused, backend_unusable', () => {
  it.each<[Exclude<Garble, 'pass'>, number]>([['html', 200], ['wrong-shape', 200], ['no-results', 200], ['gateway-404', 404]])(
    '%s -> a Warning Event on the claim naming VOLHOOK_API_URL and a proxy, the metric, one error line, /readyz 503; the answers passed through -> ready again, the disk created',
    async (garble, status) => {
      const s = await scenario(garble);
      const [event] = (await eventually(() => s.events('BackendUnavailable').length > 0 && s.events('BackendUnavailable'), 10_000, 'the Warning Event on the claim')) as KubeEvent[];
      expect(event?.type).toBe('Warning');
      expect(event?.message).toContain(`the answer from ${s.front.url} (HTTP ${status}) is not the volhook backend's answer to the request`);
      expect(event?.message).toContain('check VOLHOOK_API_URL');
      expect(event?.message).not.toContain('npm run cluster');
      expect(await s.metric()).toContain('volhook_forwarder_backend_refused{cause="backend_unusable"} 1');
      expect(s.errors(SURFACED)).toEqual([expect.objectContaining({ cause: 'backend_unusable', status })]);
      await eventually(async () => (await s.readyz()).status === 503, 10_000, '/readyz failing');
      expect((await s.readyz()).text).toContain("is not the volhook backend's answer");
      expect(s.created()).toBe(false);

      // Control: the same requests, answered by the backend.
      s.state.garble = 'pass';
      await eventually(async () => (await s.readyz()).status === 200, 10_000, '/readyz passing again');
      await eventually(() => s.created(), 10_000, 'the disk created');
      expect(await s.metric()).not.toContain('} 1');
    },
  );

  it('control: the front passing every answer through -> ready, the disk created, no Event, the metric never 1', async () => {
    const s = await scenario('pass');
    await eventually(() => s.created(), 10_000, 'the disk created');
    expect((await s.readyz()).status).toBe(200);
    expect([...s.events('BackendUnavailable'), ...s.events('BackendRefused')]).toEqual([]);
    expect(await s.metric()).not.toContain('} 1');
  });
});
