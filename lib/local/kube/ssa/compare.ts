/** `TypedValue.Compare` (typed/compare.go): what one object adds to, changes in and removes from another. */
import { deepEqual } from '../json.js';
import type { TypeRef } from '../schema/model.js';
import { deduce, resolve, type ListAtom } from '../schema/schema.js';
import { FieldSetBuilder, fieldElement, type FieldSet, type PathElement } from './fieldpath.js';
import { asList, asMap, elementOf, typeOf } from './values.js';

export interface Comparison {
  added: FieldSet;
  modified: FieldSet;
  removed: FieldSet;
}

/** `TypedValue.Compare`: the fields `rhs` adds to, changes in and removes from `lhs`. */
export function compare(lhs: unknown, rhs: unknown, ref: TypeRef): Comparison {
  const added = new FieldSetBuilder();
  const modified = new FieldSetBuilder();
  const removed = new FieldSetBuilder();
  const walk = (l: unknown, r: unknown, type: TypeRef, path: PathElement[]): void => {
    const base = resolve(type);
    const atom = r === undefined ? deduce(base, l) : deduce(base, r);
    let inLeaf = false;
    const leaf = (): void => {
      inLeaf = true;
      if (l === undefined) added.insert(path);
      else if (r === undefined) removed.insert(path);
      else if (!deepEqual(l, r)) modified.insert(path);
    };
    if (atom.map) {
      const lm = asMap(l);
      const rm = asMap(r);
      if (atom.map.atomic || ((!lm || Object.keys(lm).length === 0) && (!rm || Object.keys(rm).length === 0))) leaf();
      else {
        for (const key of new Set([...Object.keys(lm ?? {}), ...Object.keys(rm ?? {})])) walk(lm?.[key], rm?.[key], typeOf(atom.map, key), [...path, fieldElement(key)]);
      }
    } else if (atom.list) {
      const ll = asList(l);
      const rl = asList(r);
      if (!atom.list.associative || ((!ll || ll.length === 0) && (!rl || rl.length === 0))) leaf();
      else compareList(atom.list, ll ?? [], rl ?? [], path);
    } else {
      leaf();
    }
    if (!inLeaf) {
      if (l === undefined) added.insert(path);
      else if (r === undefined) removed.insert(path);
    }
  };
  const compareList = (list: ListAtom, ll: unknown[], rl: unknown[], path: PathElement[]): void => {
    const order: PathElement[] = [];
    const group = (items: unknown[], other?: Map<PathElement, unknown[]>): Map<PathElement, unknown[]> => {
      const grouped = new Map<PathElement, unknown[]>();
      for (const item of items) {
        const pe = elementOf(list, item);
        if (pe === undefined) continue;
        const existing = grouped.get(pe);
        if (existing) existing.push(item);
        else {
          grouped.set(pe, [item]);
          if (!other?.has(pe)) order.push(pe);
        }
      }
      return grouped;
    };
    const lv = group(ll);
    const rv = group(rl, lv);
    for (const pe of order) {
      const ls = lv.get(pe) ?? [];
      const rs = rv.get(pe) ?? [];
      const itemPath = [...path, pe];
      if (ls.length <= 1 && rs.length <= 1) walk(ls[0], rs[0], list.elementType, itemPath);
      else if (ls.length >= 2 && rs.length >= 2) {
        if (!deepEqual(ls, rs)) modified.insert(itemPath);
      } else if (ls.length >= 2) {
        if (rs.length !== 0) walk(undefined, rs[0], list.elementType, itemPath);
        removed.insert(itemPath);
      } else {
        if (ls.length !== 0) walk(ls[0], undefined, list.elementType, itemPath);
        added.insert(itemPath);
      }
    }
  };
  walk(lhs, rhs, ref, []);
  return { added: added.build(), modified: modified.build(), removed: removed.build() };
}
