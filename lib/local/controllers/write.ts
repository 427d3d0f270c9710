import type { KubeObject, ObjectStore, ResourceName } from '../kube/types.js';
import { changed } from './diff.js';

/**
 * Writes what a sync decided: `desired` is `current` with changes. Metadata and spec go
 * through `update`, status through `updateStatus`, each only when it changed, both guarded
 * by resourceVersion so a concurrent writer makes this fail with Conflict (and the sync
 * retry) instead of being overwritten. Returns the object as last written.
 */
export function writeObject(store: ObjectStore, resource: ResourceName, current: KubeObject, desired: KubeObject): KubeObject {
  let written = current;
  const { status: currentStatus, ...currentRest } = current;
  const { status: desiredStatus, ...desiredRest } = desired;
  if (changed(currentRest, desiredRest)) {
    written = store.update(resource, { ...desiredRest, status: currentStatus } as KubeObject);
  }
  if (changed(currentStatus, desiredStatus)) {
    written = store.updateStatus(resource, { ...written, status: desiredStatus });
  }
  return written;
}
