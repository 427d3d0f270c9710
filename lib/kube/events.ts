/**
 * Kubernetes Events, recorded the way client-go's recorder does: a repeat of the same event
 * (same object, type, reason and message) within a while bumps `count` and `lastTimestamp`
 * of the Event already written instead of creating another, so a PVC that fails every few
 * seconds shows one Warning with a growing count, not hundreds.
 */
import { hostname } from 'node:os';
import { randomInt } from 'node:crypto';
import type { CoreV1Event } from '@kubernetes/client-node';
import type { KubeClients } from './clients.js';
import type { CreateEventWrite } from '../contract/index.js';
import { isApiError } from './errors.js';

/** The Event last written for one (object, type, reason, message). */
interface Correlated {
  name: string;
  namespace: string;
  count: number;
  lastSeenMs: number;
}

export interface EventCorrelatorOptions {
  /** Distinct events remembered; the least recently seen is forgotten first. Default 4096. */
  maxEntries?: number;
  /** A repeat older than this creates a new Event. Default 10 minutes. */
  windowMs?: number;
  /** Milliseconds clock, for tests. */
  now?: () => number;
}

/** A bounded LRU of recently written Events, like client-go's event correlator. */
export class EventCorrelator {
  readonly #entries = new Map<string, Correlated>();
  readonly #max: number;
  readonly #windowMs: number;
  readonly now: () => number;

  constructor(options: EventCorrelatorOptions = {}) {
    this.#max = options.maxEntries ?? 4096;
    this.#windowMs = options.windowMs ?? 10 * 60_000;
    this.now = options.now ?? Date.now;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** The Event to bump for `key`, if one was written within the window. */
  recent(key: string): Correlated | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    this.#entries.delete(key);
    if (this.now() - entry.lastSeenMs > this.#windowMs) return undefined;
    this.#entries.set(key, entry); // most recently used goes last
    return entry;
  }

  remember(key: string, entry: Omit<Correlated, 'lastSeenMs'>): void {
    this.#entries.delete(key);
    this.#entries.set(key, { ...entry, lastSeenMs: this.now() });
    while (this.#entries.size > this.#max) {
      const oldest = this.#entries.keys().next().value as string;
      this.#entries.delete(oldest);
    }
  }

  forget(key: string): void {
    this.#entries.delete(key);
  }
}

export interface RecordEventOptions {
  /** `source.component` and `reportingComponent`. */
  component: string;
  correlator: EventCorrelator;
  /** `reportingInstance`; defaults to the host name (the pod name in a cluster). */
  instance?: string;
}

/** Longest message written; the API server refuses longer event notes. */
const MAX_MESSAGE_LENGTH = 1024;

/** The correlation key: everything that makes two events "the same" for counting. */
export function eventKey(component: string, write: CreateEventWrite): string {
  const o = write.involvedObject;
  return JSON.stringify([component, o.kind, o.namespace ?? '', o.name, o.uid ?? '', write.type, write.reason, write.message]);
}

/**
 * Events of cluster-scoped objects (PV, VolumeAttachment) go to `default`, as client-go does.
 */
export function eventNamespace(write: CreateEventWrite): string {
  return write.involvedObject.namespace || 'default';
}

/** `<object name>.<hex time>`, client-go's naming, with random low bits against collisions. */
export function eventName(objectName: string, nowMs: number): string {
  const nanos = BigInt(nowMs) * 1_000_000n + BigInt(randomInt(1_000_000));
  return `${objectName}.${nanos.toString(16)}`;
}

/** The Event object for the first occurrence. */
export function buildEvent(
  write: CreateEventWrite,
  options: { component: string; instance: string; name: string; now: Date },
): CoreV1Event {
  const o = write.involvedObject;
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: options.name, namespace: eventNamespace(write) },
    involvedObject: {
      kind: o.kind,
      apiVersion: o.apiVersion,
      name: o.name,
      ...(o.namespace ? { namespace: o.namespace } : {}),
      ...(o.uid ? { uid: o.uid } : {}),
    },
    type: write.type,
    reason: write.reason,
    message: write.message.slice(0, MAX_MESSAGE_LENGTH),
    source: { component: options.component },
    reportingComponent: options.component,
    reportingInstance: options.instance,
    firstTimestamp: options.now,
    lastTimestamp: options.now,
    count: 1,
  };
}

/** Creates the Event, or bumps the count of the same Event written recently. */
export async function recordEvent(core: KubeClients['core'], write: CreateEventWrite, options: RecordEventOptions): Promise<void> {
  const { correlator, component } = options;
  const key = eventKey(component, write);
  const recent = correlator.recent(key);
  if (recent) {
    // Count synchronously before the await, so two concurrent repeats both count.
    recent.count += 1;
    const count = recent.count;
    try {
      // A merge patch (KubeClients).
      await core.patchNamespacedEvent({
        name: recent.name,
        namespace: recent.namespace,
        body: { count, lastTimestamp: new Date(correlator.now()).toISOString() },
      });
      correlator.remember(key, { name: recent.name, namespace: recent.namespace, count: Math.max(count, recent.count) });
      return;
    } catch (err) {
      // Events expire (one hour by default): a vanished one is simply written anew.
      if (!isApiError(err, 404)) throw err;
      correlator.forget(key);
    }
  }

  const namespace = eventNamespace(write);
  for (let attempt = 0; ; attempt++) {
    const nowMs = correlator.now();
    const name = eventName(write.involvedObject.name, nowMs);
    const body = buildEvent(write, {
      component,
      instance: options.instance ?? hostname(),
      name,
      now: new Date(nowMs),
    });
    try {
      await core.createNamespacedEvent({ namespace, body });
      correlator.remember(key, { name, namespace, count: 1 });
      return;
    } catch (err) {
      if (isApiError(err, 409) && attempt < 2) continue; // name collision: draw another
      throw err;
    }
  }
}
