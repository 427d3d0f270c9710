/**
 * The gateway's side of the rate budget: before any EC2 call, a token from the shared budget
 * of the call's throttling bucket (per account and Region). The token requests of one request
 * that come within the gateway's batch window are taken together, one `take` per bucket, so a
 * request asks the store once for all the items that reached the same step; the items the
 * budget refused fail as `transient` with the wait the budget computed for each of them, and
 * make no EC2 call.
 */
import DataLoader from 'dataloader';
import type { BucketKey, RateBudget } from '../budget/index.js';
import { bucketFor } from './throttling.js';
import { Ec2Error } from './types.js';

/** The account name of budget keys when none is known (no session, no `VOLHOOK_AWS_ACCOUNT`). */
export const DEFAULT_BUDGET_ACCOUNT = 'default';

/**
 * The account of budget keys for calls made without a session (`VOLHOOK_AWS_ACCOUNT`), else
 * {@link DEFAULT_BUDGET_ACCOUNT}. A session's calls are keyed by its role's account
 * (lib/ec2/cluster-clients.ts).
 */
export function budgetAccount(env: NodeJS.ProcessEnv): string {
  return env.VOLHOOK_AWS_ACCOUNT?.trim() || DEFAULT_BUDGET_ACCOUNT;
}

export interface PacingOptions {
  budget: RateBudget;
  /** The AWS account the EC2 client calls into: its session's role's. */
  account: string;
  /** The Region of the cluster's registration, which the EC2 client is made for. */
  region: string;
  /**
   * Wait for the budget's token instead of failing the call: for work that is not answering a
   * request (the scheduled audit, the CLI), where there is no forwarder to requeue to. The
   * wait is still the budget's: no call is made without a token.
   */
  waitForTokens?: boolean;
}

/** What a gateway reports of each EC2 call and of each token decision; metrics hang here. */
export interface Ec2Observer {
  /** One EC2 call that was made: its latency, and EC2's error code if it failed. */
  call?(action: string, outcome: Ec2CallOutcome): void;
  /** Tokens asked for one action in one step: how many the budget granted and how many wait. */
  tokens?(action: string, granted: number, waited: number): void;
}

export interface Ec2CallOutcome {
  ms: number;
  /** EC2's error code (or the transport's), absent on success. */
  code?: string;
  /** EC2 answered RequestLimitExceeded (or another throttling code). */
  throttled: boolean;
}

/** A store that cannot be reached is asked again this much later, never bypassed. */
export const BUDGET_UNAVAILABLE_RETRY_SECONDS = 5;

/** The error of a call the budget did not grant: transient, with the budget's wait. */
export function notGranted(action: string, bucket: string, waitMs: number): Ec2Error {
  const seconds = Math.max(0, waitMs) / 1000;
  return new Ec2Error(
    'transient',
    'RateBudgetExhausted',
    `EC2 ${action}: not called: the rate budget of bucket ${bucket} has no token now; the next is there in ${seconds.toFixed(1)} s`,
    action,
    seconds,
  );
}

/** The error of a call not made because the budget's store could not be asked. */
export function budgetUnavailable(action: string, cause: unknown): Ec2Error {
  const why = cause instanceof Error ? cause.message : String(cause);
  const error = new Ec2Error(
    'transient',
    'RateBudgetUnavailable',
    `EC2 ${action}: not called: the rate budget could not be read (${why}); no EC2 call is made unpaced, the item is tried again in ${BUDGET_UNAVAILABLE_RETRY_SECONDS} s`,
    action,
    BUDGET_UNAVAILABLE_RETRY_SECONDS,
  );
  error.cause = cause;
  return error;
}

export class Pacer {
  readonly #tokens: DataLoader<string, true>;

  constructor(
    private readonly options: PacingOptions,
    batchScheduleFn: (dispatch: () => void) => void,
    private readonly observer: Ec2Observer = {},
  ) {
    this.#tokens = new DataLoader<string, true>((actions) => this.#takeAll(actions), { cache: false, batchScheduleFn });
  }

  /** Resolves once the budget granted a token for one call of `action`; rejects with an Ec2Error otherwise. */
  async take(action: string): Promise<void> {
    for (;;) {
      try {
        await this.#tokens.load(action);
        return;
      } catch (error) {
        if (!this.options.waitForTokens || !(error instanceof Ec2Error) || error.code !== 'RateBudgetExhausted') throw error;
        await new Promise((resolve) => setTimeout(resolve, (error.retryAfterSeconds ?? 1) * 1000));
      }
    }
  }

  /** EC2 throttled `action` all the same: the shared rate of its bucket steps down. Never throws. */
  async throttled(action: string): Promise<void> {
    try {
      await this.options.budget.throttled(this.#key(bucketFor(action)));
    } catch {
      // The next take meets the same store and says so; the call's own error is what matters here.
    }
  }

  #key(bucket: string): BucketKey {
    return { account: this.options.account, region: this.options.region, bucket };
  }

  /** One `take` per bucket for every token asked in this batch; the first asked are granted first. */
  async #takeAll(actions: readonly string[]): Promise<Array<true | Ec2Error>> {
    const answers: Array<true | Ec2Error> = new Array(actions.length);
    const byBucket = new Map<string, number[]>();
    actions.forEach((action, i) => {
      const bucket = bucketFor(action);
      const slots = byBucket.get(bucket) ?? [];
      slots.push(i);
      byBucket.set(bucket, slots);
    });
    await Promise.all(
      [...byBucket].map(async ([bucket, slots]) => {
        try {
          const grant = await this.options.budget.take(this.#key(bucket), slots.length);
          const granted = Math.max(0, Math.min(slots.length, grant.granted));
          slots.forEach((slot, n) => {
            answers[slot] = n < granted ? true : notGranted(actions[slot]!, bucket, grant.waitMs(n - granted));
          });
          this.#count(actions, slots, granted);
        } catch (error) {
          // BudgetUnavailableError or anything else the store threw: no call without a token.
          for (const slot of slots) answers[slot] = budgetUnavailable(actions[slot]!, error);
          this.#count(actions, slots, 0);
        }
      }),
    );
    return answers;
  }

  #count(actions: readonly string[], slots: readonly number[], granted: number): void {
    if (!this.observer.tokens) return;
    const perAction = new Map<string, { granted: number; waited: number }>();
    slots.forEach((slot, n) => {
      const action = actions[slot]!;
      const entry = perAction.get(action) ?? { granted: 0, waited: 0 };
      if (n < granted) entry.granted++;
      else entry.waited++;
      perAction.set(action, entry);
    });
    for (const [action, { granted: g, waited }] of perAction) this.observer.tokens(action, g, waited);
  }
}
