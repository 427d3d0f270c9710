/**
 * `remove --delete-volumes` over 620 disks and `audit --json` against the EC2 simulator, on
 * simulated time: every EC2 request costs the progress clock `latencyMs` (a FakeTimer), so the
 * progress lines on stderr are counted against simulated seconds, with no wall-clock wait.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateVolumeCommand, EC2Client } from '@aws-sdk/client-ec2';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { clusterTags, TagKeys } from '../../lib/contract/tags.js';
import { PROGRESS_EVERY_MS, runClusterCli } from '../../lib/cli/index.js';
import { ManualClock, startEc2Simulator, type RunningEc2Simulator } from '../../lib/local/ec2/index.js';
import { FakeTimer } from '../cli/fake-timer.js';

const credentials = { accessKeyId: 'test', secretAccessKey: 'test' };
const PROGRESS = /^(remove|audit|adopt) c1: .*EC2 calls?( \(\d+\.\d\/s\))? in \d+ s$/;

let sim: RunningEc2Simulator;
let dir: string;
const simClock = new ManualClock(Date.UTC(2025, 5, 1, 12));

beforeEach(async () => {
  sim = await startEc2Simulator({ host: '127.0.0.1', port: 0, seed: 11, throttling: false }, simClock);
  dir = mkdtempSync(join(tmpdir(), 'volhook-cli-progress-'));
  expect((await run(new FakeTimer(), 0, 'add', 'c1', '--region', 'us-east-1', '--file', join(dir, 'clusters.json'))).code).toBe(0);
});
afterEach(async () => {
  await sim.close();
});

/** `count` disks of cluster c1; `without` a tag, as volhook made them before it wrote that tag. */
async function seed(count: number, without?: string): Promise<void> {
  const ec2 = new EC2Client({ endpoint: sim.url, region: 'us-east-1', credentials, maxAttempts: 1 });
  const Tags = Object.entries(clusterTags('c1'))
    .filter(([Key]) => Key !== without)
    .map(([Key, Value]) => ({ Key, Value }));
  for (let start = 0; start < count; start += 50) {
    await Promise.all(
      Array.from({ length: Math.min(50, count - start) }, () =>
        ec2.send(new CreateVolumeCommand({ AvailabilityZone: 'us-east-1a', Size: 1, VolumeType: 'gp3', TagSpecifications: [{ ResourceType: 'volume', Tags }] })),
      ),
    );
  }
  ec2.destroy();
  simClock.advance(60_000);
}

/** The CLI with every EC2 request costing `latencyMs` of the progress clock; stderr lines stamped with it. */
async function run(timer: FakeTimer, latencyMs: number, ...argv: string[]) {
  const started = timer.now();
  let stdout = '';
  const stderr: Array<{ at: number; line: string }> = [];
  let partial = '';
  const code = await runClusterCli(argv, {
    stdout: (t) => void (stdout += t),
    stderr(text) {
      const lines = (partial + text).split('\n');
      partial = lines.pop()!;
      for (const line of lines) stderr.push({ at: timer.now() - started, line });
    },
    // The simulator's pace, not AWS's: the budget refills a thousand times faster.
    env: { VOLHOOK_BUDGET_TIME_SCALE: '1000' },
    cwd: dir,
    progressTimer: timer,
    ec2Client(region, endpoint) {
      const client = new EC2Client({ region, endpoint: endpoint ?? sim.url, credentials, maxAttempts: 1 });
      client.middlewareStack.add((next) => async (args) => {
        timer.advance(latencyMs);
        return next(args);
      }, { step: 'initialize', name: 'simulatedLatency' });
      return client;
    },
  });
  return { code, stdout, stderr, ended: timer.now() - started };
}

function progressOf(res: Awaited<ReturnType<typeof run>>) {
  return res.stderr.filter((l) => PROGRESS.test(l.line));
}

