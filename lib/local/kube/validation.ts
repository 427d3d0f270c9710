/**
 * The subset of the API server's validation that catches mistakes volhook could plausibly
 * make: missing required fields of the storage kinds, and changes to immutable fields.
 * An object this store refuses would be refused by a real cluster too (422 Invalid).
 */
import { requestBelowCapacity } from './claim-resize.js';
import type { FieldError } from './errors.js';
import { deepEqual, isObject, type JsonObject } from './json.js';
import type { ResourceInfo } from './resources.js';
import type { KubeObject } from './types.js';

const SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const ACCESS_MODES = ['ReadWriteOnce', 'ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOncePod'];
/** PersistentVolumeSource members; a PV must name exactly one. */
const VOLUME_SOURCES = [
  'csi', 'awsElasticBlockStore', 'hostPath', 'local', 'nfs', 'gcePersistentDisk', 'azureDisk', 'azureFile', 'iscsi', 'fc',
  'rbd', 'cephfs', 'cinder', 'flexVolume', 'glusterfs', 'flocker', 'vsphereVolume', 'quobyte', 'portworxVolume', 'scaleIO', 'storageos', 'photonPersistentDisk',
];

const obj = (value: unknown): JsonObject => (isObject(value) ? value : {});
const text = (value: unknown): string => (typeof value === 'string' ? value : '');

const DNS1035 = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const RBAC_KINDS = new Set(['roles', 'rolebindings', 'clusterroles', 'clusterrolebindings']);

/** `ValidatePathSegmentName`, RBAC's rule for names (`system:controller:x` is fine). */
function pathSegmentName(name: string): FieldError[] {
  if (name === '.' || name === '..') return [{ field: 'metadata.name', type: 'Invalid', value: name, detail: `may not be '${name}'` }];
  const bad = ['/', '%'].find((c) => name.includes(c));
  return bad ? [{ field: 'metadata.name', type: 'Invalid', value: name, detail: `may not contain '${bad}'` }] : [];
}

function validateName(info: ResourceInfo, name: string): FieldError[] {
  if (!name) return [{ field: 'metadata.name', type: 'Required', detail: 'name or generateName is required' }];
  if (RBAC_KINDS.has(info.resource)) return pathSegmentName(name);
  if (info.resource === 'services' && (!DNS1035.test(name) || name.length > 63)) {
    return [{ field: 'metadata.name', type: 'Invalid', value: name, detail: "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character" }];
  }
  const label = info.resource === 'namespaces';
  const pattern = label ? LABEL : SUBDOMAIN;
  if (!pattern.test(name) || name.length > (label ? 63 : 253)) {
    const rule = label ? 'a lowercase RFC 1123 label' : 'a lowercase RFC 1123 subdomain';
    return [{ field: 'metadata.name', type: 'Invalid', value: name, detail: `${rule} must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character` }];
  }
  return [];
}

function validateAccessModes(field: string, modes: unknown): FieldError[] {
  if (!Array.isArray(modes) || modes.length === 0) return [{ field, type: 'Required', detail: 'at least 1 access mode is required' }];
  return modes
    .filter((m) => !ACCESS_MODES.includes(text(m)))
    .map((m) => ({ field, type: 'NotSupported' as const, value: m, detail: `supported values: ${ACCESS_MODES.map((a) => `"${a}"`).join(', ')}` }));
}

function oneOf(field: string, value: unknown, allowed: string[]): FieldError[] {
  return value === undefined || allowed.includes(text(value))
    ? []
    : [{ field, type: 'NotSupported', value, detail: `supported values: ${allowed.map((a) => `"${a}"`).join(', ')}` }];
}

const required = (field: string, value: unknown): FieldError[] =>
  value === undefined || value === null || value === '' ? [{ field, type: 'Required', detail: '' }] : [];

/** The CRDs' `x-kubernetes-validations` rule "exactly one of a and b must be set". */
function exactlyOne(field: string, source: JsonObject, a: string, b: string): FieldError[] {
  const count = [a, b].filter((k) => source[k] !== undefined && source[k] !== null).length;
  return count === 1 ? [] : [{ field, type: 'Invalid', value: 'object', detail: `exactly one of ${a} and ${b} must be set` }];
}

