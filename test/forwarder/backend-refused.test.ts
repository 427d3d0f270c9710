/**
 * A backend that refuses the forwarder is seen where people look. Against the real backend app
 * over HTTP and the local Kubernetes API: a forwarder whose Secret file holds a secret the
 * registration does not accept (401), one whose cluster is not registered (404), and one whose
 * backend fails (500) each leave a Warning Event on the claim (and the VolumeAttachment) they
 * hold back, naming the cause and the fix, one Event whose count grows; fail `/readyz` after
 * VOLHOOK_REFUSED_READY_SECONDS; say it in the metric and one error log line; and recover when
 * the cause is fixed (the Secret file corrected and re-read, the backend healed). The control
 * is a forwarder the backend serves from the start: no such Event, ready, the disk created.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateVolumeCommand, DescribeVolumesCommand } from '@aws-sdk/client-ec2';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { createJsonLogger, startForwarder, type Forwarder, type ForwarderConfigInput } from '../../lib/forwarder/index.js';
import { startBackendServer, type BackendServer } from '../../lib/local/stack/backend-server.js';
import { CREATING_VOLUME, makeApp, SECRET_C1, SECRET_C2 } from '../app/harness.js';
import { pvcObject, vaObject } from '../kube/fixtures.js';
import { startKube, type KubeHarness } from '../kube/harness.js';
import { eventually } from './fake-backend.js';

const ZONE = 'us-east-1a';
const dir = mkdtempSync(join(tmpdir(), 'volhook-refused-'));
const closers: Array<() => Promise<void>> = [];

interface KubeEvent {
  reason?: string;
  type?: string;
  message?: string;
  count?: number;
  involvedObject?: { kind?: string; name?: string };
}

/** A cluster (the local API) with a pending claim, the backend app over HTTP, and a forwarder. */
async function scenario(options: { clusterId?: string; secret: string; attachment?: boolean }) {
  const kube: KubeHarness = await startKube();
  kube.store.create('storageclasses', { apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name: 'gp3' }, provisioner: 'ebs.csi.aws.com', parameters: { type: 'gp3' }, volumeBindingMode: 'WaitForFirstConsumer' });
  kube.store.create('nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1', labels: { 'topology.kubernetes.io/zone': ZONE } }, spec: { providerID: `aws:///${ZONE}/i-0123456789abcdef0` } });
  kube.store.create('csinodes', { apiVersion: 'storage.k8s.io/v1', kind: 'CSINode', metadata: { name: 'n1' }, spec: { drivers: [{ name: 'ebs.csi.aws.com', nodeID: 'i-0123456789abcdef0', allocatable: { count: 25 } }] } });
  kube.store.create('persistentvolumeclaims', pvcObject('held', 'default', { 'volume.kubernetes.io/storage-provisioner': 'ebs.csi.aws.com', 'volume.kubernetes.io/selected-node': 'n1' }));
  if (options.attachment) kube.store.create('volumeattachments', vaObject('csi-held', 'pvc-elsewhere', 'n1'));

  const state = { failing: false };
  const made = makeApp({
    now: () => Date.now(),
    onContract: (_cluster, seen) => {
      if (state.failing && seen.served) throw new Error('scripted backend failure');
    },
  });
  made.ec2Mock.on(DescribeVolumesCommand).resolves({ Volumes: [] });
  made.ec2Mock.on(CreateVolumeCommand).resolves(CREATING_VOLUME);
  const backend: BackendServer = await startBackendServer(made.app, '127.0.0.1', 0);

  const secretFile = join(dir, `${Math.random().toString(36).slice(2)}.secret`);
  writeFileSync(secretFile, options.secret);
  const logLines: Array<Record<string, unknown>> = [];
  const config: ForwarderConfigInput = {
    apiUrl: backend.url,
    clusterId: options.clusterId ?? 'c1',
    secretFile,
    secretPollMs: 50,
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
  };
  const forwarder: Forwarder = await startForwarder(config, {
    kubeConfig: kube.kubeConfig,
    logger: createJsonLogger({ level: 'debug', write: (line) => void logLines.push(JSON.parse(line) as Record<string, unknown>) }),
  });
  closers.push(async () => {
    await forwarder.stop();
    await backend.stop();
    await kube.close();
    made.ec2Mock.restore();
  });

  const events = (reason: string, name: string) =>
    (kube.store.list('events').items as KubeEvent[]).filter((e) => e.reason === reason && e.involvedObject?.name === name);
  const readyz = async () => {
    const res = await fetch(`http://127.0.0.1:${forwarder.port}/readyz`);
    return { status: res.status, text: await res.text() };
  };
  const created = () => made.ec2Mock.commandCalls(CreateVolumeCommand).length > 0;
  const metric = () => forwarder.metrics.registry.getSingleMetricAsString('volhook_forwarder_backend_refused');
  const errorsNamed = (msg: string) => logLines.filter((l) => l.level === 'error' && l.msg === msg);
  return { kube, forwarder, secretFile, state, events, readyz, created, metric, errorsNamed, logLines };
}

/** `eventually`, typed for a check that answers undefined until it holds. */
async function until<T>(check: () => T | undefined | Promise<T | undefined>, what: string): Promise<T> {
  return (await eventually(check, 10_000, what)) as T;
}

