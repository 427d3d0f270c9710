import { classifyEc2Error, DEADLINE_EXCEEDED, deadlineExceeded, isThrottlingCode } from './errors.js';
import { Ec2Error } from './types.js';

/** What one EC2 call gets from the gateway: the signal that aborts it at the deadline. */
export interface CallOptions {
  abortSignal?: AbortSignal;
}

/**
 * Runs one EC2 call (SDK retries included) so that it settles by `deadline` (epoch ms): when
 * the deadline passes the call is aborted and rejects with a `transient` Ec2Error at once,
 * whether or not the transport honours the abort. Every other failure is classified.
 */
export async function callEc2<T>(
  action: string,
  deadline: number | undefined,
  run: (options: CallOptions) => Promise<T>,
): Promise<T> {
  if (deadline === undefined) {
    try {
      return await run({});
    } catch (err) {
      throw classifyEc2Error(err, action);
    }
  }
  const remaining = deadline - Date.now();
  if (remaining <= 0) throw deadlineExceeded(action);

  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      controller.abort();
      reject(deadlineExceeded(action));
    }, remaining);
  });
  try {
    return await Promise.race([run({ abortSignal: controller.signal }), expired]);
  } catch (err) {
    throw controller.signal.aborted ? deadlineExceeded(action) : classifyEc2Error(err, action);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The waits before trying a failed read again, one per retry: as the SDK's standard mode would
 * (three attempts in all, about 100 ms apart and growing), which the backend turns off because
 * an SDK retry would be a call the budget did not grant (lib/app/backend.ts).
 */
export const READ_RETRY_DELAYS_MS = [100, 400] as const;

/**
 * Pure: how long to wait before the `retry`-th retry (0-based) of `action` that failed with
 * `error`, or undefined when it is not tried again here: only reads (`Describe…`), only
 * after an error that may pass at once — EC2's 5xx, a cut connection — never a throttle (the
 * budget slows down instead) nor the request's deadline.
 */
export function readRetryDelayMs(action: string, error: unknown, retry: number): number | undefined {
  if (!action.startsWith('Describe') || !(error instanceof Ec2Error)) return undefined;
  if (error.kind !== 'transient' || isThrottlingCode(error.code) || error.code === DEADLINE_EXCEEDED) return undefined;
  return READ_RETRY_DELAYS_MS[retry];
}