function validateSnapshotKinds(info: ResourceInfo, object: KubeObject): FieldError[] {
  const spec = obj(object.spec);
  switch (info.resource) {
    case 'volumesnapshots': {
      if (!isObject(object.spec)) return [{ field: 'spec', type: 'Required', detail: '' }];
      if (!isObject(spec.source)) return [{ field: 'spec.source', type: 'Required', detail: '' }];
      const errors = exactlyOne('spec.source', spec.source, 'volumeSnapshotContentName', 'persistentVolumeClaimName');
      if (spec.volumeSnapshotClassName === '') {
        errors.push({ field: 'spec.volumeSnapshotClassName', type: 'Invalid', value: '', detail: 'volumeSnapshotClassName must not be the empty string when set' });
      }
      return errors;
    }
    case 'volumesnapshotcontents': {
      if (!isObject(object.spec)) return [{ field: 'spec', type: 'Required', detail: '' }];
      const errors = [
        ...required('spec.deletionPolicy', spec.deletionPolicy),
        ...oneOf('spec.deletionPolicy', spec.deletionPolicy, ['Delete', 'Retain']),
        ...required('spec.driver', spec.driver),
        ...(isObject(spec.source) ? exactlyOne('spec.source', spec.source, 'volumeHandle', 'snapshotHandle') : required('spec.source', undefined)),
        ...oneOf('spec.sourceVolumeMode', spec.sourceVolumeMode, ['Block', 'Filesystem']),
      ];
      if (!isObject(spec.volumeSnapshotRef)) errors.push(...required('spec.volumeSnapshotRef', undefined));
      else if (!text(spec.volumeSnapshotRef.name) || !text(spec.volumeSnapshotRef.namespace)) {
        errors.push({ field: 'spec.volumeSnapshotRef', type: 'Invalid', value: 'object', detail: 'both spec.volumeSnapshotRef.name and spec.volumeSnapshotRef.namespace must be set' });
      }
      return errors;
    }
    case 'volumegroupsnapshots': {
      if (!isObject(object.spec)) return [{ field: 'spec', type: 'Required', detail: '' }];
      if (!isObject(spec.source)) return [{ field: 'spec.source', type: 'Required', detail: '' }];
      const errors = exactlyOne('spec.source', spec.source, 'selector', 'volumeGroupSnapshotContentName');
      if (spec.volumeGroupSnapshotClassName === '') {
        errors.push({ field: 'spec.volumeGroupSnapshotClassName', type: 'Invalid', value: '', detail: 'volumeGroupSnapshotClassName must not be the empty string when set' });
      }
      return errors;
    }
    case 'volumegroupsnapshotcontents': {
      if (!isObject(object.spec)) return [{ field: 'spec', type: 'Required', detail: '' }];
      const errors = [
        ...required('spec.deletionPolicy', spec.deletionPolicy),
        ...oneOf('spec.deletionPolicy', spec.deletionPolicy, ['Delete', 'Retain']),
        ...required('spec.driver', spec.driver),
        ...(isObject(spec.source) ? exactlyOne('spec.source', spec.source, 'volumeHandles', 'groupSnapshotHandles') : required('spec.source', undefined)),
      ];
      if (!isObject(spec.volumeGroupSnapshotRef)) errors.push(...required('spec.volumeGroupSnapshotRef', undefined));
      else if (!text(spec.volumeGroupSnapshotRef.name) || !text(spec.volumeGroupSnapshotRef.namespace)) {
        errors.push({ field: 'spec.volumeGroupSnapshotRef', type: 'Invalid', value: 'object', detail: 'both volumeGroupSnapshotRef.name and volumeGroupSnapshotRef.namespace must be set' });
      }
      return errors;
    }
    case 'volumesnapshotclasses':
    case 'volumegroupsnapshotclasses':
      return [
        ...required('driver', object.driver),
        ...required('deletionPolicy', object.deletionPolicy),
        ...oneOf('deletionPolicy', object.deletionPolicy, ['Delete', 'Retain']),
      ];
    default:
      return [];
  }
}

