/**
 * Scenarios 1, 4 and 6 again, with moto's EC2 server in place of the simulator. moto ignores
 * ClientToken and skips transitional states, so this shows that one disk per claim does not
 * rest on the token, and that nothing depends on the simulator's quirks.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMoto, type Moto } from './support/moto.js';
import { manyClaims, provisionForPod, reclaimPolicies, type ScenarioContext } from './support/scenarios.js';
import { IMMEDIATE_CLASS, startScenarioStack, type E2eStack } from './support/stack.js';
import { waitFor } from './support/wait.js';

let moto: Moto;
let stack: E2eStack;
let ctx: ScenarioContext;

beforeAll(async () => {
  moto = await startMoto();
  ({ stack, ctx } = await startScenarioStack({ immediateClass: true, ec2Endpoint: moto.url }));
}, 90_000);
afterAll(async () => {
  await stack?.stop();
  await moto?.stop();
});

describe('with moto as EC2', () => {
  it('the stack starts on moto -> three node instances launched, one per zone', () => {
    expect(stack.simulator).toBeUndefined();
    expect(stack.nodes.map((n) => n.zone).sort()).toEqual(['us-east-1a', 'us-east-1b', 'us-east-1c']);
    for (const node of stack.nodes) expect(node.instanceId).toMatch(/^i-/);
  });

  it('WaitForFirstConsumer PVC + pod -> PVC Bound, PV and disk in the node zone with every tag, attached, pod Running', async () => {
    await provisionForPod(ctx, 'wffc');
  }, 120_000);

  it('Delete and Retain claims, pods then claims deleted -> Delete: detached, disk and PV gone; Retain: disk and Released PV stay', async () => {
    await reclaimPolicies(ctx, 'reclaim');
  }, 150_000);

  it('50 PVCs on an Immediate class created together, forwarder restarted midway -> all Bound, exactly 50 disks, one per claim', async () => {
    // The restarted forwarder offers every claim again, some while their disks are being
    // made: with moto ignoring ClientToken, only the lookup by tag prevents a second disk.
    await manyClaims(ctx, 'fifty', IMMEDIATE_CLASS, 50, async () => {
      await waitFor(
        () => ctx.results.filter((r) => r.key.startsWith('PersistentVolumeClaim/fifty/')).length,
        (n) => n >= 5,
        { what: 'the first results for the fifty claims', intervalMs: 10 },
      );
      await stack.restartForwarder();
    });
  }, 150_000);
});
