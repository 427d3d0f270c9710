/**
 * Two backends (a primary and a standby, as two deployments would be), each its own server over
 * HTTP, sharing the replay, budget and report stores as docs/deploy.md ("Outage and disaster
 * recovery") has them shared. The forwarder knows both. The primary is killed in the middle of a
 * burst of claims — its connections cut while its EC2 work is under way — and the forwarder moves
 * to the standby; every claim ends Bound and attached, the crash explorer's judges find nothing
 * leaked, created twice, wrongly deleted or detached. Then the primary comes back, the forwarder
 * fails back to it, and it tears everything down alone.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBackendApp } from '../../lib/app/index.js';
import { createMemoryBudget } from '../../lib/budget/index.js';
import { DEFAULT_NODE_TAG_KEY } from '../../lib/contract/index.js';
import { startBackendServer, type BackendServer } from '../../lib/local/stack/backend-server.js';
import { BACKEND_CREDENTIALS } from '../../lib/local/stack/stack.js';
import { createStaticRegistry } from '../../lib/registry/index.js';
import { createMemoryReplayStore } from '../../lib/replay/index.js';
import { createMemoryReportStore } from '../../lib/reports/index.js';
import { finalVerdict, unsettled, zeroCounts, type TrackedClaim } from '../crash/checks.js';
import type { JudgedWorld } from '../crash/world.js';
import { DEPLOYMENT, REGION, startJudgedEc2, type JudgedEc2 } from './support/judged-ec2.js';
import { createClaim, createNamespace, createPod, createStorageClass, DRIVER } from './support/kube.js';
import { simulatedStore, startE2eStack, type E2eStack } from './support/stack.js';
import { show, waitFor } from './support/wait.js';

const CLUSTER = 'failover';
const SECRET = `whsec_${randomBytes(24).toString('base64')}`;
const TIME_SCALE = 40;
const NS = 'burst';
const WFFC = { name: 'gp3', binding: 'WaitForFirstConsumer', policy: 'Delete' } as const;
const IMMEDIATE = { name: 'gp3-now', binding: 'Immediate', policy: 'Delete' } as const;

let ec2: JudgedEc2;
let stack: E2eStack;
let world: JudgedWorld;
const backends: Record<'primary' | 'standby', { server?: BackendServer; answered: number }> = { primary: { answered: 0 }, standby: { answered: 0 } };

beforeAll(async () => {
  ec2 = await startJudgedEc2({ timeScale: TIME_SCALE, seed: 7 });
  // What two deployments share (docs/deploy.md): the replay ids, the EC2 budget, the reports.
  const shared = { replay: createMemoryReplayStore(), budget: createMemoryBudget({ timeScale: TIME_SCALE }), reports: createMemoryReportStore() };
  const registration = { clusterId: CLUSTER, secrets: [SECRET], region: REGION, aws: { nodeTag: { key: DEFAULT_NODE_TAG_KEY, value: CLUSTER } } };
  for (const name of ['primary', 'standby'] as const) {
    const app = createBackendApp({
      registry: createStaticRegistry([registration]),
      ...shared,
      ec2Endpoint: ec2.url,
      stsEndpoint: ec2.url,
      stsRegion: REGION,
      ec2RoleArn: DEPLOYMENT.ec2RoleArn,
      ec2Credentials: BACKEND_CREDENTIALS,
      onResult: () => void backends[name].answered++,
    });
    backends[name].server = await startBackendServer(app, '127.0.0.1', 0);
  }
  stack = await startE2eStack({
    clusterId: CLUSTER,
    secret: SECRET,
    ec2Endpoint: ec2.url,
    backendUrl: backends.primary.server!.url,
    forwarder: { standbyApiUrls: [backends.standby.server!.url], failbackSeconds: 1, requestTimeoutMs: 10_000, concurrency: 4, batchSize: 4 },
  });
  world = ec2.judge({ ...stack, store: simulatedStore(stack, 'the failover scenario') });
  await createStorageClass(stack.kube, { metadata: { name: IMMEDIATE.name }, provisioner: DRIVER, parameters: { type: 'gp3' }, volumeBindingMode: 'Immediate', reclaimPolicy: 'Delete' });
}, 90_000);

afterAll(async () => {
  await stack?.stop();
  for (const { server } of Object.values(backends)) await server?.stop();
  await ec2?.close();
});

/** The backend the forwarder sends to now, by its metric. */
async function inUse(): Promise<string | undefined> {
  const { values } = await stack.forwarder()!.metrics.backendInUse.get();
  return values.find((v) => v.value === 1)?.labels.url as string | undefined;
}

