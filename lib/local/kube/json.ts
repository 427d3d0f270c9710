/** JSON helpers shared by the store, the patchers and the server. Objects are plain JSON. */

export type JsonObject = Record<string, unknown>;

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A deep copy that shares nothing with the store, so callers may mutate what they get. */
export function clone<T>(value: T): T {
  return structuredClone(value);
}

/** Structural equality of JSON values; key order does not matter, array order does. */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((item, i) => deepEqual(item, b[i]));
  }
  if (isObject(a) && isObject(b)) {
    const keysA = Object.keys(a).filter((k) => a[k] !== undefined);
    const keysB = Object.keys(b).filter((k) => b[k] !== undefined);
    return keysA.length === keysB.length && keysA.every((k) => deepEqual(a[k], b[k]));
  }
  return false;
}

/** Reads a dotted path (`spec.nodeName`); undefined when any step is missing. */
export function getPath(object: unknown, path: string): unknown {
  let current: unknown = object;
  for (const step of path.split('.')) {
    if (!isObject(current)) return undefined;
    current = current[step];
  }
  return current;
}

/** Returns the object at `key`, creating an empty one when absent or not an object. */
export function ensureObject(parent: JsonObject, key: string): JsonObject {
  const existing = parent[key];
  if (isObject(existing)) return existing;
  const created: JsonObject = {};
  parent[key] = created;
  return created;
}

/** RFC 3339 with whole seconds, the form Kubernetes writes `metav1.Time` in. */
export function kubeTimestamp(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** `value` without the null entries of its objects, at every depth: what decoding into API types leaves of them. */
export function withoutNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutNulls);
  if (!isObject(value)) return value;
  const out: JsonObject = {};
  for (const [key, child] of Object.entries(value)) if (child !== null) out[key] = withoutNulls(child);
  return out;
}
