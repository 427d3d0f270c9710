/**
 * One step of the local snapshot controller: the writes to make, in order, and the events.
 * Built by the pure syncs in `snapshot-sync.ts` / `snapshot-content-sync.ts`, applied by
 * `snapshot-controller.ts`.
 */
import type { EventSpec } from './events.js';
import type { PersistentVolumeClaim } from './objects.js';
import type { VolumeSnapshot, VolumeSnapshotContent } from './snapshot-objects.js';

/** One write of a step. `update` carries the object as read and as it should be. */
export type SnapshotWrite =
  | { op: 'update'; resource: 'volumesnapshots'; current: VolumeSnapshot; desired: VolumeSnapshot }
  | { op: 'update'; resource: 'volumesnapshotcontents'; current: VolumeSnapshotContent; desired: VolumeSnapshotContent }
  | { op: 'update'; resource: 'persistentvolumeclaims'; current: PersistentVolumeClaim; desired: PersistentVolumeClaim }
  | { op: 'create'; resource: 'volumesnapshotcontents'; object: VolumeSnapshotContent }
  | { op: 'delete'; resource: 'volumesnapshotcontents'; name: string; uid: string };

export interface SnapshotStep {
  writes: SnapshotWrite[];
  events: EventSpec[];
}

/** `namespace/name`, as upstream names a snapshot in messages. */
export const key = (s: VolumeSnapshot) => `${s.metadata.namespace}/${s.metadata.name}`;

export class Step implements SnapshotStep {
  writes: SnapshotWrite[] = [];
  events: EventSpec[] = [];

  event(object: VolumeSnapshot | VolumeSnapshotContent, type: EventSpec['type'], reason: string, message: string): void {
    this.events.push({ object, type, reason, message });
  }

  /**
   * `updateSnapshotErrorStatusWithEvent`: sets `status.error` (and `readyToUse: false` when
   * asked) with a Warning, unless the same message is already there.
   */
  errorStatus(snapshot: VolumeSnapshot, setReadyToFalse: boolean, reason: string, message: string, now: string): void {
    if (snapshot.status?.error?.message === message) return;
    const desired = structuredClone(snapshot);
    desired.status = { ...desired.status, error: { time: now, message } };
    if (setReadyToFalse) desired.status.readyToUse = false;
    this.writes.push({ op: 'update', resource: 'volumesnapshots', current: snapshot, desired });
    this.event(snapshot, 'Warning', reason, message);
  }
}
