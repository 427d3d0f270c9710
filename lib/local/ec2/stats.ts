/** Counters of one action since the last reset. */
export interface ActionStats {
  calls: number;
  ok: number;
  /** Refused by a token bucket (also counted in `errors.RequestLimitExceeded`). */
  throttled: number;
  /** Every error answer, injected ones included, by EC2 code. */
  errors: Record<string, number>;
  /** Milliseconds from the last reset to the first and the last call answered without error. */
  firstOkMs?: number;
  lastOkMs?: number;
}

export interface Ec2SimStats {
  since: string;
  total: ActionStats;
  actions: Record<string, ActionStats>;
}

const empty = (): ActionStats => ({ calls: 0, ok: 0, throttled: 0, errors: {} });

export class StatsRecorder {
  private actions = new Map<string, ActionStats>();
  private total = empty();
  private since: number;

  constructor(private readonly now: () => number) {
    this.since = now();
  }

  record(action: string, outcome: { code?: string; throttled?: boolean }): void {
    let s = this.actions.get(action);
    if (!s) this.actions.set(action, (s = empty()));
    const at = this.now() - this.since;
    for (const target of [s, this.total]) {
      target.calls++;
      if (outcome.code === undefined) {
        target.ok++;
        target.firstOkMs ??= at;
        target.lastOkMs = at;
      } else target.errors[outcome.code] = (target.errors[outcome.code] ?? 0) + 1;
      if (outcome.throttled) target.throttled++;
    }
  }

  snapshot(): Ec2SimStats {
    return structuredClone({
      since: new Date(this.since).toISOString(),
      total: this.total,
      actions: Object.fromEntries(this.actions),
    });
  }

  reset(): void {
    this.actions.clear();
    this.total = empty();
    this.since = this.now();
  }
}
