/**
 * Values read with their schema: the atom a value has (an untyped field is walked as
 * deduced), and the path element of an associative list's item (`listItemToPathElement`).
 */
import { isObject, type JsonObject } from '../json.js';
import { UNTYPED_DEDUCED, type TypeRef } from '../schema/model.js';
import { deduce, fieldType, resolve, type Atom, type ListAtom, type MapAtom } from '../schema/schema.js';
import { keyElement, valueElement, type PathElement } from './fieldpath.js';

export const DEDUCED: TypeRef = { namedType: UNTYPED_DEDUCED };

/** A field the schema does not declare is walked as untyped (only `validate` refuses it). */
export const typeOf = (map: MapAtom, key: string): TypeRef => fieldType(map, key) ?? DEDUCED;

export const atomOf = (ref: TypeRef, value: unknown): Atom => deduce(resolve(ref), value);
export const asList = (value: unknown): unknown[] | undefined => (Array.isArray(value) ? value : undefined);
export const asMap = (value: unknown): JsonObject | undefined => (isObject(value) ? value : undefined);
export const isEmptyOrNull = (value: unknown): boolean => value === null || (isObject(value) && Object.keys(value).length === 0);

/** The path element of a list item, or why it has none (`listItemToPathElement`). */
export function listItemElement(list: ListAtom, item: unknown): PathElement | { error: string } {
  if (!list.associative) return { error: 'invalid indexing of non-associative list' };
  if (list.keys.length === 0) {
    if (Array.isArray(item)) return { error: 'not supported: associative list with lists as elements' };
    if (item === null) return { error: "associative list without keys has an element that's an explicit null" };
    if (isObject(item)) return { error: "associative list without keys has an element that's a map type" };
    return valueElement(item);
  }
  if (item === null) return { error: 'associative list with keys may not have a null element' };
  if (!isObject(item)) return { error: 'associative list with keys may not have non-map elements' };
  const element = resolve(list.elementType).map;
  const fields: Array<readonly [string, unknown]> = [];
  for (const key of list.keys) {
    if (item[key] !== undefined) fields.push([key, item[key]]);
    else {
      const fallback = element?.fields.get(key)?.default;
      if (fallback !== undefined && fallback !== null) fields.push([key, fallback]);
    }
  }
  if (fields.length === 0) {
    return { error: `associative list with keys has an element that omits all key fields [${list.keys.map((k) => JSON.stringify(k)).join(' ')}] (and doesn't have default values for any key fields)` };
  }
  return keyElement(fields);
}

export const elementOf = (list: ListAtom, item: unknown): PathElement | undefined => {
  const pe = listItemElement(list, item);
  return typeof pe === 'string' ? pe : undefined;
};
