import { DescribeVolumesCommand, EC2Client } from '@aws-sdk/client-ec2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEc2Simulator, type RunningEc2Simulator } from '../../../lib/local/ec2/index.js';

let sim: RunningEc2Simulator;
let ec2: EC2Client;
beforeAll(async () => {
  sim = await startEc2Simulator({ region: 'us-east-1', seed: 1 });
  ec2 = new EC2Client({ region: 'us-east-1', endpoint: sim.url, credentials: { accessKeyId: 'x', secretAccessKey: 'x' } });
});
afterAll(async () => {
  ec2?.destroy();
  await sim?.close();
});

describe('seeding volumes (POST /_sim/volumes)', () => {
  it('three tagged volumes made two hours ago -> available, with their tags and that CreateTime, listed by the tag filter', async () => {
    const createdAt = '2026-01-01T10:00:00.000Z';
    const response = await fetch(`${sim.url}/_sim/volumes`, {
      method: 'POST',
      body: JSON.stringify({ zone: 'us-east-1b', sizeGiB: 7, tags: { 'kubernetes.io/cluster/seeded': 'owned' }, createdAt, count: 3 }),
    });
    expect(response.status).toBe(201);
    const seeded = (await response.json()) as { id: string }[];
    expect(seeded).toHaveLength(3);
    const { Volumes } = await ec2.send(new DescribeVolumesCommand({ Filters: [{ Name: 'tag:kubernetes.io/cluster/seeded', Values: ['owned'] }] }));
    expect(Volumes?.map((v) => v.VolumeId).sort()).toEqual(seeded.map((v) => v.id).sort());
    for (const v of Volumes ?? []) {
      expect(v).toMatchObject({ State: 'available', Size: 7, AvailabilityZone: 'us-east-1b', VolumeType: 'gp3' });
      expect(v.CreateTime?.toISOString()).toBe(createdAt);
    }
  });

  it('a zone the simulated Region lacks, or a malformed body -> 400 naming the problem, nothing made', async () => {
    const before = sim.sim.volumes().length;
    const bad = await fetch(`${sim.url}/_sim/volumes`, { method: 'POST', body: JSON.stringify({ zone: 'eu-west-1a' }) });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: string }).error).toContain('eu-west-1a');
    const malformed = await fetch(`${sim.url}/_sim/volumes`, { method: 'POST', body: JSON.stringify({ zone: 'us-east-1a', sizeGiB: -1 }) });
    expect(malformed.status).toBe(400);
    expect(sim.sim.volumes()).toHaveLength(before);
  });
});
