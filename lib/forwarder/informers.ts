/**
 * Informers (client-node's `makeInformer`) that keep running.
 *
 * What client-node 1.4's ListWatch does by itself: it lists, then watches from the list's
 * resourceVersion; when a watch stream ends it re-watches from the last resourceVersion it
 * saw; on 410 Gone (an HTTP 410, or an ERROR event with code 410 followed by the stream
 * ending) it forgets the resourceVersion and lists again, firing `delete` for objects that
 * vanished meanwhile. What it does not do: on any other error (API server unreachable, 5xx,
 * a failed list) it fires `error` and stops for good. So `error` restarts it here after a
 * delay, unless we are stopping (stopping aborts the watch, which also fires `error`).
 */
import { ListWatch, Watch, type KubeConfig, type KubernetesListObject, type KubernetesObject, type ObjectCache } from '@kubernetes/client-node';
import type { Logger } from './logger.js';

/** client-go's reflector page size: a list of 20,000 never sits in memory whole, untrimmed. */
export const LIST_PAGE_SIZE = 500;

/** One page of a list, after the `_continue` token of the page before. */
export type PagedList<T extends KubernetesObject> = (page: { limit: number; _continue?: string }) => Promise<KubernetesListObject<T>>;

/**
 * Every page of a list, each page's objects transformed as they arrive, as one list at the
 * resourceVersion of the last page (a continued list is served from the first page's snapshot).
 */
export async function listAll<T extends KubernetesObject>(list: PagedList<T>, transform: (object: T) => T, pageSize = LIST_PAGE_SIZE): Promise<KubernetesListObject<T>> {
  const items: T[] = [];
  let _continue: string | undefined;
  let last: KubernetesListObject<T>;
  do {
    last = await list(_continue ? { limit: pageSize, _continue } : { limit: pageSize });
    for (const item of last.items) items.push(transform(item));
    _continue = last.metadata?._continue || undefined;
  } while (_continue);
  return { ...last, items };
}

/**
 * A Watch whose objects are transformed before the informer sees them (and caches them):
 * client-go's `SetTransform`. ERROR events carry a Status, passed as it is.
 */
export function transformingWatch(kubeConfig: KubeConfig, transform: (object: never) => unknown): Pick<Watch, 'watch'> {
  const inner = new Watch(kubeConfig);
  return {
    watch: (path, query, callback, done) =>
      inner.watch(path, query, (phase: string, object: unknown, raw?: unknown) => callback(phase, phase === 'ERROR' ? object : transform(object as never), raw), done),
  };
}

export interface WatchedResource<T extends KubernetesObject> {
  readonly resource: string;
  readonly cache: ObjectCache<T>;
  /** The first list has completed (the cache holds the cluster's state). */
  readonly synced: boolean;
  start(): Promise<void>;
  stop(): Promise<void>;
}

export interface WatchHandlers<T> {
  add?(object: T): void;
  update?(object: T): void;
  delete?(object: T): void;
}

export function watchResource<T extends KubernetesObject>(options: {
  kubeConfig: KubeConfig;
  /** For logs and metrics, e.g. `persistentvolumeclaims`. */
  resource: string;
  /** The watch path, e.g. `/api/v1/persistentvolumeclaims`. */
  path: string;
  list: PagedList<T>;
  /** What of each object the cache keeps (transforms.ts); identity by default. */
  transform?: (object: T) => T;
  /** Only objects matching this field selector (e.g. `metadata.name=x`), listed and watched. */
  fieldSelector?: string;
  handlers: WatchHandlers<T>;
  restartDelayMs: number;
  logger: Logger;
  onRestart?: () => void;
  onSynced?: () => void;
}): WatchedResource<T> {
  const { logger, resource } = options;
  let synced = false;
  let stopped = false;
  let restartTimer: NodeJS.Timeout | undefined;
  /** Restarts since the last successful list: the delay doubles, up to 30 s. */
  let failures = 0;

  // Synced once a list has been applied. ListWatch applies the list's items synchronously
  // when the list promise resolves, so the flag set on the next macrotask follows them; it
  // does not wait for the watch request, which some servers answer only at the first event.
  const transform = options.transform ?? ((object: T) => object);
  const informer = new ListWatch<T>(
    options.path,
    transformingWatch(options.kubeConfig, transform) as Watch,
    async () => {
      const list = await listAll(options.list, transform);
      failures = 0;
      setImmediate(() => {
        if (stopped || synced) return;
        synced = true;
        logger.info('informer synced', { resource, objects: informer.list().length });
        options.onSynced?.();
      });
      return list;
    },
    false,
    undefined,
    options.fieldSelector,
  );
  if (options.handlers.add) informer.on('add', options.handlers.add);
  if (options.handlers.update) informer.on('update', options.handlers.update);
  if (options.handlers.delete) informer.on('delete', options.handlers.delete);
  informer.on('error', (err?: unknown) => {
    if (stopped) return;
    const delay = Math.min(30_000, options.restartDelayMs * 2 ** Math.min(failures, 10));
    failures++;
    logger.warn('watch failed; restarting', { resource, err: describe(err), retryInMs: delay });
    options.onRestart?.();
    clearTimeout(restartTimer);
    restartTimer = setTimeout(() => {
      if (stopped) return;
      run().catch((startErr: unknown) => logger.error('informer cannot restart', { resource, err: describe(startErr) }));
    }, delay);
  });

  const run = async () => {
    // start() lists when it has no resourceVersion, then watches from it (resuming from the
    // last one seen after a restart; a 410 then makes it list again). Errors come as `error`;
    // start() rejects only when the kubeconfig has no current cluster: not recoverable.
    await informer.start();
  };

  return {
    resource,
    cache: informer,
    get synced() {
      return synced;
    },
    start: run,
    async stop() {
      stopped = true;
      clearTimeout(restartTimer);
      await informer.stop();
    },
  };
}

function describe(err: unknown): string {
  if (err instanceof Error) return err.message;
  if (typeof err === 'object' && err !== null) {
    const e = err as { statusCode?: unknown; code?: unknown; message?: unknown };
    return `${String(e.message ?? 'error')} (${String(e.statusCode ?? e.code ?? '')})`;
  }
  return String(err);
}