const createVolumeCalls = () => ec2.sim.getStats().actions.CreateVolume?.calls ?? 0;

describe('the primary backend killed during a burst', () => {
  const tracked: TrackedClaim[] = [];

  it('-> the forwarder moves to the standby; every claim Bound and attached, nothing leaked or created twice', async () => {
    const primaryUrl = backends.primary.server!.url;
    const standbyUrl = backends.standby.server!.url;
    expect(await inUse()).toBe(primaryUrl);
    await createNamespace(stack.kube, NS);

    // The burst: claims with pods (attach) and claims bound at once.
    const burst = async (from: number, to: number) => {
      for (let i = from; i < to; i++) {
        const wffc = `wffc-${i}`;
        const waiting = await createClaim(stack.kube, NS, wffc, { storageClassName: WFFC.name });
        await createPod(stack.kube, NS, `pod-${i}`, [wffc]);
        const bound = await createClaim(stack.kube, NS, `now-${i}`, { storageClassName: IMMEDIATE.name });
        tracked.push({ name: wffc, class: WFFC, uid: waiting.metadata!.uid!, deleted: false }, { name: `now-${i}`, class: IMMEDIATE, uid: bound.metadata!.uid!, deleted: false });
      }
    };
    await burst(0, 6);
    // Killed while it works: its answers have started and EC2 is creating.
    await waitFor(() => ({ answered: backends.primary.answered, creates: createVolumeCalls() }), (s) => s.answered >= 3 && s.creates >= 2, { what: 'the primary answering and creating', intervalMs: 5 });
    await backends.primary.server!.stop();
    const answeredByPrimary = backends.primary.answered;
    await burst(6, 12);

    const problems = await waitFor(() => unsettled(world, tracked, false), (p) => p.length === 0, { what: 'every claim Bound, every pod running on its attached disk', timeoutMs: 150_000, report: (p) => p.slice(0, 10) });
    expect(problems).toEqual([]);
    expect(await inUse()).toBe(standbyUrl);
    expect(backends.standby.answered).toBeGreaterThan(0);
    // The primary served part of the burst before it died, the standby the rest.
    expect(answeredByPrimary).toBeGreaterThan(0);

    const verdict = finalVerdict(world, tracked, ec2.oracle, []);
    expect(verdict.counts, show(verdict.findings)).toEqual(zeroCounts());
    expect(ec2.unjudged).toEqual([]);
    // One disk per claim, each created once.
    const names = [...ec2.oracle.created.keys()];
    expect(names.length).toBe(tracked.length);
    expect([...ec2.oracle.created.values()].every((ids) => ids.size === 1)).toBe(true);
  }, 200_000);

  it('the primary back -> the forwarder fails back to it, which alone tears everything down; nothing leaked', async () => {
    const primaryUrl = backends.primary.server!.url;
    await backends.primary.server!.start();
    await waitFor(inUse, (url) => url === primaryUrl, { what: 'the forwarder back on the primary', timeoutMs: 30_000 });
    const standbyBefore = backends.standby.answered;
    const primaryBefore = backends.primary.answered;

    for (let i = 0; i < 12; i++) await stack.kube.core.deleteNamespacedPod({ namespace: NS, name: `pod-${i}` });
    for (const claim of tracked) {
      await stack.kube.core.deleteNamespacedPersistentVolumeClaim({ namespace: NS, name: claim.name });
      claim.deleted = true;
    }
    const problems = await waitFor(() => unsettled(world, tracked, true), (p) => p.length === 0, { what: 'every claim, PV and disk gone', timeoutMs: 150_000, report: (p) => p.slice(0, 10) });
    expect(problems).toEqual([]);
    expect(backends.primary.answered).toBeGreaterThan(primaryBefore);
    expect(backends.standby.answered).toBe(standbyBefore);

    const verdict = finalVerdict(world, tracked, ec2.oracle, []);
    expect(verdict.counts, show(verdict.findings)).toEqual(zeroCounts());
    // Every disk made for a claim is deleted (EC2 forgets it soon after).
    const made = [...ec2.oracle.created.values()].flatMap((ids) => [...ids]);
    expect(made.length).toBe(tracked.length);
    expect(made.filter((id) => !['deleting', 'deleted', undefined].includes(world.sim.volume(id)?.state))).toEqual([]);
  }, 200_000);
});
