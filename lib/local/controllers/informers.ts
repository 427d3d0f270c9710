/**
 * Watch-fed caches of the store, one per resource and shared by the controllers, as
 * client-go's shared informers are. Syncs read from here instead of `store.list`, which
 * deep-copies every object on each call and made a few hundred pods cost seconds.
 *
 * The cache is never behind when a sync runs: the store calls watchers synchronously for
 * every committed write, and syncs run from the event loop, not inside a watch callback.
 * Writes still go to the store with the cached resourceVersion, so a stale read could only
 * end in a Conflict and a retry. Cached objects are frozen: a controller must copy before
 * it changes anything.
 */
import type { KubeObject, ObjectStore, ResourceName, WatchEvent } from '../kube/types.js';

export class Informer {
  private readonly objects = new Map<string, KubeObject>();
  private readonly handlers = new Set<(event: WatchEvent) => void>();
  private snapshot: KubeObject[] | undefined;
  private readonly unwatch: () => void;

  constructor(store: ObjectStore, resource: ResourceName) {
    this.unwatch = store.watch(resource, {}, (event) => {
      const key = keyOf(event.object.metadata.name, event.object.metadata.namespace);
      if (event.type === 'DELETED') this.objects.delete(key);
      else this.objects.set(key, deepFreeze(event.object));
      this.snapshot = undefined;
      for (const handler of this.handlers) handler(event);
    });
  }

  get(name: string, namespace?: string): KubeObject | undefined {
    return this.objects.get(keyOf(name, namespace));
  }

  /** Every cached object (the same array until something changes). */
  list(): readonly KubeObject[] {
    return (this.snapshot ??= [...this.objects.values()]);
  }

  /** Calls `handler` for each later event; returns the unsubscribe. */
  onEvent(handler: (event: WatchEvent) => void): () => void {
    this.handlers.add(handler);
    return () => this.handlers.delete(handler);
  }

  stop(): void {
    this.unwatch();
    this.handlers.clear();
  }
}

/** One `Informer` per resource, started on first use. */
export class Informers {
  private readonly started = new Map<ResourceName, Informer>();

  constructor(readonly store: ObjectStore) {}

  for(resource: ResourceName): Informer {
    let informer = this.started.get(resource);
    if (!informer) this.started.set(resource, (informer = new Informer(this.store, resource)));
    return informer;
  }

  /** Shorthand for `for(resource).get(…)`, typed by the caller. */
  get<T extends KubeObject>(resource: ResourceName, name: string, namespace?: string): T | undefined {
    return this.for(resource).get(name, namespace) as T | undefined;
  }

  /** Shorthand for `for(resource).list()`, optionally one namespace, typed by the caller. */
  list<T extends KubeObject>(resource: ResourceName, namespace?: string): readonly T[] {
    const all = this.for(resource).list() as readonly T[];
    return namespace === undefined ? all : all.filter((o) => o.metadata.namespace === namespace);
  }

  stop(): void {
    for (const informer of this.started.values()) informer.stop();
    this.started.clear();
  }
}

function keyOf(name: string, namespace: string | undefined): string {
  return namespace ? `${namespace}/${name}` : name;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
