/**
 * A ProgressTimer on simulated time: `advance` moves the clock and runs each tick that falls
 * due on the way, at its own time, in order — so a test counts progress lines against
 * simulated seconds without waiting for real ones.
 */
import type { ProgressTimer } from '../../lib/cli/index.js';

interface Ticker {
  at: number;
  ms: number;
  tick: () => void;
  live: boolean;
}

export class FakeTimer implements ProgressTimer {
  #now: number;
  #tickers: Ticker[] = [];

  constructor(start = Date.UTC(2025, 5, 1, 12)) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  every(ms: number, tick: () => void): { cancel(): void } {
    const ticker: Ticker = { at: this.#now + ms, ms, tick, live: true };
    this.#tickers.push(ticker);
    return {
      cancel: () => {
        ticker.live = false;
      },
    };
  }

  /** Tickers not cancelled. */
  get live(): number {
    return this.#tickers.filter((t) => t.live).length;
  }

  advance(ms: number): void {
    const end = this.#now + ms;
    for (;;) {
      const due = this.#tickers.filter((t) => t.live && t.at <= end).sort((a, b) => a.at - b.at)[0];
      if (!due) break;
      this.#now = due.at;
      due.at += due.ms;
      due.tick();
    }
    this.#tickers = this.#tickers.filter((t) => t.live);
    this.#now = end;
  }
}
