/**
 * The effectful loop every reconciler runs: observe the cloud, decide, act, observe the
 * result of the action, decide again — until a decision ends the reconcile. Level-triggered:
 * a reconciler that finds everything converged decides `done` before acting at all.
 */
import type { Write } from '../contract/index.js';
import { Ec2Error } from '../ec2/types.js';
import { Requeue, verdictForEc2Error } from './outcomes.js';
import type { Ec2Action, Plan, Settled, Verdict } from './plan.js';

// Not `import … from 'node:util'`: the ES module form of node:util reads every export of it,
// loading a dozen of Node's internal modules (worker_threads, parseArgs, diff…) into every
// cold start of the function for this one function.
const { isDeepStrictEqual } = process.getBuiltinModule('node:util');

export interface Reconciler<O, A extends Ec2Action> {
  /** Reads what the cloud says now, through the gateway. */
  observe(): Promise<O>;
  /** Pure: what to do next, given what was observed. */
  decide(observed: O): Plan<A>;
  /** Takes the action and returns what is observed after it, without reading again. */
  perform(action: A, observed: O): Promise<O>;
  /**
   * Pure: what it means that EC2 refused the action (any error but a transient one), given
   * the verdict `verdictForEc2Error` gives it. Usually that verdict plus writes that record it.
   */
  refused(action: A, error: Ec2Error, verdict: Verdict, observed: O): Plan<A>;
}

/**
 * More actions than any reconciler needs in one request (create then read; a few device
 * names refused in a row): past it, hand back to the forwarder rather than loop.
 */
const MAX_ACTIONS = 6;

/**
 * Runs `reconciler` to a verdict. `writes` are decided before the cloud was read and hold
 * whatever happens next. Writes accumulate in the order decided; a write decided again after
 * an action (the same finalizer, say) appears once. A transient gateway error ends the
 * reconcile as a requeue that keeps the writes decided so far and adds none.
 */
export async function converge<O, A extends Ec2Action>(reconciler: Reconciler<O, A>, writes: Write[] = []): Promise<Settled> {
  const all: Write[] = [];
  append(all, writes);
  let observed: O;
  try {
    observed = await reconciler.observe();
  } catch (error) {
    if (error instanceof Ec2Error) return { verdict: verdictForEc2Error(error), writes: all };
    throw error;
  }
  let plan = reconciler.decide(observed);
  for (let actions = 0; ; actions++) {
    append(all, plan.writes);
    if ('verdict' in plan) return { verdict: plan.verdict, writes: all };
    if (actions === MAX_ACTIONS) {
      const message = `gave up after ${MAX_ACTIONS} EC2 actions in one request; next: ${plan.action.verb}`;
      return { verdict: { outcome: 'requeue', requeueAfterSeconds: Requeue.inTransition, message }, writes: all };
    }
    const { action } = plan;
    try {
      observed = await reconciler.perform(action, observed);
      plan = reconciler.decide(observed);
    } catch (error) {
      if (!(error instanceof Ec2Error)) throw error;
      const verdict = verdictForEc2Error(error, action.verb);
      plan = error.kind === 'transient' ? { writes: [], verdict } : reconciler.refused(action, error, verdict, observed);
    }
  }
}

function append(into: Write[], writes: readonly Write[]): void {
  for (const write of writes) if (!into.some((w) => isDeepStrictEqual(w, write))) into.push(write);
}