const SURFACED = 'the backend refuses every request; Warning Events on the claims and VolumeAttachments held back';

afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('a forwarder against the backend app and the local API', () => {
  it('wrong secret in the Secret file (401) -> a Warning Event on the pending claim naming the Secret and show --show-secrets, one Event whose count grows; /readyz 503 (the check at start refused); metric and one error line; the file fixed -> ready again and the disk created', async () => {
    const s = await scenario({ secret: SECRET_C2 });

    const event = await until(() => s.events('BackendRefused', 'held')[0], 'the Warning Event on the claim');
    expect(event).toMatchObject({ type: 'Warning', involvedObject: { kind: 'PersistentVolumeClaim', name: 'held' } });
    expect(event.message).toContain("the backend refuses this cluster's signature (HTTP 401 bad_signature)");
    expect(event.message).toContain(`the Secret mounted at ${s.secretFile}`);
    expect(event.message).toContain('`npm run cluster -- show c1 --show-secrets`');

    const notReady = await until(async () => {
      const r = await s.readyz();
      return r.status === 503 ? r : undefined;
    }, '/readyz failing');
    expect(notReady.text).toContain("not ready: the backend refuses this forwarder; the backend refuses this cluster's signature (HTTP 401 bad_signature)");
    expect(notReady.text).toContain('`npm run cluster -- show c1 --show-secrets`');

    // Repeats bump the one Event (the message does not change), they do not pile up.
    await eventually(() => (s.events('BackendRefused', 'held')[0]?.count ?? 0) >= 2, 10_000, 'the Event counted again');
    expect(s.events('BackendRefused', 'held')).toHaveLength(1);
    expect(await s.metric()).toContain('volhook_forwarder_backend_refused{cause="signature"} 1');
    expect(s.errorsNamed(SURFACED)).toEqual([expect.objectContaining({ cause: 'signature', status: 401, code: 'bad_signature', detail: event.message })]);
    expect(s.created()).toBe(false);

    writeFileSync(s.secretFile, SECRET_C1);
    await eventually(async () => (await s.readyz()).status === 200, 10_000, '/readyz passing again');
    await eventually(() => s.created(), 10_000, 'the disk created');
    expect(await s.metric()).not.toContain('} 1');
    expect(s.logLines.some((l) => l.msg === 'the backend serves this forwarder again')).toBe(true);
    expect(s.errorsNamed(SURFACED)).toHaveLength(1);
  });

  it('a cluster id the backend has no registration for (404) -> the Event says it is not registered and names `cluster -- add`; /readyz 503 naming the same', async () => {
    const s = await scenario({ clusterId: 'c9', secret: SECRET_C1 });
    const event = await until(() => s.events('BackendRefused', 'held')[0], 'the Warning Event on the claim');
    expect(event.message).toContain('the backend does not know cluster "c9" (HTTP 404 unknown_cluster): it is not registered');
    expect(event.message).toContain('`npm run cluster -- add c9`');
    const notReady = await until(async () => {
      const r = await s.readyz();
      return r.status === 503 ? r : undefined;
    }, '/readyz failing');
    expect(notReady.text).toContain('`npm run cluster -- add c9`');
    expect(await s.metric()).toContain('volhook_forwarder_backend_refused{cause="unregistered"} 1');
  });

  it('a backend failing with 500 -> BackendUnavailable on the claim and on the VolumeAttachment held back; /readyz 503; the backend healed -> ready again', async () => {
    const s = await scenario({ secret: SECRET_C1, attachment: true });
    // The app logs each scripted 500 as an unhandled error on the console.
    const quiet = vi.spyOn(console, 'error').mockImplementation(() => {});
    closers.push(async () => quiet.mockRestore());
    s.state.failing = true;
    await eventually(() => s.events('BackendUnavailable', 'held').length > 0 && s.events('BackendUnavailable', 'csi-held').length > 0, 10_000, 'the Events on the claim and the attachment');
    const [event] = s.events('BackendUnavailable', 'held');
    expect(event).toMatchObject({ type: 'Warning', message: expect.stringContaining('the backend is failing (HTTP 500') });
    expect(s.events('BackendUnavailable', 'csi-held')[0]).toMatchObject({ type: 'Warning', involvedObject: { kind: 'VolumeAttachment' } });
    await eventually(async () => (await s.readyz()).status === 503, 10_000, '/readyz failing');
    expect(await s.metric()).toContain('volhook_forwarder_backend_refused{cause="failing"} 1');

    s.state.failing = false;
    await eventually(async () => (await s.readyz()).status === 200, 10_000, '/readyz passing again');
    await eventually(() => s.created(), 10_000, 'the disk created');
  });

  it('control: the right secret and a registered cluster -> no BackendRefused or BackendUnavailable Event, /readyz 200, the disk created, the metric never 1', async () => {
    const s = await scenario({ secret: SECRET_C1, attachment: true });
    await eventually(() => s.created(), 10_000, 'the disk created');
    expect((await s.readyz()).status).toBe(200);
    expect([...s.events('BackendRefused', 'held'), ...s.events('BackendUnavailable', 'held'), ...s.events('BackendUnavailable', 'csi-held')]).toEqual([]);
    expect(await s.metric()).not.toContain('} 1');
    expect(s.errorsNamed(SURFACED)).toEqual([]);
  });
});
