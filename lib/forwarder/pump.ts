/**
 * The pump between the work queue and the sender: takes every batch the queue hands out,
 * sends it, and settles it with the completions. Nothing goes before `ready()` (every cache
 * synced: an item built from a half-filled cache would tell the backend a Node is gone, or
 * that a PV has no VolumeAttachments, when neither is true).
 */
import type { Logger } from './logger.js';
import type { Batch, Completion, WorkQueue } from './queue.js';

export interface Pump {
  /** Pumps on the next turn, so that a burst of offers (a list of 10,000) fills whole batches. */
  schedule(): void;
  /** Sends nothing more; batches in flight go on. */
  stop(): void;
  /** Waits for the batches in flight to settle, `timeoutMs` at most. */
  drain(timeoutMs: number): Promise<void>;
}

export function createPump<P>(options: {
  queue: WorkQueue<P>;
  /** One batch's round trip; the completion of each key (a key without one counts as an error). */
  send(batch: Batch<P>): Promise<ReadonlyMap<string, Completion>>;
  ready(): boolean;
  logger: Logger;
}): Pump {
  const { queue, logger } = options;
  let stopped = false;
  let scheduled = false;
  let timer: NodeJS.Timeout | undefined;
  const running = new Set<Promise<void>>();

  function schedule(): void {
    if (scheduled || stopped) return;
    scheduled = true;
    setImmediate(() => {
      scheduled = false;
      pump();
    });
  }

  function pump(): void {
    if (stopped || !options.ready()) return;
    for (let batch = queue.take(); batch; batch = queue.take()) {
      const run = runBatch(batch);
      running.add(run);
      void run.finally(() => running.delete(run));
    }
    clearTimeout(timer);
    timer = undefined;
    // With every request slot taken, settling a batch pumps again; no timer needed.
    if (queue.inFlight >= queue.maxInFlight) return;
    const due = queue.nextDueAt();
    if (due !== undefined) timer = setTimeout(pump, Math.max(0, due - Date.now()) + 1);
  }

  async function runBatch(batch: Batch<P>): Promise<void> {
    let completions: ReadonlyMap<string, Completion> = new Map();
    try {
      completions = await options.send(batch);
    } catch (err) {
      // The sender turns every failure into completions; should it throw all the same, the
      // batch still settles (each key as an error, retried with backoff), never stays in flight.
      logger.error('batch crashed', { err: err instanceof Error ? (err.stack ?? err.message) : String(err) });
    }
    queue.settle(batch, completions);
    schedule();
  }

  return {
    schedule,
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
    async drain(timeoutMs) {
      if (running.size === 0) return;
      let waitTimer: NodeJS.Timeout | undefined;
      const waited = new Promise<void>((resolve) => (waitTimer = setTimeout(resolve, timeoutMs)));
      await Promise.race([Promise.allSettled([...running]), waited]);
      clearTimeout(waitTimer);
    },
  };
}
