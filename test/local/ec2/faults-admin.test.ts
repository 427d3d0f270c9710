import { CreateVolumeCommand, DescribeAvailabilityZonesCommand, DescribeVolumesCommand } from '@aws-sdk/client-ec2';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Ec2Simulator, ManualClock } from '../../../lib/local/ec2/index.js';
import { expectEc2Error, simsClosedAfterEach, startTestSim, ZONE, type TestSim } from './helpers.js';

const sim = simsClosedAfterEach();

describe('fault injection', () => {
  it('InternalError fault at rate 1 -> 500 InternalError through the SDK', async () => {
    const t = await sim({ faults: { DescribeVolumes: { rate: 1, code: 'InternalError' } } });
    await expectEc2Error(t.ec2.send(new DescribeVolumesCommand({})), 'InternalError', 500);
    const zones = await t.ec2.send(new DescribeAvailabilityZonesCommand({}));
    expect(zones.AvailabilityZones).toHaveLength(3);
  });

  it('RequestLimitExceeded fault -> 503 RequestLimitExceeded, which the SDK retries as throttling', async () => {
    const t = await sim({ faults: { '*': { rate: 1, code: 'RequestLimitExceeded' } } });
    await expectEc2Error(t.ec2.send(new DescribeVolumesCommand({})), 'RequestLimitExceeded', 503);
    const stats = t.sim.getStats().actions.DescribeVolumes;
    expect(stats).toMatchObject({ calls: 1, throttled: 0, errors: { RequestLimitExceeded: 1 } });
  });

  it('rate 0.2 over 1000 calls -> about 200 errors; the same seed -> the same calls fail', async () => {
    const outcomes = async (seed: number) => {
      const s = new Ec2Simulator({ seed, throttling: false, faults: { DescribeVolumes: { rate: 0.2, code: 'InternalError' } } }, new ManualClock());
      const codes: (string | undefined)[] = [];
      for (let i = 0; i < 1000; i++) codes.push((await s.call({ Action: 'DescribeVolumes' })).code);
      return codes;
    };
    const a = await outcomes(42);
    const failed = a.filter((c) => c === 'InternalError').length;
    expect(failed).toBeGreaterThan(150);
    expect(failed).toBeLessThan(250);
    expect(await outcomes(42)).toEqual(a);
    expect(await outcomes(43)).not.toEqual(a);
  });

  it('latency spike of 2 s at time scale 10 -> the answer takes at least 200 ms', async () => {
    const t = await sim({ timeScale: 10, faults: { DescribeAvailabilityZones: { rate: 1, delayMs: 2000 } } });
    const start = Date.now();
    await t.ec2.send(new DescribeAvailabilityZonesCommand({}));
    expect(Date.now() - start).toBeGreaterThanOrEqual(195);
  });

  it('error after the action (lost response) -> volume exists; the retry with the same token gets it', async () => {
    const clock = new ManualClock();
    const t = await sim({ throttling: false, faults: { CreateVolume: { rate: 1, code: 'InternalError', phase: 'after' } } }, clock);
    const input = { AvailabilityZone: ZONE, Size: 3, ClientToken: 'lost-response' };
    await expectEc2Error(t.ec2.send(new CreateVolumeCommand(input)), 'InternalError', 500);
    expect(t.sim.volumes()).toHaveLength(1);
    t.sim.setFaults({});
    const retry = await t.ec2.send(new CreateVolumeCommand(input));
    expect(retry.VolumeId).toBe(t.sim.volumes()[0]?.id);
    expect(t.sim.volumes()).toHaveLength(1);
  });
});

