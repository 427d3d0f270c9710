/**
 * A forwarder whose contract the backend does not serve shows it as its readiness failure, not
 * as a retry loop: against the real backend app over HTTP, a forwarder claiming contract 99
 * (the test-only `claimedVersions`) is refused with the 426, stops sending, fails `/readyz`
 * naming both contracts, both versions and the fix, logs it once at error level, sets
 * `volhook_forwarder_contract_refused`, gives up its Lease, and stays alive (`/healthz`). The
 * control is a forwarder of this build on the same cluster and backend: it is served, ready, and
 * its claims reach EC2 — the very claim the refused one holds back.
 */
import { CreateVolumeCommand, DescribeVolumesCommand } from '@aws-sdk/client-ec2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ContractSeen } from '../../lib/app/index.js';
import { CONTRACT_VERSIONS, ItemKeys, VOLHOOK_VERSION, type Result } from '../../lib/contract/index.js';
import { createJsonLogger, silentLogger, startForwarder, type Forwarder, type ForwarderConfigInput } from '../../lib/forwarder/index.js';
import { startBackendServer, type BackendServer } from '../../lib/local/stack/backend-server.js';
import { CREATING_VOLUME, makeApp, SECRET_C1 } from '../app/harness.js';
import { pvcObject } from '../kube/fixtures.js';
import { startKube, type KubeHarness } from '../kube/harness.js';
import { eventually } from './fake-backend.js';

const ZONE = 'us-east-1a';
let kube: KubeHarness;
let backend: BackendServer;
let ec2Mock: ReturnType<typeof makeApp>['ec2Mock'];
const seen: ContractSeen[] = [];
const results: Result[] = [];
let refused: Forwarder;
let control: Forwarder;
const logLines: Array<Record<string, unknown>> = [];

const config = (overrides: Partial<ForwarderConfigInput> = {}): ForwarderConfigInput => ({
  apiUrl: backend.url,
  clusterId: 'c1',
  secret: SECRET_C1,
  port: 0,
  listenHost: '127.0.0.1',
  resyncSeconds: 3600,
  backoffInitialMs: 50,
  backoffMaxMs: 200,
  informerRestartMs: 100,
  requestTimeoutMs: 5_000,
  shutdownTimeoutMs: 1_000,
  ...overrides,
});

const claim = (name: string) =>
  kube.store.create('persistentvolumeclaims', pvcObject(name, 'default', { 'volume.kubernetes.io/storage-provisioner': 'ebs.csi.aws.com', 'volume.kubernetes.io/selected-node': 'n1' }));
const get = async (fwd: Forwarder, path: string) => {
  const res = await fetch(`http://127.0.0.1:${fwd.port}${path}`);
  return { status: res.status, text: await res.text() };
};

beforeAll(async () => {
  kube = await startKube();
  kube.store.create('storageclasses', { apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name: 'gp3' }, provisioner: 'ebs.csi.aws.com', parameters: { type: 'gp3' }, volumeBindingMode: 'WaitForFirstConsumer' });
  kube.store.create('nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1', labels: { 'topology.kubernetes.io/zone': ZONE } }, spec: { providerID: `aws:///${ZONE}/i-0123456789abcdef0` } });
  kube.store.create('csinodes', { apiVersion: 'storage.k8s.io/v1', kind: 'CSINode', metadata: { name: 'n1' }, spec: { drivers: [{ name: 'ebs.csi.aws.com', nodeID: 'i-0123456789abcdef0', allocatable: { count: 25 } }] } });

  // The real app (signature checks on the real clock), EC2 mocked.
  const made = makeApp({ now: () => Date.now(), onContract: (_c, s) => void seen.push(s), onResult: (_c, _i, r) => void results.push(r) });
  ec2Mock = made.ec2Mock;
  ec2Mock.on(DescribeVolumesCommand).resolves({ Volumes: [] });
  ec2Mock.on(CreateVolumeCommand).resolves(CREATING_VOLUME);
  backend = await startBackendServer(made.app, '127.0.0.1', 0);

  claim('first');
  refused = await startForwarder(config({ leaderElect: true, leaseNamespace: 'default', leaseDurationSeconds: 2, renewDeadlineSeconds: 1, retryPeriodSeconds: 0.2 }), {
    kubeConfig: kube.kubeConfig,
    logger: createJsonLogger({ level: 'debug', write: (line) => void logLines.push(JSON.parse(line) as Record<string, unknown>) }),
    claimedVersions: { contract: 99, forwarderVersion: VOLHOOK_VERSION },
  });
}, 30_000);

