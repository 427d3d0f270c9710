/**
 * Counts of one request's EC2 calls and token decisions, per EC2 action: what the backend's
 * metrics publish (`Ec2Calls`, `Ec2Throttles`, `Ec2Errors`, `Ec2LatencyMs`,
 * `BudgetTokensGranted`, `BudgetTokensWaited`, dimension `Action`).
 */
import type { Ec2CallOutcome, Ec2Observer } from './pacing.js';

export interface ActionCounts {
  calls: number;
  throttles: number;
  /** Error answers other than throttling. */
  errors: number;
  /** Those errors by EC2's code (or the transport's). */
  errorCodes: Record<string, number>;
  latenciesMs: number[];
  tokensGranted: number;
  tokensWaited: number;
  /** Steps in which tokens were asked for (one store write each with the DynamoDB budget). */
  takes: number;
}

export class Ec2CallStats implements Ec2Observer {
  readonly actions = new Map<string, ActionCounts>();

  call(action: string, outcome: Ec2CallOutcome): void {
    const counts = this.#of(action);
    counts.calls++;
    if (outcome.throttled) counts.throttles++;
    else if (outcome.code !== undefined) {
      counts.errors++;
      counts.errorCodes[outcome.code] = (counts.errorCodes[outcome.code] ?? 0) + 1;
    }
    counts.latenciesMs.push(outcome.ms);
  }

  tokens(action: string, granted: number, waited: number): void {
    const counts = this.#of(action);
    counts.tokensGranted += granted;
    counts.tokensWaited += waited;
    counts.takes++;
  }

  /** Adds another's counts into this one (a process-wide total, say). */
  merge(other: Ec2CallStats): void {
    for (const [action, c] of other.actions) {
      const into = this.#of(action);
      into.calls += c.calls;
      into.throttles += c.throttles;
      into.errors += c.errors;
      for (const [code, n] of Object.entries(c.errorCodes)) into.errorCodes[code] = (into.errorCodes[code] ?? 0) + n;
      into.latenciesMs.push(...c.latenciesMs);
      into.tokensGranted += c.tokensGranted;
      into.tokensWaited += c.tokensWaited;
      into.takes += c.takes;
    }
  }

  #of(action: string): ActionCounts {
    let counts = this.actions.get(action);
    if (!counts) {
      counts = { calls: 0, throttles: 0, errors: 0, errorCodes: {}, latenciesMs: [], tokensGranted: 0, tokensWaited: 0, takes: 0 };
      this.actions.set(action, counts);
    }
    return counts;
  }
}
