/**
 * The rate budget in front of EC2, over the real gateway and the SDK (aws-sdk-client-mock):
 * a request takes the tokens its items need in one step per bucket, calls EC2 only for the
 * items granted, and requeues the others with the wait the budget computed for each.
 */
import {
  AttachVolumeCommand,
  CreateVolumeCommand,
  DescribeInstancesCommand,
  DescribeVolumesCommand,
  EC2Client,
} from '@aws-sdk/client-ec2';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import { BudgetUnavailableError, createMemoryBudget, type BucketKey, type Grant, type RateBudget } from '../../lib/budget/index.js';
import { createBudget } from '../../lib/budget/shared-budget.js';
import type { BucketState } from '../../lib/budget/token-bucket.js';
import { BUDGET_UNAVAILABLE_RETRY_SECONDS, createEc2Gateway, Ec2CallStats } from '../../lib/ec2/index.js';
import type { ReconcileContext } from '../../lib/reconcile/index.js';
import { claim, claimItem, ownedTags, reconcile, setup, NOW } from './fixtures.js';

const ec2Mock = mockClient(EC2Client);
afterEach(() => ec2Mock.reset());

const client = new EC2Client({ region: 'us-east-1', credentials: { accessKeyId: 'a', secretAccessKey: 's' }, maxAttempts: 1 });

/** A budget whose CreateVolume bucket holds 2 tokens and refills one every 2 s, on a clock that stands still. */
function smallCreateBudget(): RateBudget {
  return createMemoryBudget({
    now: () => NOW.getTime(),
    rates: { 'us-east-1': { share: 1, buckets: { CreateVolume: { capacity: 2, refillPerSecond: 0.5 } } } },
  });
}

/** A reconcile context over the SDK gateway, paced by `budget`. */
function pacedContext(budget: RateBudget, stats = new Ec2CallStats()): ReconcileContext {
  const { ctx } = setup();
  return {
    ...ctx,
    ec2: createEc2Gateway({ client, clusterId: ctx.clusterId, batchWindowMs: 0, pacing: { budget, account: '111122223333', region: 'us-east-1' }, observer: stats }),
  };
}

/** `n` protected claims of the fixture class, each with its own uid and name. */
function claims(n: number) {
  return Array.from({ length: n }, (_, i) => {
    const uid = `6f1c2b9e-3d4a-4c5b-9e8f-0a1b2c3d4e${String(i).padStart(2, '0')}`;
    return claimItem({ pvc: claim({ metadata: { name: `data-${i}`, uid } }) });
  });
}

function createdVolume(input: { TagSpecifications?: { Tags?: { Key?: string; Value?: string }[] }[] }, n: number) {
  return {
    VolumeId: `vol-0000000000000000${n}`,
    AvailabilityZone: 'us-east-1a',
    Size: 20,
    State: 'creating' as const,
    VolumeType: 'gp3' as const,
    CreateTime: NOW,
    Tags: input.TagSpecifications?.[0]?.Tags ?? [],
  };
}

