/**
 * Volume tags from claim annotations end to end over the local stack (real HTTP: Kubernetes
 * API, forwarder, backend, EC2 simulator), driven with kubectl as a user would: the allowed key
 * lands at CreateVolume and again when the annotation changes; a key off the registration's
 * `claimTagKeys` is not applied and a Warning says so.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Ec2SimStats } from '../../lib/local/ec2/index.js';
import { tagsOf, volumeById } from './support/ec2.js';
import { readVolume } from './support/kube.js';
import { kubectlFor, type Kubectl } from './support/kubectl.js';
import { claimYaml, waitClaim, waitEvent } from './support/resize.js';
import { waitClaimBound, type ScenarioContext } from './support/scenarios.js';
import { IMMEDIATE_CLASS, startScenarioStack, type E2eStack } from './support/stack.js';
import { waitFor } from './support/wait.js';

let stack: E2eStack;
let ctx: ScenarioContext;
let kubectl: Kubectl;

beforeAll(async () => {
  ({ stack, ctx } = await startScenarioStack({ immediateClass: true, registration: { claimTagKeys: ['team', 'cost-center'] } }));
  kubectl = await kubectlFor(stack.urls.kube);
}, 60_000);
afterAll(async () => {
  await stack?.stop();
  await kubectl?.close();
});

const okCalls = (s: Ec2SimStats, action: string) => s.actions[action]?.ok ?? 0;

describe('claim tags over the local stack', () => {
  it('allowed key tagged at create and after a change (one CreateTags); a key off the list never applied, with a Warning', async () => {
    const ns = 'tags';
    await kubectl('create', 'namespace', ns);
    await kubectl.create(
      claimYaml(ns, 'data', { storageClassName: IMMEDIATE_CLASS, size: '1Gi', annotations: { 'tag.volhook.io/team': 'storage', 'tag.volhook.io/owner': 'bob' } }),
    );
    const pvc = await waitClaimBound(ctx, ns, 'data');
    const volumeId = (await readVolume(stack.kube, pvc.spec?.volumeName ?? '')).spec?.csi?.volumeHandle ?? '';
    const created = tagsOf(await volumeById(stack.ec2, volumeId));
    expect(created.team).toBe('storage');
    expect(created).not.toHaveProperty('owner');

    const warning = await waitEvent(stack.kube, ns, 'data', 'ClaimTagsIgnored');
    expect(warning.type).toBe('Warning');
    expect(warning.message).toContain(`"owner" (not on the cluster's claimTagKeys)`);
    await waitClaim(stack.kube, ns, 'data', 'request recorded', (c) => c.metadata?.annotations?.['volhook.io/claim-tags'] === JSON.stringify({ owner: 'bob', team: 'storage' }));
    const before = stack.simulator!.getStats();

    await kubectl('annotate', '--overwrite', '-n', ns, 'pvc', 'data', 'tag.volhook.io/team=platform');

    const changed = await waitFor(
      async () => tagsOf(await volumeById(stack.ec2, volumeId)),
      (tags) => tags.team === 'platform',
      { what: `volume ${volumeId} tagged team=platform`, timeoutMs: 60_000 },
    );
    expect(changed).not.toHaveProperty('owner');
    await waitEvent(stack.kube, ns, 'data', 'ClaimTagsApplied');
    await waitClaim(stack.kube, ns, 'data', 'new request recorded', (c) => c.metadata?.annotations?.['volhook.io/claim-tags'] === JSON.stringify({ owner: 'bob', team: 'platform' }));
    expect(okCalls(stack.simulator!.getStats(), 'CreateTags') - okCalls(before, 'CreateTags')).toBe(1);
  }, 120_000);
});
