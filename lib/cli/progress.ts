/**
 * Progress lines for the CLI's long operations (`remove --delete-volumes`, `audit`, `adopt`):
 * on a timer, at least every `everyMs` (5 s), a line with what was done so far and its rate;
 * and one at the end when any was written, so a run shorter than the interval stays quiet.
 * They go to stderr: stdout (a table, `--json`) stays clean. The clock and the timer are
 * injected, so a test proves the cadence on simulated time instead of waiting for it.
 */

/** Time and a repeating timer; `systemTimer` is the real one. */
export interface ProgressTimer {
  /** Epoch milliseconds. */
  now(): number;
  /** Calls `tick` every `ms` until cancelled. */
  every(ms: number, tick: () => void): { cancel(): void };
}

export const systemTimer: ProgressTimer = {
  now: () => Date.now(),
  every(ms, tick) {
    const handle = setInterval(tick, ms);
    // A progress line never keeps the process alive on its own.
    handle.unref();
    return { cancel: () => clearInterval(handle) };
  },
};

export const PROGRESS_EVERY_MS = 5000;

/** What a line reports: EC2 calls made, and, once a goal is set, how much of it is done. */
export interface ProgressState {
  /** Who speaks, e.g. `remove c1`. */
  label: string;
  calls: number;
  goal?: { verb: string; total: number; done: number; sinceMs: number };
}

/** `remove c1: 120 of 620 deleted (4.1/s), 245 EC2 calls in 29 s`: the line for `state` at `nowMs`. */
export function progressLine(state: ProgressState, startedMs: number, nowMs: number): string {
  const elapsed = Math.max(0, nowMs - startedMs);
  const calls = `${state.calls} EC2 call${state.calls === 1 ? '' : 's'}`;
  const seconds = `${Math.round(elapsed / 1000)} s`;
  if (!state.goal) return `${state.label}: ${calls} (${rate(state.calls, elapsed)}) in ${seconds}`;
  const { verb, total, done, sinceMs } = state.goal;
  return `${state.label}: ${done} of ${total} ${verb} (${rate(done, Math.max(0, nowMs - sinceMs))}), ${calls} in ${seconds}`;
}

function rate(count: number, ms: number): string {
  return ms <= 0 ? '-/s' : `${((count * 1000) / ms).toFixed(1)}/s`;
}

export interface Progress {
  /** One EC2 call made (a gateway observer's `call`). */
  call(): void;
  /** From now on, report `done of total <verb>`. */
  goal(total: number, verb: string): void;
  /** `n` more of the goal done. */
  step(n?: number): void;
  /** Stops the timer; writes the last line when any line was written. */
  finish(): void;
}

export interface ProgressOptions {
  label: string;
  /** Receives each line, without its newline. */
  write(line: string): void;
  timer?: ProgressTimer;
  everyMs?: number;
}

export function startProgress(options: ProgressOptions): Progress {
  const timer = options.timer ?? systemTimer;
  const startedMs = timer.now();
  const state: ProgressState = { label: options.label, calls: 0 };
  let written = false;
  const write = () => {
    written = true;
    options.write(progressLine(state, startedMs, timer.now()));
  };
  const ticking = timer.every(options.everyMs ?? PROGRESS_EVERY_MS, write);
  let finished = false;
  return {
    call: () => void (state.calls += 1),
    goal(total, verb) {
      state.goal = { verb, total, done: 0, sinceMs: timer.now() };
    },
    step(n = 1) {
      if (state.goal) state.goal.done += n;
    },
    finish() {
      if (finished) return;
      finished = true;
      ticking.cancel();
      if (written) write();
    },
  };
}
