/**
 * Events the controllers emit, deduplicated in memory. Kubernetes' event recorder folds a
 * repeated event into a count on one object; here the level-triggered syncs would re-emit
 * on every resync, so a repeat of the same (object, type, reason, message) is simply
 * dropped — one Event per situation, not one per second.
 */
import { randomBytes } from 'node:crypto';
import type { KubeObject, ObjectStore } from '../kube/types.js';
import { kubeTime } from './objects.js';

/** An event as the pure sync functions describe it: about `object`, nothing written yet. */
export interface EventSpec {
  object: KubeObject;
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
}

export class EventRecorder {
  private readonly seen = new Set<string>();

  /**
   * @param component `source.component` and `reportingComponent`, e.g. `persistentvolume-controller`.
   * @param memory how many distinct events to remember; the oldest are forgotten first.
   */
  constructor(
    private readonly store: ObjectStore,
    private readonly component: string,
    private readonly memory = 10_000,
  ) {}

  /** Creates the Event unless this one was recorded before. Best effort: a failed write is only forgotten, so a later sync retries it. */
  record(event: EventSpec): void {
    const { object } = event;
    const key = [object.metadata.uid, event.type, event.reason, event.message].join('\u0000');
    if (this.seen.has(key)) return;
    const now = kubeTime();
    try {
      this.store.create('events', {
        apiVersion: 'v1',
        kind: 'Event',
        metadata: {
          name: `${object.metadata.name}.${randomBytes(8).toString('hex')}`,
          namespace: object.metadata.namespace ?? 'default',
        },
        involvedObject: {
          apiVersion: object.apiVersion,
          kind: object.kind,
          namespace: object.metadata.namespace,
          name: object.metadata.name,
          uid: object.metadata.uid,
          resourceVersion: object.metadata.resourceVersion,
        },
        type: event.type,
        reason: event.reason,
        message: event.message,
        source: { component: this.component },
        reportingComponent: this.component,
        reportingInstance: this.component,
        firstTimestamp: now,
        lastTimestamp: now,
        count: 1,
      });
    } catch {
      return;
    }
    this.seen.add(key);
    if (this.seen.size > this.memory) {
      const oldest = this.seen.values().next().value;
      if (oldest !== undefined) this.seen.delete(oldest);
    }
  }
}
