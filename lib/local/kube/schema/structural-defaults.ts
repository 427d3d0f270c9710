/**
 * Structural defaulting of custom resources, as apiextensions-apiserver defaults them: a
 * field missing from an object that exists gets the `default` of its schema, at any depth.
 * Only the CRD's own (inline) types are walked: built-in types reached from it (metadata)
 * carry structured-merge-diff's key defaults, which are not API defaults.
 */
import { clone, isObject } from '../json.js';
import type { TypeRef } from './model.js';
import { deduce, resolve } from './schema.js';

/** Mutates `value`. */
export function applySchemaDefaults(value: unknown, ref: TypeRef): void {
  if (ref.namedType) return;
  const atom = deduce(resolve(ref), value);
  if (atom.map && isObject(value)) {
    for (const [name, field] of atom.map.fields) {
      if (value[name] === undefined && field.default !== undefined) value[name] = clone(field.default);
    }
    for (const [key, child] of Object.entries(value)) {
      const type = atom.map.fields.get(key)?.type ?? atom.map.elementType;
      if (type) applySchemaDefaults(child, type);
    }
  } else if (atom.list && Array.isArray(value)) {
    for (const item of value) applySchemaDefaults(item, atom.list.elementType);
  }
}
