import { classifyEc2Error, deadlineExceeded } from './errors.js';

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
