/**
 * The change log behind watches: a bounded history (so a watch can resume from a recent
 * resourceVersion, and an older one gets 410 Expired as from a real watch cache) and the
 * live fan-out to subscribers.
 */
import { expired } from './errors.js';
import { clone } from './json.js';
import type { KubeObject, ResourceName, WatchEvent, WatchEventType } from './types.js';

/** One committed change. `previous` is the state before a MODIFIED. */
export interface Change {
  rv: number;
  resource: ResourceName;
  type: WatchEventType;
  object: KubeObject;
  previous?: KubeObject;
}

/** Which changes a watcher wants: one resource, optionally one namespace, and its selectors. */
export interface WatchFilter {
  resource: ResourceName;
  namespace?: string;
  matches: (object: KubeObject) => boolean;
}

interface Subscriber {
  filter: WatchFilter;
  onEvent: (event: WatchEvent) => void;
  /** Highest rv already handed over; guards against replay/queue overlap. */
  lastRv: number;
  closed: boolean;
}

/**
 * What a watcher with `filter` sees of `change`. Like the real watch cache, an object that
 * starts matching a selector arrives as ADDED, one that stops matching as DELETED.
 */
export function eventFor(change: Change, filter: WatchFilter): WatchEvent | undefined {
  if (change.resource !== filter.resource) return undefined;
  if (filter.namespace !== undefined && change.object.metadata.namespace !== filter.namespace) return undefined;
  const now = filter.matches(change.object);
  if (change.type !== 'MODIFIED') return now ? { type: change.type, object: change.object } : undefined;
  const before = change.previous ? filter.matches(change.previous) : false;
  if (now) return { type: before ? 'MODIFIED' : 'ADDED', object: change.object };
  return before ? { type: 'DELETED', object: change.object } : undefined;
}

export class ChangeLog {
  private readonly history: Change[] = [];
  /** Changes with rv <= this were dropped from the history. */
  private compactedThrough = 0;
  private readonly subscribers = new Set<Subscriber>();
  private readonly queue: Change[] = [];
  private draining = false;

  constructor(
    private readonly limit: number,
    private readonly onListenerError: (err: unknown) => void,
  ) {}

  /**
   * Records a committed change and hands it to subscribers. Listeners run synchronously, in
   * rv order; a listener that writes to the store has its own change delivered (to everyone)
   * only after the current one has reached every subscriber.
   */
  publish(change: Change): void {
    this.history.push(change);
    if (this.history.length > this.limit) {
      const dropped = this.history.splice(0, this.history.length - this.limit);
      this.compactedThrough = (dropped[dropped.length - 1] as Change).rv;
    }
    this.queue.push(change);
    if (this.draining) return;
    this.draining = true;
    try {
      for (let next = this.queue.shift(); next; next = this.queue.shift()) {
        for (const subscriber of [...this.subscribers]) this.deliver(subscriber, next);
      }
    } finally {
      this.draining = false;
    }
  }

  /**
   * Subscribes from `fromRv` (exclusive), replaying retained history first; throws 410
   * Expired when changes after `fromRv` have been dropped. With `initial` (a watch without
   * resourceVersion), sends those objects as ADDED instead and continues live from `currentRv`.
   */
  subscribe(
    filter: WatchFilter,
    from: { rv: number } | { initial: KubeObject[]; currentRv: number },
    onEvent: (event: WatchEvent) => void,
  ): () => void {
    const subscriber: Subscriber = { filter, onEvent, lastRv: 0, closed: false };
    if ('initial' in from) {
      for (const object of from.initial) this.call(subscriber, { type: 'ADDED', object });
      subscriber.lastRv = from.currentRv;
    } else {
      if (from.rv < this.compactedThrough) {
        const newest = this.history[this.history.length - 1]?.rv ?? this.compactedThrough;
        throw expired(`too old resource version: ${from.rv} (${newest})`);
      }
      subscriber.lastRv = from.rv;
      for (const change of this.history) if (change.rv > from.rv) this.deliver(subscriber, change);
    }
    this.subscribers.add(subscriber);
    return () => {
      subscriber.closed = true;
      this.subscribers.delete(subscriber);
    };
  }

  private deliver(subscriber: Subscriber, change: Change): void {
    if (subscriber.closed || change.rv <= subscriber.lastRv) return;
    subscriber.lastRv = change.rv;
    const event = eventFor(change, subscriber.filter);
    if (event) this.call(subscriber, event);
  }

  private call(subscriber: Subscriber, event: WatchEvent): void {
    if (subscriber.closed) return;
    try {
      subscriber.onEvent({ type: event.type, object: clone(event.object) });
    } catch (err) {
      this.onListenerError(err);
    }
  }
}
