/** `TypedValue.RemoveItems` (typed/remove.go): a value without a set of its fields. */
import type { JsonObject } from '../json.js';
import type { TypeRef } from '../schema/model.js';
import { FieldSet, fieldElement } from './fieldpath.js';
import { asList, asMap, atomOf, elementOf, typeOf } from './values.js';

/**
 * `TypedValue.RemoveItems`: `value` without the members of `set`. A map or list left empty
 * becomes null (as upstream; decoding drops it), an atomic one reached by a child path too.
 */
export function removeItems(value: unknown, set: FieldSet, ref: TypeRef): unknown {
  if (set.empty()) return value;
  const out = removing(value, set, ref);
  return out === undefined ? null : out;
}

function removing(value: unknown, set: FieldSet, ref: TypeRef): unknown {
  const atom = atomOf(ref, value);
  if (atom.map) {
    const map = asMap(value);
    if (!map || Object.keys(map).length === 0 || atom.map.atomic) return undefined;
    const out: JsonObject = {};
    for (const [key, child] of Object.entries(map)) {
      const pe = fieldElement(key);
      if (set.members.has(pe)) continue;
      const subset = set.withPrefix(pe);
      out[key] = subset.empty() ? child : (removing(child, subset, typeOf(atom.map, key)) ?? null);
    }
    return Object.keys(out).length > 0 ? out : undefined;
  }
  if (atom.list) {
    const list = asList(value);
    if (!list || list.length === 0 || !atom.list.associative) return undefined;
    const out: unknown[] = [];
    for (const item of list) {
      const pe = elementOf(atom.list, item);
      if (pe !== undefined && set.members.has(pe)) continue;
      const subset = pe === undefined ? FieldSet.EMPTY : set.withPrefix(pe);
      out.push(subset.empty() ? item : (removing(item, subset, atom.list.elementType) ?? null));
    }
    return out.length > 0 ? out : undefined;
  }
  return value;
}