describe('pacing EC2 calls with the rate budget', () => {
  it('a request whose items need more tokens than the budget holds makes exactly as many EC2 calls as tokens granted and requeues the rest with the computed wait', async () => {
    ec2Mock.on(DescribeVolumesCommand).resolves({ Volumes: [] });
    let created = 0;
    ec2Mock.on(CreateVolumeCommand).callsFake((input) => createdVolume(input, created++));
    const stats = new Ec2CallStats();
    const ctx = pacedContext(smallCreateBudget(), stats);

    const results = await reconcile(ctx, ...claims(5));

    // Two tokens: two CreateVolume calls, whatever the five items wanted.
    expect(ec2Mock.commandCalls(CreateVolumeCommand)).toHaveLength(2);
    const granted = results.filter((r) => r.outcome === 'requeue' && /is being created/.test(r.message ?? ''));
    const refused = results.filter((r) => r.outcome === 'requeue' && /rate budget/.test(r.message ?? ''));
    expect(granted).toHaveLength(2);
    // The refused wait for their own tokens: the 1st, 2nd and 3rd token after the two, 2 s apart.
    expect(refused.map((r) => r.outcome === 'requeue' && r.requeueAfterSeconds)).toEqual([2, 4, 6]);
    // Nothing but the Normal Provisioning event, decided before the call: no PV, no finalizer.
    expect(refused.flatMap((r) => r.writes).every((w) => w.op === 'createEvent')).toBe(true);
    // One describe served all five items; the token decisions are counted per action.
    expect(ec2Mock.commandCalls(DescribeVolumesCommand)).toHaveLength(1);
    expect(stats.actions.get('CreateVolume')).toMatchObject({ calls: 2, tokensGranted: 2, tokensWaited: 3 });
    expect(stats.actions.get('DescribeVolumes')).toMatchObject({ calls: 1, tokensGranted: 1, tokensWaited: 0 });
  });

  it('the items of one request take their tokens in one step per bucket', async () => {
    ec2Mock.on(DescribeVolumesCommand).resolves({ Volumes: [] });
    let created = 0;
    ec2Mock.on(CreateVolumeCommand).callsFake((input) => createdVolume(input, created++));
    const inner = smallCreateBudget();
    const takes: Array<{ bucket: string; wanted: number }> = [];
    const budget: RateBudget = {
      take: (key, wanted) => {
        takes.push({ bucket: key.bucket, wanted });
        return inner.take(key, wanted);
      },
      throttled: (key) => inner.throttled(key),
    };
    await reconcile(pacedContext(budget), ...claims(5));
    expect(takes).toEqual([
      { bucket: 'DescribeVolumes', wanted: 1 },
      { bucket: 'CreateVolume', wanted: 5 },
    ]);
  });

  it('describes are paced too: no token, no describe, the items requeued with the wait', async () => {
    const noDescribes: RateBudget = {
      take: async (key: BucketKey, wanted: number): Promise<Grant> =>
        key.bucket === 'DescribeVolumes' ? { granted: 0, waitMs: (i) => 1500 + 50 * i } : { granted: wanted, waitMs: () => 0 },
      throttled: async () => undefined,
    };
    const [one] = await reconcile(pacedContext(noDescribes), ...claims(1));
    expect(ec2Mock.calls()).toHaveLength(0);
    expect(one).toMatchObject({ outcome: 'requeue', requeueAfterSeconds: 1.5 });
    // Two items share the one describe the budget refused: the same wait, to the millisecond.
    const two = await reconcile(pacedContext(noDescribes), ...claims(2));
    expect(two.map((r) => r.outcome === 'requeue' && r.requeueAfterSeconds)).toEqual([1.5, 1.5]);
  });

  it('the budget store unreachable -> requeue with a message that says so, and no EC2 call at all', async () => {
    const down: RateBudget = {
      take: async () => {
        throw new BudgetUnavailableError('DynamoDB UpdateItem on table volhook-budget: connect ECONNREFUSED');
      },
      throttled: async () => undefined,
    };
    const results = await reconcile(pacedContext(down), ...claims(2));
    expect(ec2Mock.calls()).toHaveLength(0);
    for (const result of results) {
      expect(result).toMatchObject({ outcome: 'requeue', requeueAfterSeconds: BUDGET_UNAVAILABLE_RETRY_SECONDS, writes: [] });
      expect(result.outcome === 'requeue' && result.message).toMatch(/rate budget could not be read .*ECONNREFUSED.*no EC2 call is made unpaced/);
    }
  });

  it('the store answers a state the arithmetic makes NaN or endless of -> requeue with a finite wait and a message, no EC2 call; a sound state -> the calls', async () => {
    ec2Mock.on(DescribeVolumesCommand).resolves({ Volumes: [] });
    let created = 0;
    ec2Mock.on(CreateVolumeCommand).callsFake((input) => createdVolume(input, created++));
    const holding = (state: BucketState): RateBudget =>
      createBudget({ update: async (_id, step) => step(state).result }, { now: () => NOW.getTime() });
    for (const state of [{ tokens: 0, at: NOW.getTime(), factor: 0 }, { tokens: NaN, at: NOW.getTime(), factor: 1 }]) {
      ec2Mock.resetHistory();
      // reconcile() checks every result against the contract's schema: a wait of NaN or
      // Infinity would be `requeueAfterSeconds: null` on the wire, and fail it.
      const results = await reconcile(pacedContext(holding(state)), ...claims(2));
      expect(ec2Mock.calls()).toHaveLength(0);
      for (const result of results) {
        expect(result).toMatchObject({ outcome: 'requeue', requeueAfterSeconds: BUDGET_UNAVAILABLE_RETRY_SECONDS, writes: [] });
        expect(result.outcome === 'requeue' && result.message).toMatch(/rate budget could not be read .*answered a (grant|wait) of (NaN|Infinity)/);
      }
    }
    ec2Mock.resetHistory();
    await reconcile(pacedContext(holding({ tokens: 100, at: NOW.getTime(), factor: 1 })), ...claims(2));
    expect(ec2Mock.commandCalls(CreateVolumeCommand)).toHaveLength(2);
  });

  it('RequestLimitExceeded from EC2 -> the bucket is told (shared step down) and the item requeued', async () => {
    ec2Mock.on(DescribeVolumesCommand).resolves({
      Volumes: [{ VolumeId: 'vol-0123456789abcdef0', AvailabilityZone: 'us-east-1a', State: 'available', Size: 20, Tags: Object.entries(ownedTags()).map(([Key, Value]) => ({ Key, Value })) }],
    });
    ec2Mock.on(DescribeInstancesCommand).resolves({
      Reservations: [{ Instances: [{ InstanceId: 'i-0aaaaaaaaaaaaaaa1', State: { Name: 'running' }, Placement: { AvailabilityZone: 'us-east-1a' }, Tags: [{ Key: 'kubernetes.io/cluster/alpha', Value: 'owned' }], BlockDeviceMappings: [] }] }],
    });
    ec2Mock.on(AttachVolumeCommand).rejects(Object.assign(new Error('Request limit exceeded.'), { name: 'RequestLimitExceeded', $fault: 'client', $metadata: { httpStatusCode: 503 } }));
    const throttled: string[] = [];
    const inner = createMemoryBudget({ now: () => NOW.getTime() });
    const budget: RateBudget = {
      take: (key, wanted) => inner.take(key, wanted),
      throttled: async (key) => {
        throttled.push(`${key.account}/${key.region}/${key.bucket}`);
        await inner.throttled(key);
      },
    };
    const stats = new Ec2CallStats();
    const { vaItem, ATTACHER_FINALIZER, attachedVolume } = await import('./fixtures.js');
    const item = vaItem({
      volumeAttachment: { metadata: { finalizers: [ATTACHER_FINALIZER], annotations: { 'csi.alpha.kubernetes.io/node-id': 'i-0aaaaaaaaaaaaaaa1' } } },
      pv: attachedVolume({ metadata: { finalizers: ['kubernetes.io/pv-protection', ATTACHER_FINALIZER] } }),
    });
    const [result] = await reconcile(pacedContext(budget, stats), item);
    expect(result).toMatchObject({ outcome: 'requeue', writes: [] });
    expect(result!.outcome === 'requeue' && result!.message).toMatch(/RequestLimitExceeded/);
    expect(throttled).toEqual(['111122223333/us-east-1/AttachVolume']);
    expect(stats.actions.get('AttachVolume')).toMatchObject({ calls: 1, throttles: 1, errors: 0 });
    // The shared bucket is empty now: the next AttachVolume waits for a token.
    const next = await inner.take({ account: '111122223333', region: 'us-east-1', bucket: 'AttachVolume' }, 1);
    expect(next.granted).toBe(0);
  });
});

