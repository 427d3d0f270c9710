/**
 * An attachment stuck `attaching`, end to end over the local stack (simulator at time scale 4:
 * the driver's 90 s is 22.5 s, the 15 s behind a later attach 3.75 s). Two claims' attaches
 * stuck on two nodes; then a third claim attached on the first node. The first stuck one is
 * given up as soon as the later attach to its node has finished — detached and attached
 * again, its pod Running — while the one on the other node, with no later attach there, is
 * still waited on; it is given up at the driver's 90 s (÷ 4) and its pod runs too.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TagKeys } from '../../lib/contract/tags.js';
import type { Volume } from '../../lib/local/ec2/index.js';
import { stuckAttachingMs, stuckBehindLaterAttachMs } from '../../lib/reconcile/stuck-attachment.js';
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
  it('given up once a later attach to its node has finished, well before the 90 s; on a node with no later attach, waited on until the 90 s; both pods Running', async () => {
    const ns = 'stuck';
    await createNamespace(stack.kube, ns);
    const [first, second] = ctx.nodes;
    expect(first && second && first.zone !== second.zone, 'two nodes in two zones').toBe(true);
    for (const claim of ['a', 'b', 'c']) await createClaim(stack.kube, ns, claim, { storageClassName: 'gp3' });

    sim().configure({ attachFaults: [{ outcome: 'stuck' }] });
    await podOn(ns, 'pod-a', 'a', first!.name);
    await podOn(ns, 'pod-c', 'c', second!.name);
    const a = await diskOf(ns, 'a');
    const c = await diskOf(ns, 'c');
    const stuckOn = (v: () => Volume) => v().attachments.some((x) => x.state === 'attaching' && x.stuck);
    await waitFor(() => [a, c].every(stuckOn), Boolean, { what: 'both attaches stuck', timeoutMs: 60_000 });
    const cBegan = c().attachments[0]!.attachTime;
    const aBegan = a().attachments[0]!.attachTime;
    const detachesBefore = detachCalls();

    // The later attach on the first node: no longer stuck.
    sim().configure({ attachFaults: [] });
    await podOn(ns, 'pod-b', 'b', first!.name);
    await waitPodRunning(ctx, ns, 'pod-b', 60_000);
    // a and c read at one moment: the first poll that finds a given up.
    const seen = await waitFor(
      () => ({ aStuck: stuckOn(a), cStuck: stuckOn(c), aFor: Date.now() - aBegan, cFor: Date.now() - cBegan }),
      (s) => !s.aStuck,
      { what: "a's stuck attach given up", timeoutMs: 60_000 },
    );
    expect(detachCalls()).toBeGreaterThan(detachesBefore);
    expect(seen.aFor, 'a given up sooner than the driver’s 90 s').toBeLessThan(stuckAttachingMs(TIME_SCALE));
    // The control: c, stuck past the 15 s too but with no later attach on its node, still waited on.
    expect(seen.cFor).toBeGreaterThan(stuckBehindLaterAttachMs(TIME_SCALE));
    expect(seen.cStuck, 'c still waited on').toBe(true);

    await waitPodRunning(ctx, ns, 'pod-a', 60_000);
    await waitPodRunning(ctx, ns, 'pod-c', 60_000);
    for (const v of [a, c]) expect(v().attachments.map((x) => x.state)).toEqual(['attached']);
  }, 240_000);
});
