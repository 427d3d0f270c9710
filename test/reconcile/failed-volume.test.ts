/**
 * A claim whose volume went to `error` (a KMS key it may not use, say) must be provisioned
 * once the cause is gone: the real gateway and the EC2 simulator, which, as EC2, keeps
 * answering a spent ClientToken with its dead volume.
 */
import { EC2Client } from '@aws-sdk/client-ec2';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { Result } from '../../lib/contract/index.js';
import { createEc2Gateway } from '../../lib/ec2/index.js';
import { ManualClock, startEc2Simulator, type RunningEc2Simulator } from '../../lib/local/ec2/index.js';
import { claimItem, reconcile, setup } from './fixtures.js';

let sim: RunningEc2Simulator;
let client: EC2Client;
const clock = new ManualClock(Date.UTC(2025, 2, 1, 12));

beforeEach(async () => {
  sim = await startEc2Simulator({ host: '127.0.0.1', port: 0, seed: 3 }, clock);
  client = new EC2Client({ endpoint: sim.url, region: 'us-east-1', credentials: { accessKeyId: 'test', secretAccessKey: 'test' }, maxAttempts: 1 });
});
afterEach(async () => {
  client.destroy();
  await sim.close();
});

it('volume went to error, then the fault is removed -> the claim is provisioned within two reconciles, on a new volume', async () => {
  const { ctx } = setup();
  const item = claimItem({ storageClass: { parameters: { type: 'gp3', encrypted: 'true', kmsKeyId: 'arn:aws:kms:us-east-1:123456789012:key/sim-error-1' } } });
  const run = async (): Promise<Result> => {
    const ec2 = createEc2Gateway({ client, clusterId: ctx.clusterId, batchWindowMs: 0 });
    const [result] = await reconcile({ ...ctx, ec2 }, item);
    return result!;
  };

  expect((await run()).outcome).toBe('requeue');
  clock.advance(60_000);
  const [failed] = sim.sim.volumes();
  expect(failed?.state).toBe('error');
  // volhook deletes the failed volume (and says so); EC2 keeps its ClientToken bound to it.
  expect(await run()).toMatchObject({ outcome: 'failed', reason: 'VolumeCreationFailed' });
  clock.advance(60_000);
  expect(sim.sim.volumes()).toEqual([]);

  sim.sim.configure({ createFaults: [] });
  const first = await run();
  expect(first.outcome).toBe('requeue');
  clock.advance(60_000);
  const second = await run();

  expect(second.outcome).toBe('done');
  const pv = second.writes.find((w) => w.op === 'createPersistentVolume');
  const handle = pv?.op === 'createPersistentVolume' ? pv.pv.spec.csi?.volumeHandle : undefined;
  expect(handle).toMatch(/^vol-/);
  expect(handle).not.toBe(failed!.id);
  expect(sim.sim.volumes().map((v) => [v.id, v.state])).toEqual([[handle, 'available']]);
});
