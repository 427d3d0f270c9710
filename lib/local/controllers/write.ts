import type { KubeObject, ObjectStore, ResourceName, WriteOptions } from '../kube/types.js';
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

/**
 * The store as one component of the control plane writes to it: its writes that name no field
 * manager are recorded under `fieldManager`, as kube-apiserver names them from the component's
 * User-Agent (`kube-controller-manager/v1.36.3 (linux/amd64) …` → `kube-controller-manager`).
 */
export function writingAs(store: ObjectStore, fieldManager: string): ObjectStore {
  const named = <T extends WriteOptions>(options: T | undefined): T => ({ ...options, fieldManager: options?.fieldManager ?? fieldManager }) as T;
  return {
    get: (resource, name, namespace) => store.get(resource, name, namespace),
    list: (resource, options) => store.list(resource, options),
    create: (resource, object, options) => store.create(resource, object, named(options)),
    update: (resource, object, options) => store.update(resource, object, named(options)),
    updateStatus: (resource, object, options) => store.updateStatus(resource, object, named(options)),
    patch: (resource, name, namespace, type, patch, options) => store.patch(resource, name, namespace, type, patch, named(options)),
    apply: (resource, name, namespace, config, options) => store.apply(resource, name, namespace, config, options),
    delete: (resource, name, namespace, options) => store.delete(resource, name, namespace, options),
    watch: (resource, options, onEvent) => store.watch(resource, options, onEvent),
  };
}