/** The CRDs' immutability rules (`self == oldSelf`, "required once set"). */
function snapshotImmutable(info: ResourceInfo, next: KubeObject, previous: KubeObject): FieldError[] {
  const source = obj(obj(next.spec).source);
  const old = obj(obj(previous.spec).source);
  const keys =
    info.resource === 'volumesnapshots'
      ? ['persistentVolumeClaimName', 'volumeSnapshotContentName']
      : info.resource === 'volumesnapshotcontents'
        ? ['volumeHandle', 'snapshotHandle']
        : info.resource === 'volumegroupsnapshots'
          ? ['selector', 'volumeGroupSnapshotContentName']
          : info.resource === 'volumegroupsnapshotcontents'
            ? ['volumeHandles', 'groupSnapshotHandles']
            : [];
  const errors: FieldError[] = keys
    .filter((k) => old[k] !== undefined && !deepEqual(source[k], old[k]))
    .map((k) => ({ field: `spec.source.${k}`, type: 'Invalid', value: source[k] ?? null, detail: source[k] === undefined ? `${k} is required once set` : `${k} is immutable` }));
  if (info.resource === 'volumesnapshotcontents') {
    const mode = obj(previous.spec).sourceVolumeMode;
    if (mode !== undefined && !deepEqual(obj(next.spec).sourceVolumeMode, mode)) {
      errors.push({ field: 'spec.sourceVolumeMode', type: 'Invalid', value: obj(next.spec).sourceVolumeMode ?? null, detail: 'sourceVolumeMode is immutable' });
    }
  }
  return errors;
}

function validateSpec(info: ResourceInfo, object: KubeObject): FieldError[] {
  const spec = obj(object.spec);
  switch (info.resource) {
    case 'volumesnapshots':
    case 'volumesnapshotcontents':
    case 'volumesnapshotclasses':
    case 'volumegroupsnapshots':
    case 'volumegroupsnapshotcontents':
    case 'volumegroupsnapshotclasses':
      return validateSnapshotKinds(info, object);
    case 'persistentvolumeclaims': {
      const errors = validateAccessModes('spec.accessModes', spec.accessModes);
      if (obj(obj(spec.resources).requests).storage === undefined) errors.push({ field: 'spec.resources[storage]', type: 'Required', detail: '' });
      return [...errors, ...oneOf('spec.volumeMode', spec.volumeMode, ['Filesystem', 'Block'])];
    }
    case 'persistentvolumes': {
      const errors: FieldError[] = [];
      if (obj(spec.capacity).storage === undefined) errors.push({ field: 'spec.capacity', type: 'Required', detail: '' });
      errors.push(...validateAccessModes('spec.accessModes', spec.accessModes));
      const sources = VOLUME_SOURCES.filter((s) => spec[s] !== undefined && spec[s] !== null);
      if (sources.length === 0) errors.push({ field: 'spec', type: 'Required', detail: 'must specify a volume type' });
      if (sources.length > 1) errors.push({ field: `spec.${sources[1]}`, type: 'Forbidden', detail: 'may not specify more than 1 volume type' });
      if (spec.csi !== undefined) {
        const csi = obj(spec.csi);
        if (!text(csi.driver)) errors.push({ field: 'spec.csi.driver', type: 'Required', detail: '' });
        if (!text(csi.volumeHandle)) errors.push({ field: 'spec.csi.volumeHandle', type: 'Required', detail: '' });
      }
      errors.push(...oneOf('spec.persistentVolumeReclaimPolicy', spec.persistentVolumeReclaimPolicy, ['Delete', 'Recycle', 'Retain']));
      return [...errors, ...oneOf('spec.volumeMode', spec.volumeMode, ['Filesystem', 'Block'])];
    }
    case 'storageclasses': {
      const errors: FieldError[] = [];
      if (!text(object.provisioner)) errors.push({ field: 'provisioner', type: 'Required', detail: '' });
      errors.push(...oneOf('reclaimPolicy', object.reclaimPolicy, ['Delete', 'Retain']));
      return [...errors, ...oneOf('volumeBindingMode', object.volumeBindingMode, ['Immediate', 'WaitForFirstConsumer'])];
    }
    case 'volumeattributesclasses':
      return text(object.driverName) ? [] : [{ field: 'driverName', type: 'Required', detail: '' }];
    case 'volumeattachments': {
      const errors: FieldError[] = [];
      if (!text(spec.attacher)) errors.push({ field: 'spec.attacher', type: 'Required', detail: '' });
      if (!text(spec.nodeName)) errors.push({ field: 'spec.nodeName', type: 'Required', detail: '' });
      const source = obj(spec.source);
      const count = ['persistentVolumeName', 'inlineVolumeSpec'].filter((k) => source[k] !== undefined && source[k] !== null).length;
      if (count !== 1) errors.push({ field: 'spec.source', type: 'Required', detail: 'must specify exactly one of inlineVolumeSpec and persistentVolumeName' });
      return errors;
    }
    case 'leases': {
      // As ValidateLeaseSpec: a duration is positive, transitions are never negative.
      const errors: FieldError[] = [];
      const duration = spec.leaseDurationSeconds;
      if (duration !== undefined && duration !== null && !(Number.isInteger(duration) && (duration as number) > 0)) {
        errors.push({ field: 'spec.leaseDurationSeconds', type: 'Invalid', value: duration, detail: 'must be greater than 0' });
      }
      const transitions = spec.leaseTransitions;
      if (transitions !== undefined && transitions !== null && !(Number.isInteger(transitions) && (transitions as number) >= 0)) {
        errors.push({ field: 'spec.leaseTransitions', type: 'Invalid', value: transitions, detail: 'must be greater than or equal to 0' });
      }
      return errors;
    }
    case 'pods':
      return validateContainers('spec', spec);
    case 'deployments':
      return validateDeployment(spec);
    case 'services':
      return validateService(spec);
    case 'rolebindings':
    case 'clusterrolebindings':
      return validateRoleRef(obj(object.roleRef));
    case 'poddisruptionbudgets':
      return spec.minAvailable !== undefined && spec.maxUnavailable !== undefined
        ? [{ field: 'spec', type: 'Invalid', value: spec, detail: 'minAvailable and maxUnavailable cannot be both set' }]
        : [];
    default:
      return [];
  }
}

