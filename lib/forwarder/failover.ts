/**
 * Which backend a request goes to, when the forwarder knows more than one (`VOLHOOK_API_URL`,
 * then `VOLHOOK_STANDBY_API_URLS`, in order). Any backend can serve any cluster at any time:
 * the durable state is in the Kubernetes objects and EBS tags, and every request is
 * level-triggered and idempotent (ClientTokens, look-up by tags), so a batch whose answer was
 * lost at one backend may be sent again to another.
 *
 * The forwarder moves on only when a backend is unavailable — no answer at all, or a 5xx —
 * never on a refusal (401, 403, 404, 409, another 4xx, the contract's 426): a refusal is a
 * backend that answers, and says something another backend must not be asked to overrule.
 * Back on the first URL once its check (lib/contract/check.ts) is accepted again.
 */
import type { BackendRequestError } from './backend-client.js';
import { refusalOf } from './backend-refusals.js';
import type { Logger } from './logger.js';

/**
 * The backend gave no usable service, as opposed to refusing: the same causes the refusal
 * surface calls `BackendUnavailable` (backend-refusals.ts), less a 2xx that is not the backend's
 * answer, which names a wrong URL or what stands in front of it, not an outage.
 */
export function isUnavailability(err: Pick<BackendRequestError, 'kind' | 'status' | 'code'>): boolean {
  const cause = refusalOf(err)?.cause;
  return cause === 'unreachable' || cause === 'failing';
}

/** The backends in their configured order and the one requests go to now. */
export class BackendChoice {
  private activeIndex = 0;

  constructor(readonly urls: readonly string[]) {
    if (urls.length === 0) throw new Error('at least one backend URL is needed');
  }

  get primary(): string {
    return this.urls[0] as string;
  }

  active(): string {
    return this.urls[this.activeIndex] as string;
  }

  /** Where one request tries: the active backend, then each other one in the configured order after it. */
  order(): string[] {
    const n = this.urls.length;
    return Array.from({ length: n }, (_, i) => this.urls[(this.activeIndex + i) % n] as string);
  }

  /**
   * `url` did not serve: the next backend after it becomes active, unless another request
   * already moved on from it (several are in flight at once).
   */
  unavailable(url: string): void {
    if (this.active() === url) this.activeIndex = (this.activeIndex + 1) % this.urls.length;
  }

  /** `url` served a request: it stays (or becomes) the active one. */
  served(url: string): void {
    const index = this.urls.indexOf(url);
    if (index >= 0) this.activeIndex = index;
  }

  /** Requests go to the first URL again. */
  failBack(): void {
    this.activeIndex = 0;
  }

  onPrimary(): boolean {
    return this.activeIndex === 0;
  }
}

export interface FailbackOptions {
  choice: BackendChoice;
  /** Asks one backend whether it accepts this forwarder, doing nothing; throws when it does not. */
  check(url: string): Promise<unknown>;
  intervalMs: number;
  logger: Logger;
  /** Told when requests go to another backend (metrics). */
  onSwitch?(url: string): void;
}

/**
 * While requests go to a standby, asks the first URL every `intervalMs` whether it accepts this
 * forwarder; once it does, requests go back to it. Returns the stop function.
 */
export function startFailback(options: FailbackOptions): () => void {
  const { choice, logger } = options;
  let running = false;
  const timer = setInterval(() => {
    if (running || choice.onPrimary()) return;
    running = true;
    const from = choice.active();
    options
      .check(choice.primary)
      .then(() => {
        if (choice.onPrimary()) return;
        choice.failBack();
        logger.info('the first backend accepts requests again; failed back to it', { from, to: choice.primary });
        options.onSwitch?.(choice.primary);
      })
      .catch((err: unknown) => logger.debug('the first backend is not back yet', { url: choice.primary, err: err instanceof Error ? err.message : String(err) }))
      .finally(() => {
        running = false;
      });
  }, options.intervalMs);
  timer.unref?.();
  return () => clearInterval(timer);
}
