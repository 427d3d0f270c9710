/**
 * Where the simulator reads the time. Injectable so that throttling and state
 * machines can be tested to the token without waiting in real time.
 */
export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
  /** Resolves after `ms` milliseconds of this clock's time. */
  sleep(ms: number): Promise<void>;
}

/** The wall clock. */
export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms))),
};

/**
 * A clock that only moves when told to, so a test can jump minutes of simulated
 * time in a line. Sleepers wake when `advance` passes their deadline.
 */
export class ManualClock implements Clock {
  private current: number;
  private sleepers: { at: number; wake: () => void }[] = [];

  constructor(start = Date.UTC(2025, 0, 1)) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  sleep(ms: number): Promise<void> {
    if (ms <= 0) return Promise.resolve();
    return new Promise((wake) => this.sleepers.push({ at: this.current + ms, wake }));
  }

  /** Moves time forward and wakes every sleeper whose deadline has passed. */
  advance(ms: number): void {
    this.set(this.current + ms);
  }

  set(epochMs: number): void {
    if (epochMs < this.current) throw new Error('ManualClock cannot go backwards');
    this.current = epochMs;
    const due = this.sleepers.filter((s) => s.at <= epochMs);
    this.sleepers = this.sleepers.filter((s) => s.at > epochMs);
    for (const s of due) s.wake();
  }
}