describe('admin endpoints', () => {
  const post = (url: string, body?: unknown) =>
    fetch(url, { method: 'POST', body: body === undefined ? undefined : JSON.stringify(body), headers: { 'content-type': 'application/json' } });

  it('GET /_sim/stats -> calls, throttled and errors by code per action, when the first and last good call came; POST /_sim/reset-stats clears them', async () => {
    const clock = new ManualClock();
    const t = await sim({ throttling: { buckets: { DescribeAvailabilityZones: { capacity: 1, refillPerSecond: 0.001 } } } }, clock);
    await post(`${t.url}/_sim/reset-stats`);
    clock.advance(1_500);
    await t.ec2.send(new DescribeAvailabilityZonesCommand({}));
    clock.advance(2_000);
    await expectEc2Error(t.ec2.send(new DescribeAvailabilityZonesCommand({})), 'RequestLimitExceeded', 503);
    await expectEc2Error(t.ec2.send(new DescribeVolumesCommand({ VolumeIds: ['vol-0123456789abcdef0'] })), 'InvalidVolume.NotFound');
    const stats = (await (await fetch(`${t.url}/_sim/stats`)).json()) as {
      total: { calls: number };
      actions: Record<string, { calls: number; ok: number; throttled: number; errors: Record<string, number>; firstOkMs?: number; lastOkMs?: number }>;
    };
    expect(stats.actions.DescribeAvailabilityZones).toEqual({ calls: 2, ok: 1, throttled: 1, errors: { RequestLimitExceeded: 1 }, firstOkMs: 1_500, lastOkMs: 1_500 });
    expect(stats.actions.DescribeVolumes).toEqual({ calls: 1, ok: 0, throttled: 0, errors: { 'InvalidVolume.NotFound': 1 } });
    expect(stats.total.calls).toBe(3);
    await post(`${t.url}/_sim/reset-stats`);
    const after = (await (await fetch(`${t.url}/_sim/stats`)).json()) as { total: { calls: number }; actions: object };
    expect(after.total.calls).toBe(0);
    expect(after.actions).toEqual({});
  });

  it('POST /_sim/config -> faults, throttling and time scale change at run time', async () => {
    const t = await sim({}, new ManualClock());
    const res = await post(`${t.url}/_sim/config`, { timeScale: 20, throttling: false, faults: { DescribeVolumes: { rate: 1, code: 'Unavailable' } } });
    expect(res.status).toBe(200);
    const cfg = (await res.json()) as { timeScale: number; throttling: { enabled: boolean } };
    expect(cfg.timeScale).toBe(20);
    expect(cfg.throttling.enabled).toBe(false);
    await expectEc2Error(t.ec2.send(new DescribeVolumesCommand({})), 'Unavailable', 503);
    for (let i = 0; i < 120; i++) expect((await t.sim.call({ Action: 'DescribeAvailabilityZones' })).status).toBe(200);
    expect((await post(`${t.url}/_sim/config`, { timeScale: -1 })).status).toBe(400);
  });

  it('POST /_sim/instances, GET /_sim/state, POST /_sim/reset -> node created, dumped, forgotten', async () => {
    const t = await sim({}, new ManualClock());
    const res = await post(`${t.url}/_sim/instances`, { zone: 'us-east-1b' });
    expect(res.status).toBe(201);
    const instance = (await res.json()) as { id: string; state: string; zone: string };
    expect(instance).toMatchObject({ state: 'running', zone: 'us-east-1b' });
    const state = (await (await fetch(`${t.url}/_sim/state`)).json()) as { instances: { id: string }[]; volumes: unknown[] };
    expect(state.instances.map((i) => i.id)).toEqual([instance.id]);
    expect(state.volumes).toHaveLength(1); // its root volume
    await post(`${t.url}/_sim/reset`);
    expect(t.sim.instances()).toEqual([]);
    expect((await fetch(`${t.url}/_sim/nope`)).status).toBe(404);
  });

  it('unknown action -> InvalidAction; no Action -> MissingAction', async () => {
    const t = await sim({}, new ManualClock());
    const res = await fetch(t.url, { method: 'POST', body: 'Action=LaunchRocket&Version=2016-11-15', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(res.status).toBe(400);
    const xml = await res.text();
    expect(xml).toContain('<Code>InvalidAction</Code>');
    expect(xml).toMatch(/<RequestID>[0-9a-f-]{36}<\/RequestID>/);
    expect(res.headers.get('x-amzn-requestid')).toMatch(/^[0-9a-f-]{36}$/);
    expect((await t.sim.call({ Version: '2016-11-15' })).code).toBe('MissingAction');
  });
});

describe('persistence', () => {
  it('restart on the same stateDir -> volumes, instances and pending transitions resume', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'volhook-ec2-'));
    const clock = new ManualClock();
    let second: TestSim | undefined;
    try {
      const first = await startTestSim({ stateDir: dir, throttling: false }, clock);
      const node = first.sim.runInstance({ zone: ZONE, instanceTags: [{ key: 'k', value: 'v' }] });
      const v = await first.ec2.send(new CreateVolumeCommand({ AvailabilityZone: ZONE, Size: 7, ClientToken: 'persisted' }));
      await first.close();

      second = await startTestSim({ stateDir: dir, throttling: false }, clock);
      expect(second.sim.instance(node.id)?.tags).toEqual([{ key: 'k', value: 'v' }]);
      expect(second.sim.volume(v.VolumeId!)?.state).toBe('creating');
      clock.advance(15_000);
      expect(second.sim.volume(v.VolumeId!)?.state).toBe('available');
      const again = await second.ec2.send(new CreateVolumeCommand({ AvailabilityZone: ZONE, Size: 7, ClientToken: 'persisted' }));
      expect(again.VolumeId).toBe(v.VolumeId);
    } finally {
      await second?.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