function validateContainers(path: string, spec: JsonObject): FieldError[] {
  const containers = spec.containers;
  if (!Array.isArray(containers) || containers.length === 0) return [{ field: `${path}.containers`, type: 'Required', detail: '' }];
  return containers.flatMap((c, i) => [
    ...(text(obj(c).name) ? [] : [{ field: `${path}.containers[${i}].name`, type: 'Required' as const, detail: '' }]),
    ...(text(obj(c).image) ? [] : [{ field: `${path}.containers[${i}].image`, type: 'Required' as const, detail: '' }]),
  ]);
}

/** Does a LabelSelector's matchLabels (matchExpressions unchecked) select `labels`? */
function selects(selector: JsonObject, labels: JsonObject): boolean {
  return Object.entries(obj(selector.matchLabels)).every(([k, v]) => labels[k] === v);
}

function validateDeployment(spec: JsonObject): FieldError[] {
  const template = obj(spec.template);
  const errors = validateContainers('spec.template.spec', obj(template.spec));
  if (!isObject(spec.selector)) return [{ field: 'spec.selector', type: 'Required', detail: '' }, ...errors];
  const labels = obj(obj(template.metadata).labels);
  if (!selects(spec.selector, labels)) errors.push({ field: 'spec.template.metadata.labels', type: 'Invalid', value: labels, detail: '`selector` does not match template `labels`' });
  return errors;
}

function validateService(spec: JsonObject): FieldError[] {
  if (spec.type === 'ExternalName' || spec.clusterIP === 'None') return [];
  const ports = spec.ports;
  if (!Array.isArray(ports) || ports.length === 0) return [{ field: 'spec.ports', type: 'Required', detail: '' }];
  return ports.flatMap((p, i) => {
    const port = obj(p).port;
    return Number.isInteger(port) && (port as number) >= 1 && (port as number) <= 65535
      ? []
      : [{ field: `spec.ports[${i}].port`, type: 'Invalid' as const, value: port ?? 0, detail: 'must be between 1 and 65535, inclusive' }];
  });
}

function validateRoleRef(roleRef: JsonObject): FieldError[] {
  const errors: FieldError[] = [];
  if (!text(roleRef.name)) errors.push({ field: 'roleRef.name', type: 'Required', detail: '' });
  if (roleRef.kind !== 'Role' && roleRef.kind !== 'ClusterRole') errors.push({ field: 'roleRef.kind', type: 'NotSupported', value: roleRef.kind ?? '', detail: 'supported values: "Role", "ClusterRole"' });
  if (roleRef.apiGroup !== 'rbac.authorization.k8s.io') errors.push({ field: 'roleRef.apiGroup', type: 'NotSupported', value: roleRef.apiGroup ?? '', detail: 'supported values: "rbac.authorization.k8s.io"' });
  return errors;
}

/** Errors of an object about to be stored by create (name already resolved from generateName). */
export function validateCreate(info: ResourceInfo, object: KubeObject): FieldError[] {
  return [...validateName(info, object.metadata.name), ...validateSpec(info, object)];
}

