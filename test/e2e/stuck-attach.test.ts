/**
 * An attachment stuck `attaching`, end to end over the local stack (simulator at time scale 4:
 * the driver's 90 s is 22.5 s, an early give-up's 15 s 3.75 s): a claim's attach stuck on a
 * node, then another claim attached there. The stuck one is given up early — detached and
 * attached again, its pod Running — well before the 90 s. When it is waited on instead (another
 * attach in flight on the instance, or an early give-up already spent) is pinned by
 * test/reconcile/decisions.test.ts; the crash explorer judges every such detach against the
 * simulator's truth.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TagKeys } from '../../lib/contract/tags.js';
import type { Volume } from '../../lib/local/ec2/index.js';
import { stuckAttachingMs, earlyGiveUpMs } from '../../lib/reconcile/stuck-attachment.js';
import { createClaim, createNamespace, pod, readClaim } from './support/kube.js';
import { STACK_START_MS } from './support/plane.js';
import { waitClaimBound, waitPodRunning, type ScenarioContext } from './support/scenarios.js';
import { startScenarioStack, type E2eStack } from './support/stack.js';
import { waitFor } from './support/wait.js';

const TIME_SCALE = 4;
let stack: E2eStack;
let ctx: ScenarioContext;

beforeAll(async () => {
  ({ stack, ctx } = await startScenarioStack({ ec2: { timeScale: TIME_SCALE, seed: 11 } }));
}, STACK_START_MS);
afterAll(async () => stack?.stop());

const sim = () => stack.simulator!;
const detachCalls = () => sim().getStats().actions.DetachVolume?.calls ?? 0;

async function podOn(ns: string, name: string, claim: string, node: string): Promise<void> {
  const body = pod(ns, name, [claim]);
  await stack.kube.core.createNamespacedPod({ namespace: ns, body: { ...body, spec: { ...body.spec!, nodeSelector: { 'kubernetes.io/hostname': node } } } });
}

/** The claim's disk once it is Bound, as the simulator holds it. */
async function diskOf(ns: string, claim: string): Promise<() => Volume> {
  await waitClaimBound(ctx, ns, claim, 60_000);
  const pv = (await readClaim(stack.kube, ns, claim)).spec!.volumeName!;
  const volume = sim().volumes().find((v) => v.tags.some((t) => t.key === TagKeys.pvName && t.value === pv));
  if (!volume) throw new Error(`no disk for PV ${pv}`);
  return () => sim().volume(volume.id)!;
}

describe('an attachment stuck attaching', () => {
  it('given up early once EC2 has finished a later attach to its node: detached, attached again, its pod Running, well before the driver’s 90 s', async () => {
    const ns = 'stuck';
    await createNamespace(stack.kube, ns);
    const node = ctx.nodes[0]!;
    for (const claim of ['a', 'b']) await createClaim(stack.kube, ns, claim, { storageClassName: 'gp3' });

    sim().configure({ attachFaults: [{ outcome: 'stuck' }] });
    await podOn(ns, 'pod-a', 'a', node.name);
    const a = await diskOf(ns, 'a');
    const stuckOn = (v: () => Volume) => v().attachments.some((x) => x.state === 'attaching' && x.stuck);
    await waitFor(() => stuckOn(a), Boolean, { what: "a's attach stuck", timeoutMs: 60_000 });
    const aBegan = a().attachments[0]!.attachTime;
    const detachesBefore = detachCalls();

    // The later attach on the same node: no longer stuck.
    sim().configure({ attachFaults: [] });
    await podOn(ns, 'pod-b', 'b', node.name);
    await waitPodRunning(ctx, ns, 'pod-b', 60_000);
    const givenUpAfter = await waitFor(
      () => (stuckOn(a) ? undefined : Date.now() - aBegan),
      (ms) => ms !== undefined,
      { what: "a's stuck attach given up", timeoutMs: 60_000 },
    );
    expect(detachCalls()).toBeGreaterThan(detachesBefore);
    expect(givenUpAfter, 'given up sooner than the driver’s 90 s').toBeLessThan(stuckAttachingMs(TIME_SCALE));
    expect(givenUpAfter, 'not before the early give-up’s 15 s').toBeGreaterThan(earlyGiveUpMs(TIME_SCALE));

    await waitPodRunning(ctx, ns, 'pod-a', 60_000);
    expect(a().attachments.map((x) => x.state)).toEqual(['attached']);
  }, 240_000);
});
