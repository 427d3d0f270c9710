/**
 * Polling for end-to-end tests: the system converges asynchronously, so a test waits for the
 * state it expects and, when it never comes, says what it waited for and what it last saw.
 */
import { setTimeout as sleep } from 'node:timers/promises';

export interface WaitOptions<T = never> {
  /** What is awaited, in words; the failure message starts with it. */
  what: string;
  /** Default 90 s: generous for a shared 2-core machine; never a performance assertion. */
  timeoutMs?: number;
  /** Default 100 ms. */
  intervalMs?: number;
  /** What of the observed value to show on failure; default the value itself. */
  report?: (value: T) => unknown;
}

/** Thrown when a wait runs out; carries the last observed state (or error) in its message. */
export class WaitTimeoutError extends Error {
  override readonly name = 'WaitTimeoutError';
}

/**
 * Calls `observe` until `until(value)` holds and returns that value. Errors thrown by
 * `observe` (e.g. NotFound while an object does not exist yet) count as "not yet".
 */
export async function waitFor<T>(observe: () => T | Promise<T>, until: (value: T) => boolean, options: WaitOptions<T>): Promise<T> {
  const timeoutMs = options.timeoutMs ?? 90_000;
  const intervalMs = options.intervalMs ?? 100;
  const deadline = Date.now() + timeoutMs;
  let last: { value?: T; error?: unknown } = {};
  for (;;) {
    try {
      const value = await observe();
      last = { value };
      if (until(value)) return value;
    } catch (error) {
      last = { error };
    }
    if (Date.now() >= deadline) break;
    await sleep(intervalMs);
  }
  const shown = options.report ? options.report(last.value as T) : last.value;
  const seen = 'error' in last ? `last error: ${describe(last.error)}` : `last observed: ${show(shown)}`;
  throw new WaitTimeoutError(`timed out after ${timeoutMs} ms waiting for ${options.what}; ${seen}`);
}

function describe(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return `${error.name}${code !== undefined ? ` (${String(code)})` : ''}: ${error.message.slice(0, 500)}`;
  }
  return show(error);
}

/** JSON, cut to a readable length. */
export function show(value: unknown, max = 1500): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length > max ? `${text.slice(0, max)}… (${text.length} chars)` : text;
}
