/** The common snapshot controller's step for one VolumeSnapshotContent (`syncContent`). */
import { annotation, hasFinalizer, isDeleting, setAnnotation, setFinalizer } from './objects.js';
import {
  ANN_SNAPSHOT_BEING_DELETED,
  CONTENT_BOUND_FINALIZER,
  SNAPSHOT_AS_SOURCE_FINALIZER,
  SNAPSHOT_BOUND_FINALIZER,
} from './snapshot-objects.js';
import type { VolumeSnapshot, VolumeSnapshotContent } from './snapshot-objects.js';
import { Step, type SnapshotStep } from './snapshot-step.js';

/** What a content's sync needs beyond the content: the snapshot its ref names, if any. */
export interface ContentWorld {
  snapshot(namespace: string, name: string): VolumeSnapshot | undefined;
}

/** One step of the common controller for one VolumeSnapshotContent (`syncContent`). */
export function syncContent(world: ContentWorld, content: VolumeSnapshotContent): SnapshotStep {
  const step = new Step();
  const source = content.spec.source;
  if ((source.volumeHandle === undefined) === (source.snapshotHandle === undefined)) {
    step.event(content, 'Warning', 'ContentValidationError', 'Exactly one of VolumeHandle and SnapshotHandle should be specified');
    return step;
  }
  const ref = content.spec.volumeSnapshotRef;
  // Pre-bound to a snapshot not bound back yet: the snapshot's sync binds it.
  if (!ref.uid) return step;
  if (!isDeleting(content) && !hasFinalizer(content, CONTENT_BOUND_FINALIZER)) {
    const desired = structuredClone(content);
    setFinalizer(desired, CONTENT_BOUND_FINALIZER, true);
    step.writes.push({ op: 'update', resource: 'volumesnapshotcontents', current: content, desired });
    return step;
  }
  const found = ref.name && ref.namespace ? world.snapshot(ref.namespace, ref.name) : undefined;
  // A snapshot of that name with another uid is a new one: the content's own is gone, and a
  // content whose snapshot is gone is never deleted from here (it may hold someone's data).
  const snapshot = found?.metadata.uid === ref.uid ? found : undefined;
  const candidate = snapshot && isDeleting(snapshot) && (hasFinalizer(snapshot, SNAPSHOT_AS_SOURCE_FINALIZER) || hasFinalizer(snapshot, SNAPSHOT_BOUND_FINALIZER));
  if (candidate && annotation(content, ANN_SNAPSHOT_BEING_DELETED) === undefined) {
    const desired = structuredClone(content);
    setAnnotation(desired, ANN_SNAPSHOT_BEING_DELETED, 'yes');
    step.writes.push({ op: 'update', resource: 'volumesnapshotcontents', current: content, desired });
  }
  return step;
}
