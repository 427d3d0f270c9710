/**
 * The loop every controller here runs, in the shape of a Kubernetes controller: watch
 * events only enqueue keys (deduplicated), one worker syncs keys against the store's
 * current state, failures are retried with backoff, and a periodic resync enqueues every
 * key so a missed event costs one interval at most. Level-triggered: a sync never trusts
 * what an event said, only what the store holds now.
 */
import type { ResourceName, WatchEvent } from '../kube/types.js';
import { isRace } from './errors.js';
import type { Informers } from './informers.js';
import type { ResolvedOptions } from './options.js';
import { WorkQueue } from './queue.js';

export interface ControllerDefinition {
  /** Names the controller in error reports, e.g. `persistentvolume-controller`. */
  name: string;
  /** Per watched resource: the keys an event makes worth a look. */
  watches: Partial<Record<ResourceName, (event: WatchEvent) => Iterable<string>>>;
  /** Every key worth a look: enqueued at start and on each resync. */
  keys(): Iterable<string>;
  /** Brings one key to the wanted state; throws to be retried. */
  sync(key: string): void | Promise<void>;
}

export interface RunningController {
  /** Stops watching and resyncing, and resolves once the sync in progress (if any) ended. */
  stop(): Promise<void>;
}

/** A controller loop of {@link runController}. */
export interface RunningLoop extends RunningController {
  /**
   * Resolves once nothing is left to do: no key waiting, scheduled, being synced or due for
   * a retry (so never while a sync keeps failing). Resyncs to come do not count.
   */
  idle(): Promise<void>;
}

/** Longest stretch the worker runs before yielding, so a long queue never starves the HTTP server. */
const SLICE_MS = 10;
/** First retry delay after a failed sync; doubles per failure up to the resync interval. */
const RETRY_BASE_MS = 5;

/**
 * Runs `definition` with events from `informers`; `ownsInformers` stops them with the
 * controller (a controller started on its own), otherwise their owner does.
 */
export function runController(
  informers: Informers,
  definition: ControllerDefinition,
  options: Pick<ResolvedOptions, 'resyncIntervalMs' | 'onError'> & { ownsInformers: boolean },
): RunningLoop {
  const failures = new Map<string, number>();
  let stopped = false;
  let scheduled = false;
  let running: Promise<void> = Promise.resolve();

  const report = (error: unknown, key: string) => {
    try {
      options.onError(error, { controller: definition.name, key });
    } catch {
      // A failing reporter must not stop the loop.
    }
  };

  const wake = () => {
    if (scheduled || stopped) return;
    scheduled = true;
    setImmediate(() => {
      scheduled = false;
      running = running.then(work);
    });
  };
  const queue = new WorkQueue(wake);

  async function work(): Promise<void> {
    const started = performance.now();
    for (let key = queue.take(); key !== undefined && !stopped; key = queue.take()) {
      await syncOne(key);
      if (performance.now() - started > SLICE_MS) break;
    }
    if (queue.size > 0) wake();
  }

  async function syncOne(key: string): Promise<void> {
    try {
      await definition.sync(key);
      failures.delete(key);
    } catch (error) {
      const attempt = (failures.get(key) ?? 0) + 1;
      failures.set(key, attempt);
      if (!isRace(error)) report(error, key);
      queue.addAfter(key, Math.min(RETRY_BASE_MS * 2 ** (attempt - 1), options.resyncIntervalMs));
    }
  }

  const enqueueAll = () => {
    if (stopped) return;
    try {
      for (const key of definition.keys()) queue.add(key);
    } catch (error) {
      report(error, '(resync)');
    }
  };

  const unwatch = Object.entries(definition.watches).map(([resource, keysOf]) =>
    informers.for(resource as ResourceName).onEvent((event) => {
      if (stopped) return;
      try {
        for (const key of keysOf(event)) queue.add(key);
      } catch (error) {
        report(error, `(watch ${resource})`);
      }
    }),
  );
  enqueueAll();
  const resync = setInterval(enqueueAll, options.resyncIntervalMs);
  resync.unref();

  return {
    async stop() {
      if (stopped) return running;
      stopped = true;
      clearInterval(resync);
      for (const cancel of unwatch) cancel();
      queue.clear();
      await running;
      if (options.ownsInformers) informers.stop();
    },
    async idle() {
      for (;;) {
        await running;
        if (!scheduled && queue.size === 0 && queue.delayed === 0) return;
        // Let a scheduled wake or a due retry chain its work onto `running`, then wait for that too.
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
    },
  };
}
