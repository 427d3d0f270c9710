/**
 * Strategic merge patch for the kinds served here. Go clients and kubectl (client-side
 * apply) compute these from the Go structs' `patchStrategy` tags; the server must merge the
 * same lists by the same keys, or an apply would drop a container or a finalizer.
 */
import { badRequest } from './errors.js';
import { clone, deepEqual, isObject, type JsonObject } from './json.js';

/**
 * Lists with `patchStrategy: merge`, by field path (`[]` marks a list element), mapped to
 * their merge key; '' marks a list of primitives merged as a set. Every other list is atomic.
 * Note `metadata.finalizers` is a merged set, as in `ObjectMeta`: removing one needs
 * `$deleteFromPrimitiveList/finalizers` (or a JSON/merge patch of the whole list).
 */
const MERGE_KEYS: Record<string, string> = {
  'metadata.finalizers': '',
  'metadata.ownerReferences': 'uid',
  'status.conditions': 'type',
  'status.addresses': 'type',
  // Service
  'spec.ports': 'port',
};
// A Pod's spec, and a Deployment's pod template: the same PodSpec tags.
for (const podSpec of ['spec', 'spec.template.spec']) {
  MERGE_KEYS[`${podSpec}.volumes`] = 'name';
  MERGE_KEYS[`${podSpec}.imagePullSecrets`] = 'name';
  MERGE_KEYS[`${podSpec}.hostAliases`] = 'ip';
  for (const list of ['containers', 'initContainers', 'ephemeralContainers']) {
    const containers = `${podSpec}.${list}`;
    MERGE_KEYS[containers] = 'name';
    MERGE_KEYS[`${containers}[].env`] = 'name';
    MERGE_KEYS[`${containers}[].ports`] = 'containerPort';
    MERGE_KEYS[`${containers}[].volumeMounts`] = 'mountPath';
    MERGE_KEYS[`${containers}[].volumeDevices`] = 'devicePath';
  }
}
MERGE_KEYS['spec.template.metadata.finalizers'] = '';

const DELETE = Symbol('delete');

function isDirective(key: string): boolean {
  return key === '$patch' || key === '$retainKeys' || key.startsWith('$setElementOrder/') || key.startsWith('$deleteFromPrimitiveList/');
}

function stripDirectives(value: unknown): unknown {
  if (Array.isArray(value)) return value.filter((e) => !(isObject(e) && e.$patch !== undefined && Object.keys(e).length === 1)).map(stripDirectives);
  if (!isObject(value)) return value;
  const result: JsonObject = {};
  for (const [key, child] of Object.entries(value)) if (!isDirective(key)) result[key] = stripDirectives(child);
  return result;
}

function mergeMap(original: unknown, patch: JsonObject, path: string): JsonObject | typeof DELETE {
  if (patch.$patch === 'delete') return DELETE;
  if (patch.$patch === 'replace') return stripDirectives(patch) as JsonObject;
  if (patch.$patch !== undefined && patch.$patch !== 'merge') throw badRequest(`unknown patch type: ${String(patch.$patch)}`);
  const result: JsonObject = isObject(original) ? clone(original) : {};
  for (const [key, value] of Object.entries(patch)) {
    if (key.startsWith('$deleteFromPrimitiveList/')) {
      const field = key.slice('$deleteFromPrimitiveList/'.length);
      const current = result[field];
      if (Array.isArray(current) && Array.isArray(value)) result[field] = current.filter((item) => !value.some((v) => deepEqual(v, item)));
      continue;
    }
    if (isDirective(key)) continue;
    const childPath = path ? `${path}.${key}` : key;
    if (value === null) {
      delete result[key];
    } else if (isObject(value)) {
      const merged = mergeMap(result[key], value, childPath);
      if (merged === DELETE) delete result[key];
      else result[key] = merged;
    } else if (Array.isArray(value) && MERGE_KEYS[childPath] !== undefined) {
      result[key] = mergeList(result[key], value, childPath, MERGE_KEYS[childPath] as string);
    } else {
      result[key] = stripDirectives(clone(value));
    }
  }
  const retain = patch.$retainKeys;
  if (Array.isArray(retain)) for (const key of Object.keys(result)) if (!retain.includes(key)) delete result[key];
  return result;
}

function mergeList(original: unknown, patch: unknown[], path: string, mergeKey: string): unknown[] {
  if (patch.some((e) => isObject(e) && e.$patch === 'replace')) return stripDirectives(patch) as unknown[];
  const result = Array.isArray(original) ? clone(original) : [];
  if (mergeKey === '') {
    for (const value of patch) if (!result.some((item) => deepEqual(item, value))) result.push(clone(value));
    return result;
  }
  for (const element of patch) {
    if (!isObject(element) || element[mergeKey] === undefined) {
      throw badRequest(`map: ${JSON.stringify(element)} does not contain declared merge key: ${mergeKey}`);
    }
    const index = result.findIndex((item) => isObject(item) && deepEqual(item[mergeKey], element[mergeKey]));
    const merged = mergeMap(index >= 0 ? result[index] : undefined, element, `${path}[]`);
    if (merged === DELETE) {
      if (index >= 0) result.splice(index, 1);
    } else if (index >= 0) {
      result[index] = merged;
    } else {
      result.push(merged);
    }
  }
  return result;
}

/** Applies a strategic merge patch (`application/strategic-merge-patch+json`). */
export function applyStrategicMergePatch<T>(document: T, patch: unknown): T {
  if (!isObject(patch)) throw badRequest('a strategic merge patch must be a JSON object');
  const merged = mergeMap(document, patch, '');
  if (merged === DELETE) throw badRequest('$patch: delete of the whole object is not supported');
  return merged as T;
}
