/** A loop's wait between tries, cut short when the loop is stopped. */
import { setTimeout as wait } from 'node:timers/promises';

/** Waits `ms`, or until `signal` aborts (at once if it already has); never rejects for the abort. */
export async function pause(ms: number, signal: AbortSignal): Promise<void> {
  try {
    await wait(ms, undefined, { signal });
  } catch (err) {
    if (!signal.aborted) throw err;
  }
}