function immutableErrors(info: ResourceInfo, next: KubeObject, previous: KubeObject): FieldError[] {
  const spec = obj(next.spec);
  const old = obj(previous.spec);
  switch (info.resource) {
    case 'persistentvolumeclaims': {
      // The PV controller may set volumeName (and a class) once; a bound claim's size may
      // change; the VolumeAttributesClass may change. Nothing else.
      // Bound: named its volume before, or names it in this very update (the binding).
      const bound = text(old.volumeName) || text(spec.volumeName);
      const requests = bound ? obj(old.resources).requests : obj(spec.resources).requests;
      const mutable: JsonObject = { ...spec, resources: { ...obj(spec.resources), requests: obj(old.resources).requests }, volumeAttributesClassName: old.volumeAttributesClassName };
      if (!bound && !deepEqual(requests, obj(old.resources).requests)) {
        return [{ field: 'spec', type: 'Forbidden', detail: 'spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims' }];
      }
      if (!text(old.volumeName)) mutable.volumeName = old.volumeName;
      if (old.storageClassName === undefined || old.storageClassName === null) mutable.storageClassName = old.storageClassName;
      return deepEqual(mutable, old)
        ? requestBelowCapacity(next, previous)
        : [{ field: 'spec', type: 'Forbidden', detail: 'spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims' }];
    }
    case 'persistentvolumes': {
      const errors: FieldError[] = [];
      if (VOLUME_SOURCES.some((s) => !deepEqual(spec[s], old[s]))) {
        errors.push({ field: 'spec.persistentvolumesource', type: 'Forbidden', detail: 'spec.persistentvolumesource is immutable after creation' });
      }
      if (!deepEqual(spec.volumeMode, old.volumeMode)) errors.push({ field: 'spec.volumeMode', type: 'Invalid', value: spec.volumeMode, detail: 'field is immutable' });
      return errors;
    }
    case 'storageclasses':
      return (['parameters', 'provisioner', 'reclaimPolicy', 'volumeBindingMode'] as const)
        .filter((f) => !deepEqual(next[f], previous[f]))
        .map((f) => ({ field: f, type: 'Forbidden' as const, detail: `updates to ${f} are forbidden.` }));
    case 'volumeattachments':
      return deepEqual(spec, old) ? [] : [{ field: 'spec', type: 'Invalid', value: spec, detail: 'field is immutable' }];
    case 'volumesnapshots':
    case 'volumesnapshotcontents':
    case 'volumegroupsnapshots':
    case 'volumegroupsnapshotcontents':
      return snapshotImmutable(info, next, previous);
    case 'volumeattributesclasses':
      return (['driverName', 'parameters'] as const)
        .filter((f) => !deepEqual(next[f], previous[f]))
        .map((f) => ({ field: f, type: 'Forbidden' as const, detail: 'field is immutable' }));
    case 'rolebindings':
    case 'clusterrolebindings':
      return deepEqual(next.roleRef, previous.roleRef) ? [] : [{ field: 'roleRef', type: 'Invalid', value: next.roleRef ?? null, detail: 'cannot change roleRef' }];
    case 'deployments':
      return deepEqual(spec.selector, old.selector) ? [] : [{ field: 'spec.selector', type: 'Invalid', value: spec.selector ?? null, detail: 'field is immutable' }];
    case 'services':
      return old.clusterIP === undefined || deepEqual(spec.clusterIP, old.clusterIP) ? [] : [{ field: 'spec.clusterIPs[0]', type: 'Invalid', value: spec.clusterIP ?? null, detail: 'may not change once set' }];
    case 'configmaps':
    case 'secrets':
      return previous.immutable === true && (['data', 'binaryData', 'immutable'] as const).some((f) => !deepEqual(next[f], previous[f]))
        ? [{ field: 'data', type: 'Forbidden', detail: 'field is immutable when `immutable` is set' }]
        : [];
    default:
      return [];
  }
}

/** Errors of replacing `previous` with `next` (both complete objects, system fields settled). */
export function validateUpdate(info: ResourceInfo, next: KubeObject, previous: KubeObject): FieldError[] {
  const errors = validateSpec(info, next);
  errors.push(...immutableErrors(info, next, previous));
  if (previous.metadata.deletionTimestamp) {
    const before = new Set(previous.metadata.finalizers ?? []);
    const added = (next.metadata.finalizers ?? []).filter((f) => !before.has(f));
    if (added.length > 0) {
      errors.push({
        field: 'metadata.finalizers',
        type: 'Forbidden',
        detail: `no new finalizers can be added if the object is being deleted, found new finalizers []string{${added.map((f) => `"${f}"`).join(', ')}}`,
      });
    }
  }
  return errors;
}
