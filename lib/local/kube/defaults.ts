/**
 * What the real API server fills in, so objects read back here look like a cluster's: code
 * that works only because a default happened to be absent would break on a real cluster.
 */
import { ensureObject, isObject, type JsonObject } from './json.js';
import { resourceInfo } from './resources.js';
import { applySchemaDefaults, resolve, rootType } from './schema/index.js';
import type { KubeObject, ResourceName } from './types.js';
import { deploymentDefaults, podSpecDefaults, secretDefaults, serviceDefaults } from './workload-defaults.js';

/**
 * Status a create may not set (the registry's PrepareForCreate); undefined = keep the client's,
 * null = none at all (custom resources with a status subresource drop it on create).
 */
export function statusOnCreate(resource: ResourceName, now: string): JsonObject | null | undefined {
  switch (resource) {
    case 'volumesnapshots':
    case 'volumesnapshotcontents':
    case 'volumegroupsnapshots':
    case 'volumegroupsnapshotcontents':
      return null;
    case 'persistentvolumeclaims':
      return { phase: 'Pending' };
    case 'persistentvolumes':
      return { phase: 'Pending', lastPhaseTransitionTime: now };
    case 'volumeattachments':
      return { attached: false };
    case 'pods':
      return { phase: 'Pending' };
    case 'namespaces':
      return { phase: 'Active' };
    // PrepareForCreate of each: the status a controller would write, reset.
    case 'deployments':
      return {};
    case 'services':
      return { loadBalancer: {} };
    case 'poddisruptionbudgets':
      return { disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0 };
    case 'servicemonitors':
      return null;
    default:
      return undefined;
  }
}

function setDefault(target: JsonObject, key: string, value: unknown): void {
  if (target[key] === undefined || target[key] === null) target[key] = value;
}

/** Scheme defaults, applied on every write as decoding does on the real server. Mutates `object`. */
export function applyDefaults(resource: ResourceName, object: KubeObject): void {
  switch (resource) {
    case 'persistentvolumeclaims': {
      setDefault(ensureObject(object, 'spec'), 'volumeMode', 'Filesystem');
      setDefault(ensureObject(object, 'status'), 'phase', 'Pending');
      break;
    }
    case 'persistentvolumes': {
      const spec = ensureObject(object, 'spec');
      setDefault(spec, 'persistentVolumeReclaimPolicy', 'Retain');
      setDefault(spec, 'volumeMode', 'Filesystem');
      setDefault(ensureObject(object, 'status'), 'phase', 'Pending');
      break;
    }
    case 'volumeattachments': {
      // SetDefaults_PersistentVolumeSpec reaches the PersistentVolumeSpec a migrated inline
      // volume carries (seen on v1.36: docs/divergences.md).
      const source = ensureObject(ensureObject(object, 'spec'), 'source');
      if (isObject(source.inlineVolumeSpec)) setDefault(source.inlineVolumeSpec, 'volumeMode', 'Filesystem');
      break;
    }
    case 'storageclasses':
      setDefault(object, 'reclaimPolicy', 'Delete');
      setDefault(object, 'volumeBindingMode', 'Immediate');
      break;
    case 'pods':
      podSpecDefaults(ensureObject(object, 'spec'));
      setDefault(ensureObject(object, 'status'), 'phase', 'Pending');
      break;
    case 'deployments':
      deploymentDefaults(object);
      break;
    case 'services':
      serviceDefaults(object);
      break;
    case 'secrets':
      secretDefaults(object);
      break;
    case 'namespaces': {
      setDefault(ensureObject(object, 'spec'), 'finalizers', ['kubernetes']);
      setDefault(ensureObject(object, 'status'), 'phase', 'Active');
      ensureObject(object.metadata, 'labels')['kubernetes.io/metadata.name'] = object.metadata.name;
      break;
    }
    case 'csidrivers': {
      const spec = ensureObject(object, 'spec');
      setDefault(spec, 'attachRequired', true);
      setDefault(spec, 'podInfoOnMount', false);
      setDefault(spec, 'requiresRepublish', false);
      setDefault(spec, 'storageCapacity', false);
      setDefault(spec, 'seLinuxMount', false);
      setDefault(spec, 'fsGroupPolicy', 'ReadWriteOnceWithFSType');
      setDefault(spec, 'volumeLifecycleModes', ['Persistent']);
      break;
    }
    case 'events':
      setDefault(object, 'source', {});
      setDefault(object, 'reportingComponent', '');
      setDefault(object, 'reportingInstance', '');
      break;
    default:
      break;
  }
  const info = resourceInfo(resource);
  if (info.custom) {
    const root = resolve(rootType(info)).map;
    for (const [name, field] of root?.fields ?? []) if (name !== 'metadata' && object[name] !== undefined) applySchemaDefaults(object[name], field.type);
  }
}

/**
 * Event timestamps the recorder would have set: an Event written by hand (or by the backend)
 * without them still sorts and ages correctly in `kubectl describe`.
 */
export function defaultEventTimes(object: KubeObject, now: string): void {
  if (object.eventTime !== undefined && object.eventTime !== null) return;
  setDefault(object, 'firstTimestamp', now);
  setDefault(object, 'lastTimestamp', object.firstTimestamp);
  setDefault(object, 'count', 1);
}

/** The annotation names the DefaultStorageClass admission plugin recognises. */
const DEFAULT_CLASS = ['storageclass.kubernetes.io/is-default-class', 'storageclass.beta.kubernetes.io/is-default-class'];

/**
 * The class the DefaultStorageClass admission plugin writes into a PVC created without
 * `spec.storageClassName` (not with `""`, which means "no class"): the newest default class.
 */
export function defaultStorageClassName(pvc: KubeObject, classes: KubeObject[]): string | undefined {
  const spec = isObject(pvc.spec) ? pvc.spec : {};
  if (spec.storageClassName !== undefined && spec.storageClassName !== null) return undefined;
  if (pvc.metadata.annotations?.['volume.beta.kubernetes.io/storage-class'] !== undefined) return undefined;
  const defaults = classes
    .filter((sc) => DEFAULT_CLASS.some((key) => sc.metadata.annotations?.[key] === 'true'))
    .sort((a, b) => b.metadata.creationTimestamp.localeCompare(a.metadata.creationTimestamp) || a.metadata.name.localeCompare(b.metadata.name));
  return defaults[0]?.metadata.name;
}
