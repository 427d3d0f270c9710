/**
 * Informers over `kube/rest.ts`: a cache of one resource kept by listing and watching, as
 * client-go's reflector and client-node's `ListWatch` keep one, without loading client-node.
 *
 * - list in pages of 500 (`limit` / `continue`), each page's objects transformed as they
 *   arrive (transforms.ts), then applied at once: objects gone since the cache last held them
 *   fire `delete`, new ones `add`, ones at another resourceVersion `update`;
 * - watch from the list's resourceVersion, with bookmarks and a server-side timeout of 5–10
 *   minutes (client-go's), and again from the last resourceVersion seen when a watch ends;
 * - 410 Gone (an HTTP 410, or an ERROR event with code 410) forgets the resourceVersion and
 *   lists again;
 * - any other failure (API server unreachable, 5xx, a failed list, a line that is not JSON, a
 *   watch ended within a second with no event, as client-go's "very short watch") restarts after a delay that doubles, up to 30 s, resuming from the last resourceVersion
 *   seen; a successful list resets the delay;
 * - an optional resource the server does not serve (its list answers 404: a CRD not
 *   installed) is synced empty and not watched; its list is tried again after a delay that
 *   doubles up to {@link ABSENT_MAX_FACTOR} times the restart delay (3 minutes at the default
 *   2 s), so a CRD installed later is noticed within that long, without a list and a watch
 *   every restart delay for ever. A watch answering 404 (the CRD removed) lists again.
 */
import type { KubernetesListObject, KubernetesObject } from '@kubernetes/client-node';
import { isApiError } from '../kube/errors.js';
import type { Logger } from './logger.js';
import { pause } from './pause.js';
import type { KubeRest } from './kube/rest.js';

/** client-go's reflector page size: a list of 20,000 never sits in memory whole, untrimmed. */
export const LIST_PAGE_SIZE = 500;
/** client-go's reflector: each watch asks the server to end it after 5–10 minutes. */
export const MIN_WATCH_TIMEOUT_SECONDS = 300;
export const MAX_RESTART_DELAY_MS = 30_000;
/** An optional resource not served is listed again after at most this many restart delays. */
export const ABSENT_MAX_FACTOR = 90;

/** One page of a list, after the `continue` token of the page before. */
export type PagedList<T extends KubernetesObject> = (page: { limit: number; continue?: string }) => Promise<KubernetesListObject<T>>;

/** One page of `path` over `rest`, as the API server sends it (plain JSON). */
export function restList<T extends KubernetesObject>(rest: KubeRest, path: string, fieldSelector?: string, signal?: () => AbortSignal): PagedList<T> {
  return (page) => {
    const aborted = signal?.();
    return rest.request<KubernetesListObject<T>>('GET', path, { query: { limit: page.limit, continue: page.continue, fieldSelector }, ...(aborted ? { signal: aborted } : {}) });
  };
}

/**
 * Every page of a list, each page's objects transformed as they arrive, as one list at the
 * resourceVersion of the last page (a continued list is served from the first page's snapshot).
 */
export async function listAll<T extends KubernetesObject>(list: PagedList<T>, transform: (object: T) => T, pageSize = LIST_PAGE_SIZE): Promise<{ resourceVersion: string; items: T[] }> {
  const items: T[] = [];
  let token: string | undefined;
  let resourceVersion = '';
  do {
    const page = await list(token ? { limit: pageSize, continue: token } : { limit: pageSize });
    for (const item of page.items ?? []) items.push(transform(item));
    resourceVersion = page.metadata?.resourceVersion ?? '';
    // The wire calls it `continue` (client-node's types `_continue`).
    token = (page.metadata as { continue?: string } | undefined)?.continue || undefined;
  } while (token);
  return { resourceVersion, items };
}

/** The objects of one resource by namespace and name ('' for cluster-scoped), as client-node's ObjectCache. */
export class ObjectCache<T extends KubernetesObject> {
  #objects = new Map<string, Map<string, T>>();

  get(name: string, namespace?: string): T | undefined {
    return this.#objects.get(namespace || '')?.get(name);
  }

