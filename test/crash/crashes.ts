/**
 * Fires the crash points a scenario planned, when their moment comes, and records the ones
 * that fired: a planned point whose moment never comes (a third DeleteVolume in a run with
 * two) is not counted.
 */
import { describeCrash, type CrashPlan } from './scenario.js';
import type { Mutation } from './ec2-transport.js';

export class CrashController {
  /** Descriptions of the points that fired, in order. */
  readonly injected: string[] = [];
  private readonly mutations = new Map<string, number>();
  private resultsWithWrites = 0;
  private groupResultsWithWrites = 0;
  private copyResultsWithWrites = 0;
  private readonly done = new Set<CrashPlan>();

  constructor(private readonly plan: readonly CrashPlan[]) {}

  private fire(plan: CrashPlan, detail: string): void {
    this.done.add(plan);
    this.injected.push(`${describeCrash(plan)}${detail ? ` — ${detail}` : ''}`);
  }

  /** A step-triggered point not fired yet whose step has come (it waits for a step where it applies). */
  private due<K extends 'restart' | 'duplicate' | 'leftover'>(kind: K, step: number): Extract<CrashPlan, { kind: K }> | undefined {
    return this.plan.find((p): p is Extract<CrashPlan, { kind: K }> => p.kind === kind && p.step <= step && !this.done.has(p));
  }

  /** A mutation EC2 carried out; true: lose its answer. */
  afterMutation(action: Mutation, detail: string): boolean {
    const n = (this.mutations.get(action) ?? 0) + 1;
    this.mutations.set(action, n);
    const plan = this.plan.find((p) => p.kind === 'lostEc2' && p.action === action && p.nth === n);
    if (!plan) return false;
    this.fire(plan, detail);
    return true;
  }

  /**
   * A result with `writes` writes is about to be applied (`group`: of a VolumeGroupSnapshotContent
   * item; `copy`: one writing a content's copy annotation); a number: apply that many, then crash.
   */
  beforeWrites(writes: number, detail: string, group = false, copy = false): number | undefined {
    if (writes === 0) return undefined;
    const n = ++this.resultsWithWrites;
    const g = group ? ++this.groupResultsWithWrites : 0;
    const c = copy ? ++this.copyResultsWithWrites : 0;
    const plan = this.plan.find(
      (p): p is Extract<CrashPlan, { kind: 'lostWrites' }> =>
        p.kind === 'lostWrites' && !this.done.has(p) && (p.group ? group && p.nth === g : p.copy ? copy && p.nth === c : p.nth === n),
    );
    if (!plan) return undefined;
    const cut = Math.min(writes, Math.floor(plan.cut * (writes + 1)));
    this.fire(plan, `${detail}: ${cut} of ${writes} writes applied`);
    return cut;
  }

  /** A restart due at this step (from its planned step on, at the first step the forwarder runs). */
  restartAt(step: number): Extract<CrashPlan, { kind: 'restart' }> | undefined {
    return this.due('restart', step);
  }

  /**
   * A duplicate send due at this step (from its planned step on, at the first step with items;
   * one of a group content's item, at the first step with such an item: `groupItem`).
   */
  duplicateAt(step: number, groupItem: boolean): Extract<CrashPlan, { kind: 'duplicate' }> | undefined {
    return this.plan.find(
      (p): p is Extract<CrashPlan, { kind: 'duplicate' }> => p.kind === 'duplicate' && p.step <= step && !this.done.has(p) && (!p.group || groupItem),
    );
  }

  /** A leftover disk due at this step. */
  leftoverAt(step: number): Extract<CrashPlan, { kind: 'leftover' }> | undefined {
    return this.due('leftover', step);
  }

  claimRace(claim: string): Extract<CrashPlan, { kind: 'claimRace' }> | undefined {
    return this.plan.find((p): p is Extract<CrashPlan, { kind: 'claimRace' }> => p.kind === 'claimRace' && p.claim === claim && !this.done.has(p));
  }

  /** Records a step- or claim-triggered point that fired. */
  fired(plan: CrashPlan, detail = ''): void {
    this.fire(plan, detail);
  }
}
