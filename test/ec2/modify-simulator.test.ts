/**
 * The SDK gateway's modification verbs against the EC2 simulator over HTTP: EC2's own answers
 * to a second ModifyVolume (IncorrectModificationState while one is under way,
 * VolumeModificationRateExceeded for a fifth within 24 hours) and the modification's progress.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEc2Client, createEc2Gateway, type Ec2Gateway } from '../../lib/ec2/index.js';
import { startEc2Simulator } from '../../lib/local/ec2/index.js';

let close: () => Promise<void>;
let gw: () => Ec2Gateway;
let stats: () => Record<string, { ok: number; errors: Record<string, number> }>;

beforeAll(async () => {
  // 200× fast: a modification is modifying for 10–25 ms and optimizing for 25–150 ms; 24 h is 432 s.
  const sim = await startEc2Simulator({ port: 0, timeScale: 200, seed: 3, throttling: false });
  const client = createEc2Client({ region: 'us-east-1', endpoint: sim.url, credentials: { accessKeyId: 'a', secretAccessKey: 'b' } });
  gw = () => createEc2Gateway({ client, clusterId: 'c1', batchWindowMs: 1 });
  stats = () => sim.sim.getStats().actions as never;
  close = async () => {
    client.destroy();
    await sim.close();
  };
});
afterAll(async () => close?.());

async function newVolume(): Promise<string> {
  const disk = await gw().createDisk({ name: `pvc-${Math.random().toString(16).slice(2)}`, zone: 'us-east-1a', sizeGiB: 4, type: 'gp3', tags: {} });
  for (let i = 0; i < 100 && (await gw().getDisk(disk.volumeId))?.state !== 'available'; i++) await sleep(10);
  return disk.volumeId;
}

async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (await check()) return;
    await sleep(10);
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('modifications against the simulator', () => {
  it('never modified -> undefined; ModifyVolume -> modifying, then optimizing with the new size visible, then completed', async () => {
    const volumeId = await newVolume();
    expect(await gw().getModification(volumeId)).toBeUndefined();
    const m = await gw().modifyDisk(volumeId, { sizeGiB: 8, iops: 4000 });
    expect(m).toMatchObject({ volumeId, state: 'modifying', target: { sizeGiB: 8, iops: 4000 } });
    await until(async () => (await gw().getModification(volumeId))?.state === 'completed', 'completed');
    expect(await gw().getDisk(volumeId)).toMatchObject({ sizeGiB: 8, iops: 4000 });
  });

  it('the same change sent again (its answer was lost) -> answered by the modification under way, one modification in EC2', async () => {
    const volumeId = await newVolume();
    const before = stats().ModifyVolume?.ok ?? 0;
    await gw().modifyDisk(volumeId, { sizeGiB: 6 });
    const again = await gw().modifyDisk(volumeId, { sizeGiB: 6 });
    expect(again.target.sizeGiB).toBe(6);
    expect((stats().ModifyVolume?.ok ?? 0) - before).toBe(1);
  });

  it('another change while one is under way -> incorrectState; once completed -> accepted; the fifth within 24 hours -> modificationRate, retryAt 24 hours after the first', async () => {
    const volumeId = await newVolume();
    const first = await gw().modifyDisk(volumeId, { sizeGiB: 6 });
    await expect(gw().modifyDisk(volumeId, { throughput: 200 })).rejects.toMatchObject({ kind: 'incorrectState', code: 'IncorrectModificationState' });
    for (const throughput of [200, 210, 220]) {
      await until(async () => (await gw().getModification(volumeId))?.state === 'completed', 'completed');
      await gw().modifyDisk(volumeId, { throughput });
    }
    await until(async () => (await gw().getModification(volumeId))?.state === 'completed', 'completed');
    const refused = await gw().modifyDisk(volumeId, { throughput: 230 }).catch((e: unknown) => e);
    expect(refused).toMatchObject({ kind: 'modificationRate', code: 'VolumeModificationRateExceeded', message: expect.stringContaining('rolling 24-hour period') });
    const scaledDay = (24 * 60 * 60 * 1000) / 200;
    expect((refused as { retryAt?: Date }).retryAt?.getTime()).toBe(Date.parse(first.startTime) + scaledDay);
  });

  it('a size over the type maximum -> invalidParameter, nothing modified', async () => {
    const volumeId = await newVolume();
    await expect(gw().modifyDisk(volumeId, { sizeGiB: 70_000 })).rejects.toMatchObject({ kind: 'invalidParameter' });
    expect(await gw().getModification(volumeId)).toBeUndefined();
  });
});
