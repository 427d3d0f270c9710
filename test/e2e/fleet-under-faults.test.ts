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
 * Attachments stuck `attaching` at a tenth of the attaches (the bench's share is 0.5 %: a
 * 60-attach run would often have none): each is given up once a later attach to its node has
 * finished, or after 90 s ÷ 10 (lib/reconcile/stuck-attachment.ts), and attached again.
 */
import { describe, expect, it } from 'vitest';
import { runFleet } from '../../bench/lib/fleet-faults.js';
import { FLEET_JUDGES } from '../../bench/lib/fleet-report.js';

describe('a fleet under load and faults (seeded, small)', () => {
  it('every claim Bound, attached (stuck attaches given up and made again) and its pod Running, then all deleted: 0 leaked, duplicated, wrongly deleted or detached, attached without a VolumeAttachment, not converged', async () => {
    const lines: string[] = [];
    const result = await runFleet({
      clusters: 2,
      perCluster: 30,
      backends: 2,
      timeScale: 10,
      seed: 26,
      faults: true,
      rates: { stuckAttach: 0.1 },
      timeoutMs: 240_000,
      log: (line) => lines.push(line),
    });
    const context = [...result.findings, ...lines].join('\n');
    for (const judge of FLEET_JUDGES) expect(result.counts[judge], `${judge}\n${context}`).toBe(0);
    // Each fault and disruption happened: a run without them would prove nothing.
    expect(Object.keys(result.faults.refused).sort(), context).toEqual(['InternalError', 'Unavailable']);
    expect(Object.values(result.faults.lostAnswers).reduce((a, b) => a + b, 0), context).toBeGreaterThan(0);
    expect(result.faults.watchesExpired, context).toBeGreaterThan(0);
    expect(result.faults.stuckAttachments, context).toBeGreaterThan(0);
    expect(result.disruptions.map((d) => d.what).join('\n'), context).toMatch(/SIGKILL forwarder leader[\s\S]*SIGKILL backend[\s\S]*expired [1-9]/);
  }, 600_000);
});