describe('progress of long CLI operations, on simulated time', () => {
  it('remove --delete-volumes over 620 disks at 170 ms a request -> a progress line at least every 5 s, counts and rate, the last at the end', async () => {
    await seed(620);
    const timer = new FakeTimer();
    const res = await run(timer, 170, 'remove', 'c1', '--delete-volumes', '--yes', '--file', join(dir, 'clusters.json'), '--reports-dir', join(dir, 'reports'));
    expect(res.stderr.filter((l) => l.line.startsWith('error')).map((l) => l.line)).toEqual([]);
    expect(res.code).toBe(0);
    expect(res.stderr.map((l) => l.line)).toContain('deleted 620 of 620 disk(s) and 0 of 0 snapshot(s); removed registration of cluster "c1" from file ' + join(dir, 'clusters.json') + '.');

    const lines = progressOf(res);
    // Each deletion describes the disk anew, then deletes it: over 200 simulated seconds.
    expect(res.ended).toBeGreaterThan(200_000);
    const times = [0, ...lines.map((l) => l.at), res.ended];
    const gaps = times.slice(1).map((t, n) => t - times[n]!);
    expect(Math.max(...gaps)).toBeLessThanOrEqual(PROGRESS_EVERY_MS);
    expect(lines.length).toBeGreaterThanOrEqual(Math.floor(res.ended / PROGRESS_EVERY_MS));
    const deleting = lines.filter((l) => l.line.includes('of 620 disk(s) and snapshot(s) deleted'));
    expect(deleting.length).toBeGreaterThan(30);
    expect(deleting[0]!.line).toMatch(/^remove c1: \d+ of 620 disk\(s\) and snapshot\(s\) deleted \(\d+\.\d\/s\), \d+ EC2 calls in \d+ s$/);
    expect(deleting.at(-1)!.line).toMatch(/^remove c1: 620 of 620 disk\(s\) and snapshot\(s\) deleted/);
    const counts = deleting.map((l) => Number(/: (\d+) of/.exec(l.line)![1]));
    expect(counts).toEqual([...counts].sort((a, b) => a - b));
    // None on stdout: the tables stay clean.
    expect(res.stdout).not.toMatch(/EC2 calls?/);
  }, 120_000);

  it('control: the same remove over 3 disks, done within 5 s -> no progress line', async () => {
    await seed(3);
    const res = await run(new FakeTimer(), 170, 'remove', 'c1', '--delete-volumes', '--yes', '--file', join(dir, 'clusters.json'), '--reports-dir', join(dir, 'reports'));
    expect(res.code).toBe(0);
    expect(res.ended).toBeLessThan(PROGRESS_EVERY_MS);
    expect(progressOf(res)).toEqual([]);
  });

  it('audit --json at 6 s a request -> progress lines on stderr, stdout one JSON document', async () => {
    await seed(5);
    const res = await run(new FakeTimer(), 6000, 'audit', 'c1', '--json', '--file', join(dir, 'clusters.json'), '--reports-dir', join(dir, 'reports'));
    expect(res.code).toBe(0);
    const lines = progressOf(res);
    expect(lines.length).toBeGreaterThanOrEqual(1);
    expect(lines[0]!.line).toMatch(/^audit c1: \d+ EC2 calls? \(\d+\.\d\/s\) in \d+ s$/);
    expect(res.stdout).not.toMatch(/EC2 calls?/);
    expect(JSON.parse(res.stdout)).toMatchObject({ clusterId: 'c1' });
  });

  it('adopt --apply --json at 3 s a request -> progress lines with the tagged count on stderr, stdout one JSON document', async () => {
    await seed(5, TagKeys.volhookCluster);
    const res = await run(new FakeTimer(), 3000, 'adopt', 'c1', '--apply', '--json', '--pvs', pvFile(), '--file', join(dir, 'clusters.json'));
    expect(res.stderr.filter((l) => l.line.startsWith('error')).map((l) => l.line)).toEqual([]);
    expect(res.code).toBe(0);
    const lines = progressOf(res);
    expect(lines.length).toBeGreaterThanOrEqual(1);
    expect(lines.at(-1)!.line).toMatch(/^adopt c1: 5 of 5 disk\(s\) and snapshot\(s\) tagged \(\d+\.\d\/s\), \d+ EC2 calls in \d+ s$/);
    expect(res.stdout).not.toMatch(/EC2 calls?/);
    expect(JSON.parse(res.stdout)).toMatchObject({ clusterId: 'c1', applied: true });
  });
});

function pvFile(): string {
  const path = join(dir, 'pvs.json');
  writeFileSync(path, JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [] }));
  return path;
}
