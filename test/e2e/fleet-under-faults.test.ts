/**
 * The seeded, small version of the bench's scenario (d), a fleet under faults
 * (bench/lib/fleet-faults.ts; `npm run bench -- --only d` runs 3 × 300 claims): two clusters,
 * 30 claims with a pod each, two backend processes sharing the budget and replay tables in
 * moto's DynamoDB; EC2 refusing calls (InternalError, Unavailable) and losing answers after it
 * acted, a forwarder leader and a backend SIGKILLed and a claims watch expired (410) mid-burst;
 * then everything deleted. The crash explorer's judges watch every EC2 call and read each
 * cluster at the end. Judged by them alone: no bound on the time taken but the scenario's own
 * (a timeout is counted not converged).
 *
 * Stuck attachments are the bench's only (its share 0.5 %): the backend gives one 90 s of its
 * own time (STUCK_ATTACHING_MS, not time-scaled) before detaching it, which would be most of
 * this test's time; the judge that allows that detach is tested in test/crash/judges.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { runFleet } from '../../bench/lib/fleet-faults.js';
import { FLEET_JUDGES } from '../../bench/lib/fleet-report.js';

describe('a fleet under load and faults (seeded, small)', () => {
  it('every claim Bound, attached and its pod Running, then all deleted: 0 leaked, duplicated, wrongly deleted or detached, attached without a VolumeAttachment, not converged', async () => {
    const lines: string[] = [];
    const result = await runFleet({
      clusters: 2,
      perCluster: 30,
      backends: 2,
      timeScale: 10,
      seed: 26,
      faults: true,
      rates: { stuckAttach: 0 },
      timeoutMs: 240_000,
      log: (line) => lines.push(line),
    });
    const context = [...result.findings, ...lines].join('\n');
    for (const judge of FLEET_JUDGES) expect(result.counts[judge], `${judge}\n${context}`).toBe(0);
    // Each fault and disruption happened: a run without them would prove nothing.
    expect(Object.keys(result.faults.refused).sort(), context).toEqual(['InternalError', 'Unavailable']);
    expect(Object.values(result.faults.lostAnswers).reduce((a, b) => a + b, 0), context).toBeGreaterThan(0);
    expect(result.faults.watchesExpired, context).toBeGreaterThan(0);
    expect(result.disruptions.map((d) => d.what).join('\n'), context).toMatch(/SIGKILL forwarder leader[\s\S]*SIGKILL backend[\s\S]*expired [1-9]/);
  }, 600_000);
});