  list(namespace?: string): T[] {
    if (namespace) return [...(this.#objects.get(namespace)?.values() ?? [])];
    const all: T[] = [];
    for (const objects of this.#objects.values()) for (const object of objects.values()) all.push(object);
    return all;
  }

  /** Stores `object`: 'add' when new, 'update' when its resourceVersion differs, undefined when the same. */
  put(object: T): 'add' | 'update' | undefined {
    const namespace = object.metadata?.namespace || '';
    const name = object.metadata?.name || '';
    let objects = this.#objects.get(namespace);
    if (!objects) this.#objects.set(namespace, (objects = new Map()));
    const found = objects.get(name);
    const version = found?.metadata?.resourceVersion;
    if (found && version !== undefined && version === object.metadata?.resourceVersion) return undefined;
    objects.set(name, object);
    return found ? 'update' : 'add';
  }

  /** Removes the object of `object`'s namespace and name; the one removed, if there was one. */
  remove(object: T): T | undefined {
    const namespace = object.metadata?.namespace || '';
    const objects = this.#objects.get(namespace);
    const name = object.metadata?.name || '';
    const found = objects?.get(name);
    if (!objects || !found) return undefined;
    objects.delete(name);
    if (objects.size === 0) this.#objects.delete(namespace);
    return found;
  }

  /** Replaces the content with `objects` (a relist); the ones that were there and are not any more. */
  replace(objects: readonly T[]): T[] {
    const keep = new Set(objects.map((o) => `${o.metadata?.namespace || ''}/${o.metadata?.name || ''}`));
    const gone: T[] = [];
    for (const [namespace, byName] of this.#objects) {
      for (const [name, object] of byName) {
        if (keep.has(`${namespace}/${name}`)) continue;
        byName.delete(name);
        gone.push(object);
      }
      if (byName.size === 0) this.#objects.delete(namespace);
    }
    return gone;
  }
}

export interface WatchedResource<T extends KubernetesObject> {
  readonly resource: string;
  readonly cache: Pick<ObjectCache<T>, 'get' | 'list'>;
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

/** A watch event as the API server streams it. */
interface WatchEvent<T> {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: T;
}

/** The resourceVersion is too old: list again (410, as a status or an ERROR event). */
class Gone extends Error {
  override readonly name = 'Gone';
}

export function watchResource<T extends KubernetesObject>(options: {
  rest: KubeRest;
  /** For logs and metrics, e.g. `persistentvolumeclaims`. */
  resource: string;
  /** The list and watch path, e.g. `/api/v1/persistentvolumeclaims`. */
  path: string;
  /** A 404 list means none (a resource this cluster does not serve). */
  optional?: boolean;
  /** What of each object the cache keeps (transforms.ts); identity by default. */
  transform?: (object: T) => T;
  /** Only objects matching this field selector (e.g. `metadata.name=x`), listed and watched. */
  fieldSelector?: string;
  handlers: WatchHandlers<T>;
  restartDelayMs: number;
  logger: Logger;
  onRestart?: () => void;
  onSynced?: () => void;
  /** An optional resource: called when it is found not served (a 404 list), and when it is served again. */
  onServed?: (served: boolean) => void;
  /** Server-side watch timeout in seconds; client-go's 5–10 minutes by default. */
  watchTimeoutSeconds?: () => number;
}): WatchedResource<T> {
  const { logger, resource, rest, path, handlers } = options;
  const transform = options.transform ?? ((object: T) => object);
  // Stopping aborts a list in flight too, not only the watch.
  const list = restList<T>(rest, path, options.fieldSelector, () => abort.signal);
  const watchTimeout = options.watchTimeoutSeconds ?? (() => Math.floor(MIN_WATCH_TIMEOUT_SECONDS * (1 + Math.random())));
  const cache = new ObjectCache<T>();
  let synced = false;
  let stopped = false;
  let resourceVersion = '';
  /** Restarts since the last successful list: the delay doubles, up to 30 s. */
  let failures = 0;
  /** An optional resource's lists answered 404 in a row (0: served, or not known yet). */
  let absentLists = 0;
  /** Whether the resource was served at the last list (undefined before the first). */
  let served: boolean | undefined;
  let abort = new AbortController();
  let running: Promise<void> | undefined;

  const emit = (kind: keyof WatchHandlers<T>, object: T) => {
    try {
      handlers[kind]?.(object);
    } catch (err) {
      logger.error('informer handler failed', { resource, event: kind, err: describe(err) });
    }
  };

  function setServed(now: boolean): void {
    if (served === now || (served === undefined && now)) {
      served = now;
      return;
    }
    served = now;
    options.onServed?.(now);
  }

  /** Lists; false when the (optional) resource is not served, its cache then emptied. */
  async function relist(): Promise<boolean> {
    let listed: { resourceVersion: string; items: T[] };
    let absent = false;
    try {
      listed = await listAll(list, transform);
    } catch (err) {
      if (!(options.optional && isApiError(err, 404))) throw err;
      listed = { resourceVersion: '', items: [] };
      absent = true;
    }
    failures = 0;
    absentLists = absent ? absentLists + 1 : 0;
    setServed(!absent);
    for (const gone of cache.replace(listed.items)) emit('delete', gone);
    for (const object of listed.items) {
      const change = cache.put(object);
      if (change) emit(change, object);
    }
    resourceVersion = listed.resourceVersion;
    if (!synced) {
      synced = true;
      logger.info('informer synced', { resource, objects: listed.items.length });
      options.onSynced?.();
    }
    return !absent;
  }

  /** One watch from `resourceVersion`, until the server ends it (resolves) or it fails (throws). */
  async function watch(signal: AbortSignal): Promise<void> {
    const started = Date.now();
    let events = 0;
    const res = await rest.stream(path, {
      query: { watch: true, resourceVersion, allowWatchBookmarks: true, timeoutSeconds: watchTimeout(), fieldSelector: options.fieldSelector },
      signal,
    });
    res.setEncoding('utf8');
    let pending = '';
    for await (const chunk of res) {
      pending += chunk as string;
      // Every whole line of the chunk, then what is left of the last one kept (one copy a chunk).
      let start = 0;
      let newline: number;
      while ((newline = pending.indexOf('\n', start)) >= 0) {
        const line = pending.slice(start, newline).trim();
        start = newline + 1;
        if (line) {
          apply(JSON.parse(line) as WatchEvent<T>);
          events++;
        }
      }
      pending = pending.slice(start);
    }
    if (pending.trim()) apply(JSON.parse(pending) as WatchEvent<T>);
    // client-go's reflector: a watch that ends at once with nothing in it is a failure (backed
    // off), not a reason to watch again at once.
    if (events === 0 && !pending.trim() && Date.now() - started < 1000 && !stopped) throw new Error('very short watch: ended within 1 s with no events');
  }

  function apply(event: WatchEvent<T>): void {
    if (stopped) return;
    switch (event.type) {
      case 'ERROR': {
        const status = event.object as { code?: number; message?: string };
        if (status.code === 410) throw new Gone(status.message ?? 'resourceVersion too old');
        throw new Error(`watch ERROR event: ${status.code ?? ''} ${status.message ?? ''}`);
      }
      case 'ADDED':
      case 'MODIFIED': {
        const object = transform(event.object);
        const change = cache.put(object);
        if (change) emit(change, object);
        break;
      }
      case 'DELETED': {
        const object = transform(event.object);
        if (cache.remove(object)) emit('delete', object);
        break;
      }
      case 'BOOKMARK':
        break;
      default:
        throw new Error(`watch event of unknown type ${String((event as { type?: unknown }).type)}`);
    }
    resourceVersion = event.object.metadata?.resourceVersion ?? resourceVersion;
  }

  async function loop(): Promise<void> {
    while (!stopped) {
      try {
        if (!resourceVersion && !(await relist())) {
          // Not served: nothing to watch. Look again later, less often the longer it stays so.
          const delay = Math.min(options.restartDelayMs * ABSENT_MAX_FACTOR, options.restartDelayMs * 2 ** Math.min(absentLists - 1, 20));
          logger.debug('resource not served; listing it again later', { resource, retryInMs: delay });
          await pause(delay, abort.signal);
          continue;
        }
        await watch(abort.signal);
      } catch (err) {
        if (stopped) return;
        if (err instanceof Gone || isApiError(err, 410)) {
          logger.info('watch expired; listing again', { resource });
          resourceVersion = '';
          continue;
        }
        // The resource may have stopped being served (its CRD removed): the next list says.
        if (options.optional && isApiError(err, 404)) resourceVersion = '';
        const delay = Math.min(MAX_RESTART_DELAY_MS, options.restartDelayMs * 2 ** Math.min(failures, 10));
        failures++;
        const quiet = options.optional && isApiError(err, 404);
        logger[quiet ? 'debug' : 'warn']('watch failed; restarting', { resource, err: describe(err), retryInMs: delay });
        options.onRestart?.();
        await pause(delay, abort.signal);
      }
    }
  }

  return {
    resource,
    cache,
    get synced() {
      return synced;
    },
    async start() {
      if (running) return;
      stopped = false;
      abort = new AbortController();
      running = loop().finally(() => (running = undefined));
    },
    async stop() {
      stopped = true;
      abort.abort();
      await running;
    },
  };
}

function describe(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}
