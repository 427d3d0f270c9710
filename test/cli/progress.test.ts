/** lib/cli/progress.ts: a line at least every 5 s of the (simulated) clock, counts and rate in it, quiet when short. */
import { describe, expect, it } from 'vitest';
import { PROGRESS_EVERY_MS, progressLine, startProgress } from '../../lib/cli/index.js';
import { FakeTimer } from './fake-timer.js';

function reporter(timer: FakeTimer) {
  const lines: Array<{ at: number; line: string }> = [];
  const start = timer.now();
  const progress = startProgress({ label: 'remove c1', write: (line) => lines.push({ at: timer.now() - start, line }), timer });
  return { progress, lines };
}

describe('progress lines', () => {
  it('20 s with nothing done -> a line at 5, 10, 15 and 20 s, then one at the end', () => {
    const timer = new FakeTimer();
    const { progress, lines } = reporter(timer);
    timer.advance(20_000);
    expect(lines.map((l) => l.at)).toEqual([5000, 10_000, 15_000, 20_000]);
    timer.advance(1000);
    progress.finish();
    expect(lines.map((l) => l.at)).toEqual([5000, 10_000, 15_000, 20_000, 21_000]);
    expect(timer.live).toBe(0);
  });

  it('work done in steps of 0.3 s over 62 s -> no gap above 5 s, counts rising to the total, the rate in each', () => {
    const timer = new FakeTimer();
    const { progress, lines } = reporter(timer);
    progress.goal(200, 'disk(s) deleted');
    for (let i = 0; i < 200; i += 1) {
      timer.advance(310);
      progress.call();
      progress.step();
    }
    progress.finish();
    const times = [0, ...lines.map((l) => l.at)];
    const gaps = times.slice(1).map((t, n) => t - times[n]!);
    expect(Math.max(...gaps)).toBeLessThanOrEqual(PROGRESS_EVERY_MS);
    expect(lines.length).toBe(13);
    expect(lines[0]!.line).toBe('remove c1: 16 of 200 disk(s) deleted (3.2/s), 16 EC2 calls in 5 s');
    expect(lines.at(-1)!.line).toBe('remove c1: 200 of 200 disk(s) deleted (3.2/s), 200 EC2 calls in 62 s');
  });

  it('a run shorter than 5 s -> no line at all, not even at the end', () => {
    const timer = new FakeTimer();
    const { progress, lines } = reporter(timer);
    timer.advance(4999);
    progress.call();
    progress.finish();
    expect(lines).toEqual([]);
    // Control: past 5 s the same run writes.
    const longer = reporter(timer);
    timer.advance(5000);
    longer.progress.finish();
    expect(longer.lines).toHaveLength(2);
  });

  it('after finish -> no more lines', () => {
    const timer = new FakeTimer();
    const { progress, lines } = reporter(timer);
    timer.advance(5000);
    progress.finish();
    progress.finish();
    timer.advance(60_000);
    expect(lines).toHaveLength(2);
  });

  it.each([
    ['no goal: the calls and their rate', { label: 'audit c1', calls: 85 }, 12_000, 'audit c1: 85 EC2 calls (7.1/s) in 12 s'],
    ['one call', { label: 'audit c1', calls: 1 }, 5000, 'audit c1: 1 EC2 call (0.2/s) in 5 s'],
    ['a goal: done of total, its own rate', { label: 'adopt c1', calls: 7, goal: { verb: 'tagged', total: 620, done: 300, sinceMs: 4000 } }, 10_000, 'adopt c1: 300 of 620 tagged (50.0/s), 7 EC2 calls in 10 s'],
    ['no time yet', { label: 'audit c1', calls: 0 }, 0, 'audit c1: 0 EC2 calls (-/s) in 0 s'],
  ])('progressLine: %s', (_what, state, now, line) => {
    expect(progressLine(state, 0, now)).toBe(line);
  });
});
