/**
 * Issue 8's acceptance: the crash-point explorer in CI. Randomized, seeded lifecycles
 * (Immediate and WaitForFirstConsumer, Delete and Retain, pods coming and going fast, claims
 * deleted early, forwarder restarts, answers lost after EC2 mutations and after Kubernetes
 * writes, concurrent requests, the audit with --delete running alongside, disks left by gone
 * claims that only the audit can find — in two audits, one that marks and one after a new report
 * that deletes — Retain disks their users took over, which no audit may delete, a clone of a claim
 * on another cluster's disk, never copied, and a pod on a disk of the cluster not adopted, never
 * attached until the operator adopts it, and a pod with an inline in-tree volume (a VolumeAttachment
 * with `inlineVolumeSpec`, no PV) on a disk that is the user's, and a restore's snapshot or a clone's source claim deleted
 * while the new volume may be being made from it, protected until then and let go after, and
 * group snapshots — one CreateSnapshots of the claims one pod uses on one node, a member
 * restored, the group deleted under Delete and Retain, its CreateSnapshots answer lost, a crash
 * applying its content's writes, its item sent twice; the claims on two nodes refused with no
 * EC2 call) over the real app, gateway, EC2 simulator, controllers and
 * `applyWrites`: at least 300 crash points, and every count 0.
 *
 * `CRASH_POINTS` and `CRASH_SEED` change the amount and the first seed; the long run is
 * `npm run test:crash -- --points 3000`, and a failing seed replays with
 * `npm run test:crash -- --seed <seed>`.
 */
import { describe, expect, it } from 'vitest';
import { zeroCounts } from './checks.js';
import { explore, formatFailures, formatSummary } from './explore.js';
import { runOnce } from './run.js';

const POINTS = Number(process.env.CRASH_POINTS ?? 300);
const SEED = Number(process.env.CRASH_SEED ?? 1);

describe('crash-point explorer', () => {
  it(`${POINTS} crash points from seed ${SEED}: 0 leaked, 0 duplicate, 0 wrongly deleted, 0 wrongly detached, 0 attached without a VolumeAttachment, 0 copied foreign, 0 touched not adopted, 0 made from unprotected source, 0 group across nodes snapshotted, 0 copies left behind, every claim and group converged`, async () => {
    const summary = await explore({ points: POINTS, seed: SEED });
    console.log(`${formatSummary(summary)}\n\n${formatFailures(summary)}`);
    expect(summary.points).toBeGreaterThanOrEqual(POINTS);
    expect(summary.counts, formatFailures(summary)).toEqual(zeroCounts());
    // Group snapshots were explored, not only drawn: taken, refused across nodes, restored from,
    // deleted under both policies, with their own crash points fired.
    const g = summary.groups;
    expect(g.createSnapshots).toBeGreaterThan(0);
    expect(g.split).toBeGreaterThan(0);
    expect(g.restores).toBeGreaterThan(0);
    expect(g.deletedDelete).toBeGreaterThan(0);
    expect(g.deletedRetain).toBeGreaterThan(0);
    expect(summary.pointKinds['EC2 answer lost after CreateSnapshots']).toBeGreaterThan(0);
    expect(Object.keys(summary.pointKinds).filter((k) => k.endsWith('of a group content')).length).toBeGreaterThan(0);
    // Cross-Region copies (every snapshot class copies): CopySnapshot answers lost, crashes
    // applying a result that writes the copy's annotation; 0 copies left behind, 0 duplicated.
    expect(summary.pointKinds['EC2 answer lost after CopySnapshot']).toBeGreaterThan(0);
    expect(Object.keys(summary.pointKinds).filter((k) => k.endsWith('writing a copy annotation')).length).toBeGreaterThan(0);
    // Attachments left stuck attaching were given up and made again, some before the driver's 90 s.
    expect(summary.stuckGivenUp).toBeGreaterThan(0);
    expect(summary.stuckGivenUpEarly).toBeGreaterThan(0);
  }, 300_000);

  it('a seed replays its run exactly: the same lifecycle, crash points and trace', async () => {
    const a = await runOnce(SEED + 2);
    const b = await runOnce(SEED + 2);
    expect(a.points.length).toBeGreaterThan(0);
    expect(b.scenario).toBe(a.scenario);
    expect(b.points).toEqual(a.points);
    expect(b.findings).toEqual(a.findings);
    expect(b.trace).toEqual(a.trace);
  }, 60_000);
});
