/**
 * The check before ready (lib/forwarder/startup-check.ts): a replica is not ready until the
 * backend accepts it — a standby too, which sends nothing else — so a rollout of forwarders the
 * backend refuses stops at its first new pod. Decisions on a manual timer; then two standbys
 * against a fake backend, one with a wrong secret.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BackendRequestError } from '../../lib/forwarder/backend-client.js';
import { startForwarder, type Forwarder } from '../../lib/forwarder/index.js';
import { silentLogger, type Logger } from '../../lib/forwarder/logger.js';
import { startStartupCheck } from '../../lib/forwarder/startup-check.js';
import { startKube, type KubeHarness } from '../kube/harness.js';
import { CLUSTER_ID, eventually, startFakeBackend, type FakeBackend } from './fake-backend.js';

const SECRET = 'startup-check-secret-0123456789';

/** A timer run by hand: `fire()` runs what is due. */
function manualTimer() {
  const due: Array<{ fn: () => void; ms: number }> = [];
  return {
    due,
    setTimer: (fn: () => void, ms: number) => (due.push({ fn, ms }), {}),
    clearTimer: () => void due.splice(0),
    fire: () => due.splice(0).forEach((t) => t.fn()),
  };
}

function logs(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const at = (level: string) => (msg: string) => void lines.push(`${level} ${msg}`);
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('startStartupCheck', () => {
  it('refused -> not ready, saying why; asked again backing off; accepted -> ready, asked no more', async () => {
    const answers: Array<() => Promise<'accepted' | 'unknown'>> = [
      () => Promise.reject(new BackendRequestError('http', 'HTTP 401', 401, undefined, 'bad_signature')),
      () => Promise.reject(new BackendRequestError('http', 'HTTP 401', 401, undefined, 'bad_signature')),
      () => Promise.resolve('accepted'),
    ];
    let asked = 0;
    const timer = manualTimer();
    const log = logs();
    const check = startStartupCheck({ check: () => answers[asked++]!(), describe: () => 'the Secret is wrong', onContractRefused: () => {}, logger: log, backoff: { initialMs: 100, maxMs: 150 }, ...timer });
    expect(check.notReady()).toMatch(/asking the backend/);
    await tick();
    expect(check.notReady()).toBe('not ready: the backend refuses this forwarder; the Secret is wrong');
    expect(timer.due.map((t) => t.ms)).toEqual([100]);
    timer.fire();
    await tick();
    expect(timer.due.map((t) => t.ms)).toEqual([150]);
    timer.fire();
    await tick();
    expect(check.notReady()).toBeUndefined();
    expect(timer.due).toEqual([]);
    expect(asked).toBe(3);
    // One error line for the one reason, not one per attempt.
    expect(log.lines.filter((l) => l.startsWith('error'))).toHaveLength(1);
  });

  it('a backend older than the check -> ready (it cannot say), logged; the contract\'s 426 -> handed on, asked no more', async () => {
    const log = logs();
    const old = startStartupCheck({ check: () => Promise.resolve('unknown'), describe: String, onContractRefused: () => {}, logger: log, backoff: { initialMs: 1, maxMs: 1 }, ...manualTimer() });
    await tick();
    expect(old.notReady()).toBeUndefined();
    expect(log.lines).toContainEqual(expect.stringMatching(/^info the backend has no check/));

    const timer = manualTimer();
    const handed: BackendRequestError[] = [];
    const contract = new BackendRequestError('contract', 'HTTP 426', 426);
    const refused = startStartupCheck({ check: () => Promise.reject(contract), describe: String, onContractRefused: (e) => void handed.push(e), logger: log, backoff: { initialMs: 1, maxMs: 1 }, ...timer });
    await tick();
    expect(handed).toEqual([contract]);
    expect(timer.due).toEqual([]);
    expect(refused.notReady()).toBeUndefined();
  });
});

describe('two standbys (another replica holds the Lease), one with a wrong secret', () => {
  let kube: KubeHarness;
  let backend: FakeBackend;
  const forwarders: Forwarder[] = [];
  const standby = (secret: string) =>
    startForwarder(
      {
        apiUrl: backend.url,
        clusterId: CLUSTER_ID,
        secret,
        port: 0,
        listenHost: '127.0.0.1',
        leaderElect: true,
        leaseNamespace: 'default',
        backoffInitialMs: 50,
      },
      { kubeConfig: kube.kubeConfig, logger: silentLogger },
    ).then((f) => (forwarders.push(f), f));

  beforeAll(async () => {
    kube = await startKube();
    backend = await startFakeBackend({ secrets: [SECRET] });
    // The leader: a Lease held by a replica that renews it (a long duration stands for that).
    const now = new Date().toISOString();
    kube.store.create('leases', { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'volhook-forwarder', namespace: 'default' }, spec: { holderIdentity: 'the-leader', leaseDurationSeconds: 3600, acquireTime: now, renewTime: now } } as never);
  });
  afterAll(async () => {
    await Promise.all(forwarders.map((f) => f.stop()));
    await backend?.close();
    await kube?.close();
  });

  it('the wrong secret -> never ready, /readyz naming the refusal; the right one (the control) -> ready; neither leads nor sends a reconcile request', async () => {
    const right = await standby(SECRET);
    const wrong = await standby('startup-check-wrong-secret-0123');
    await eventually(() => right.readiness().ready, 5_000, 'the right one ready');
    await eventually(() => backend.checks >= 3, 5_000, 'the wrong one asking again');
    // Its caches synced (that may take a moment after its first checks): only the backend holds it back.
    await eventually(() => wrong.ready(), 5_000, 'the wrong one synced');
    expect(wrong.readiness()).toMatchObject({ ready: false, reason: expect.stringContaining('not ready: the backend refuses this forwarder; the backend refuses this cluster') });
    expect([right.leading(), wrong.leading()]).toEqual([false, false]);
    expect(backend.statuses).toEqual([]);
  });
});
