/**
 * refusal-surface.ts on a manual clock, over clients that record the Events written: when the
 * Warning Events, the metric, the log line and the readiness failure come, and what ends them.
 */
import { describe, expect, it } from 'vitest';
import { BackendRequestError } from '../../lib/forwarder/backend-client.js';
import { createMetrics } from '../../lib/forwarder/metrics.js';
import { createRefusalSurface } from '../../lib/forwarder/refusal-surface.js';
import type { ContractRefusal, ItemInput } from '../../lib/contract/index.js';
import type { KubeClients } from '../../lib/kube/clients.js';

const claimItem = { kind: 'PersistentVolumeClaim', pvc: { metadata: { name: 'data', namespace: 'app', uid: 'u1' } } } as unknown as ItemInput;
const unauthorized = new BackendRequestError('http', 'HTTP 401 bad_signature: no secret matches', 401, undefined, 'bad_signature');

function setup() {
  let now = 0;
  const events: Array<{ namespace: string; reason?: string; message?: string }> = [];
  const clients = {
    core: {
      createNamespacedEvent: async ({ namespace, body }: { namespace: string; body: { reason?: string; message?: string } }) => {
        events.push({ namespace, reason: body.reason, message: body.message });
        return body;
      },
      patchNamespacedEvent: async ({ body }: { body: unknown }) => body,
    },
  } as unknown as KubeClients;
  const logs: Array<{ level: string; msg: string }> = [];
  const log = (level: string) => (msg: string) => void logs.push({ level, msg });
  const metrics = createMetrics({ queueDepth: () => 0, defaultMetrics: false });
  let contractStops = 0;
  const surface = createRefusalSurface({
    config: { clusterId: 'c1', apiUrl: 'https://backend.example', secretFile: '/s/secret', refusedEventMs: 10_000, refusedReadySeconds: 60, backoffInitialMs: 1_000 },
    clients,
    metrics,
    logger: { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') },
    onContractRefused: () => void contractStops++,
    now: () => now,
  });
  const gauge = async () => (await metrics.backendRefused.get()).values.filter((v) => v.value === 1).map((v) => v.labels.cause);
  return { surface, events, logs, gauge, advance: (ms: number) => void (now += ms), contractStops: () => contractStops };
}

describe('createRefusalSurface', () => {
  it('401s for 9 s -> nothing written, ready; at 10 s -> a Warning on the claim, the metric, one error line; at 60 s -> /readyz fails; served -> all of it ends', async () => {
    const s = setup();
    await s.surface.refused(unauthorized, [claimItem]);
    s.advance(9_000);
    await s.surface.refused(unauthorized, [claimItem]);
    expect(s.events).toEqual([]);
    expect(await s.gauge()).toEqual([]);
    expect(s.surface.notReady()).toBeUndefined();

    s.advance(1_000);
    await s.surface.refused(unauthorized, [claimItem]);
    await s.surface.refused(unauthorized, [claimItem]);
    expect(s.events).toHaveLength(1); // the repeat bumps the Event's count
    expect(s.events[0]).toMatchObject({ namespace: 'app', reason: 'BackendRefused', message: expect.stringContaining('cluster -- show c1 --show-secrets') });
    expect(await s.gauge()).toEqual(['signature']);
    expect(s.logs.filter((l) => l.level === 'error')).toHaveLength(1);
    expect(s.surface.notReady()).toBeUndefined();

    s.advance(50_000);
    expect(s.surface.notReady()).toMatch(/^not ready: every request to the backend was refused for 60s or more; the backend refuses this cluster's signature/);

    s.surface.served();
    expect(s.surface.notReady()).toBeUndefined();
    expect(await s.gauge()).toEqual([]);
    expect(s.logs.at(-1)).toEqual({ level: 'info', msg: 'the backend serves this forwarder again' });
  });

  it('the Lease lost while refused -> standing by is ready (only a leader could end the streak), the metric cleared', async () => {
    const s = setup();
    await s.surface.refused(unauthorized, [claimItem]);
    s.advance(60_000);
    await s.surface.refused(unauthorized, [claimItem]);
    expect(s.surface.notReady()).toBeDefined();
    s.surface.standingBy();
    expect(s.surface.notReady()).toBeUndefined();
    expect(await s.gauge()).toEqual([]);
  });

  it("control: the contract's 426 -> not one of these refusals: no Event, the contract's reason on /readyz, the sending stopped once", async () => {
    const s = setup();
    const contract = { error: { code: 'unsupported_contract', message: 'x' }, contract: { offered: 99, served: [1, 2], upgrade: 'backend', backendVersion: '1.0.0', forwarderVersion: '1.0.0' } } satisfies ContractRefusal;
    await s.surface.refused(new BackendRequestError('contract', 'HTTP 426', 426), [claimItem]);
    s.surface.contractRefused(contract);
    s.surface.contractRefused(contract);
    s.advance(120_000);
    expect(s.events).toEqual([]);
    expect(s.contractStops()).toBe(1);
    expect(s.surface.notReady()).toContain("the backend refuses this forwarder's contract");
  });
});
