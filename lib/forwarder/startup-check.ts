/**
 * Before a replica says it is ready, it asks the backend whether it accepts it (the check,
 * lib/contract/check.ts) — leader or standby alike, so that a rollout of forwarders the backend
 * refuses (a wrong Secret, an unregistered cluster, a contract it does not serve) stops at its
 * first new pod instead of completing with replicas that would be refused once they lead. Asked
 * again, backing off, until accepted — but for the contract's 426, which is final; a backend
 * older than the check (a 404 that is not the app refusing: backend-client.ts `isNoRoute`) cannot say, and is taken at its word. Once accepted, the requests themselves tell (refusal-surface.ts).
 */
import type { BackendRequestError } from './backend-client.js';
import type { Logger } from './logger.js';
import { backoffDelay, type BackoffOptions } from './queue.js';

export interface StartupCheck {
  /** Why this replica may not be ready yet; undefined once the backend accepted it. */
  notReady(): string | undefined;
  stop(): void;
}

export interface StartupCheckDeps {
  check(): Promise<'accepted' | 'unknown'>;
  /** The refusal in the operator's words (cause and fix). */
  describe(err: BackendRequestError): string;
  /** The contract's 426: final, asked no more (refusal-surface.ts takes it from here). */
  onContractRefused(err: BackendRequestError): void;
  logger: Logger;
  backoff: BackoffOptions;
  setTimer?: (fn: () => void, ms: number) => { unref?(): void };
  clearTimer?: (timer: unknown) => void;
}

export function startStartupCheck(deps: StartupCheckDeps): StartupCheck {
  const setTimer = deps.setTimer ?? ((fn, ms) => setTimeout(fn, ms));
  const clearTimer = deps.clearTimer ?? ((timer) => clearTimeout(timer as NodeJS.Timeout));
  let reason: string | undefined = 'not ready: asking the backend whether it accepts this forwarder';
  let failures = 0;
  let timer: unknown;
  let stopped = false;

  async function ask(): Promise<void> {
    try {
      const answer = await deps.check();
      reason = undefined;
      if (answer === 'unknown') deps.logger.info('the backend has no check (older than 0.2.0): readiness does not wait for its answer', {});
    } catch (caught) {
      const err = caught as BackendRequestError;
      if (err.kind === 'contract') {
        deps.onContractRefused(err);
        reason = undefined;
        return;
      }
      const said = `not ready: the backend refuses this forwarder; ${deps.describe(err)}`;
      if (said !== reason) deps.logger.error('the backend refuses this forwarder: not ready until it accepts it', { detail: said });
      reason = said;
      if (stopped) return;
      timer = setTimer(() => void ask(), backoffDelay(++failures, deps.backoff));
      (timer as { unref?(): void }).unref?.();
    }
  }
  void ask();

  return {
    notReady: () => reason,
    stop() {
      stopped = true;
      clearTimer(timer);
    },
  };
}