afterAll(async () => {
  await refused?.stop();
  await control?.stop();
  await backend?.stop();
  await kube?.close();
  ec2Mock?.restore();
});

describe('a forwarder claiming contract 99, against the backend app over HTTP', () => {
  it('-> refused with the 426; /readyz 503 naming contract 99, the contracts served, both versions and the fix; /healthz 200; one error log line; the metric; the Lease given up; no EC2 call', async () => {
    await eventually(() => refused.contractRefusal(), 10_000, 'the refusal');
    expect(refused.contractRefusal()?.contract).toEqual({ offered: 99, served: [1, 2], upgrade: 'backend', backendVersion: VOLHOOK_VERSION, forwarderVersion: VOLHOOK_VERSION });
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.every((s) => s.contract === 99 && !s.served)).toBe(true);

    const ready = await get(refused, '/readyz');
    expect(ready.status).toBe(503);
    expect(ready.text).toContain(`forwarder ${VOLHOOK_VERSION} speaks volhook contract 99; the backend (volhook ${VOLHOOK_VERSION}) serves contracts 1 and 2.`);
    expect(ready.text).toContain('Upgrade the backend to a release that serves contract 99');
    expect(ready.text).toContain('once the backend is upgraded, restart it');
    expect(await get(refused, '/healthz')).toEqual({ status: 200, text: 'ok\n' });
    // Refused at its check, before its caches synced; they sync all the same.
    await eventually(() => refused.ready(), 10_000, 'synced informers');

    const errors = logLines.filter((l) => l.level === 'error');
    expect(errors).toEqual([
      expect.objectContaining({ msg: 'backend refuses the contract this forwarder speaks; nothing more is sent', offered: 99, served: [1, 2], upgrade: 'backend', detail: ready.text.trimEnd() }),
    ]);
    expect(await refused.metrics.registry.getSingleMetricAsString('volhook_forwarder_contract_refused')).toContain('volhook_forwarder_contract_refused{offered="99",served="1,2",upgrade="backend"} 1');
    const holder = () => (kube.store.get('leases', 'volhook-forwarder', 'default') as { spec?: { holderIdentity?: string } } | undefined)?.spec?.holderIdentity;
    await eventually(() => holder() === '', 5_000, 'the Lease released');
    expect(refused.leading()).toBe(false);
    expect(ec2Mock.commandCalls(CreateVolumeCommand)).toHaveLength(0);
  });

  it('control: a forwarder of this build (contract 2) on the same cluster and backend -> served, ready, its claims reach EC2; the refused one sends nothing more though it queued the new claim too', async () => {
    const requestsRefused = seen.length;
    control = await startForwarder(config(), { kubeConfig: kube.kubeConfig, logger: silentLogger });
    claim('second');
    const second = ItemKeys.claim('default', 'second');
    // Past its finalizer (write before act), to EC2: CreateVolume for each claim.
    const created = (name: string) => ec2Mock.commandCalls(CreateVolumeCommand).some((call) => JSON.stringify(call.args[0].input.TagSpecifications).includes(`"Value":"${name}"`));
    await eventually(() => created('first') && created('second'), 10_000, 'the control forwarder creating both disks');
    expect(results.some((r) => r.key === second)).toBe(true);
    expect((await get(control, '/readyz')).status).toBe(200);
    expect(control.contractRefusal()).toBeUndefined();
    expect(seen.slice(requestsRefused).every((s) => s.contract === CONTRACT_VERSIONS.current && s.served && s.forwarderVersion === VOLHOOK_VERSION)).toBe(true);

    // The refused forwarder saw the new claim as well: it holds it, and sent nothing more.
    expect(refused.queue.has(second)).toBe(true);
    refused.resync();
    await new Promise((resolve) => setImmediate(resolve));
    expect(refused.queue.inFlight).toBe(0);
    expect(seen.filter((s) => !s.served)).toHaveLength(requestsRefused);
    expect((await get(refused, '/readyz')).status).toBe(503);
  });
});