describe('a gateway that waits for its tokens (the scheduled audit, the CLI)', () => {
  it('more describes than the bucket holds -> each waits for its token and then calls; none fails, none is made without a token', async () => {
    // DescribeVolumes holds 1 token and refills 20 a second (real time): the second and third wait ~50 ms each.
    const budget = createMemoryBudget({ rates: { 'us-east-1': { share: 1, buckets: { DescribeVolumes: { capacity: 1, refillPerSecond: 20 } } } } });
    const takes: number[] = [];
    const counting: RateBudget = {
      take: async (key, wanted) => {
        const grant = await budget.take(key, wanted);
        takes.push(grant.granted);
        return grant;
      },
      throttled: (key) => budget.throttled(key),
    };
    ec2Mock.on(DescribeVolumesCommand).resolves({ Volumes: [] });
    const gateway = createEc2Gateway({ client, clusterId: 'c1', batchWindowMs: 0, pacing: { budget: counting, account: 'a', region: 'us-east-1', waitForTokens: true } });
    const found = await Promise.all(['vol-00000000000000001', 'vol-00000000000000002', 'vol-00000000000000003'].map(async (id, i) => {
      await new Promise((resolve) => setTimeout(resolve, i * 10)); // three separate batches
      return gateway.getDisk(id);
    }));
    expect(found).toEqual([undefined, undefined, undefined]);
    expect(ec2Mock.commandCalls(DescribeVolumesCommand)).toHaveLength(3);
    // Every call was granted a token: three grants of one, and the refusals in between granted none.
    expect(takes.filter((g) => g === 1)).toHaveLength(3);
    expect(takes.some((g) => g === 0)).toBe(true);
  });

  it('without waitForTokens the same refusal fails the call with the budget wait, and EC2 is not called', async () => {
    const budget = createMemoryBudget({ now: () => NOW.getTime(), rates: { 'us-east-1': { share: 1, buckets: { DescribeVolumes: { capacity: 1, refillPerSecond: 0.5 } } } } });
    ec2Mock.on(DescribeVolumesCommand).resolves({ Volumes: [] });
    const gateway = createEc2Gateway({ client, clusterId: 'c1', batchWindowMs: 0, pacing: { budget, account: 'a', region: 'us-east-1' } });
    await gateway.getDisk('vol-00000000000000001');
    await expect(gateway.getDisk('vol-00000000000000002')).rejects.toMatchObject({ code: 'RateBudgetExhausted', retryAfterSeconds: 2 });
    expect(ec2Mock.commandCalls(DescribeVolumesCommand)).toHaveLength(1);
  });
});
