/** `TypedValue.Merge` (typed/merge.go): an applied configuration over a live object. */
import type { JsonObject } from '../json.js';
import type { TypeRef } from '../schema/model.js';
import { deduce, resolve, type ListAtom } from '../schema/schema.js';
import { pathElementText, type PathElement } from './fieldpath.js';
import { asList, asMap, listItemElement, typeOf } from './values.js';

/**
 * `TypedValue.Merge`: `rhs` (an applied configuration) over `lhs` (the live object). Leaves,
 * atomic lists and atomic maps are replaced; separable maps merge by key; associative lists
 * merge by item, the applied order kept for the items it names.
 */
export function merge(lhs: unknown, rhs: unknown, ref: TypeRef): unknown {
  return mergeValue(lhs, rhs, ref);
}

function mergeValue(lhs: unknown, rhs: unknown, ref: TypeRef): unknown {
  const base = resolve(ref);
  const atom = rhs === undefined ? deduce(base, lhs) : deduce(base, rhs);
  const leaf = (): unknown => (rhs !== undefined ? rhs : lhs);
  if (atom.map) {
    const l = asMap(lhs);
    const r = asMap(rhs);
    const bothEmpty = (!l || Object.keys(l).length === 0) && (!r || Object.keys(r).length === 0);
    if (atom.map.atomic || bothEmpty) return leaf();
    const out: JsonObject = {};
    for (const key of new Set([...Object.keys(l ?? {}), ...Object.keys(r ?? {})])) {
      const merged = mergeValue(l?.[key], r?.[key], typeOf(atom.map, key));
      if (merged !== undefined) out[key] = merged;
    }
    return Object.keys(out).length > 0 ? out : undefined;
  }
  if (atom.list) {
    const l = asList(lhs);
    const r = asList(rhs);
    if (!atom.list.associative || ((!l || l.length === 0) && (!r || r.length === 0))) return leaf();
    return mergeList(atom.list, l ?? [], r ?? []);
  }
  return leaf();
}

/** `mergingWalker.visitListItems`: live items in their order, applied ones where the applied order puts them. */
function mergeList(list: ListAtom, lhs: unknown[], rhs: unknown[]): unknown[] | undefined {
  const index = (items: unknown[], allowDuplicates: boolean): { pes: PathElement[]; values: Map<PathElement, unknown> } => {
    const pes: PathElement[] = [];
    const values = new Map<PathElement, unknown>();
    for (const item of items) {
      const pe = listItemElement(list, item);
      if (typeof pe !== 'string') throw new TypedError(`element: ${pe.error}`);
      if (values.has(pe)) {
        if (!allowDuplicates) throw new TypedError(`duplicate entries for key ${pathElementText(pe)}`);
        values.set(pe, null);
      } else values.set(pe, item);
      pes.push(pe);
    }
    return { pes, values };
  };
  const right = index(rhs, false);
  const left = index(lhs, true);
  const shared = right.pes.filter((pe) => left.values.has(pe));
  let nextShared = shared.shift();
  const mergedRight = new Set<PathElement>();
  const out: unknown[] = [];
  const push = (pe: PathElement, l: unknown, r: unknown): void => {
    const merged = mergeValue(l, r, list.elementType);
    if (merged !== undefined) out.push(merged);
  };
  let li = 0;
  let ri = 0;
  while (li < left.pes.length || ri < right.pes.length) {
    if (li < left.pes.length && ri < right.pes.length) {
      const pe = left.pes[li] as PathElement;
      if (pe === right.pes[ri]) {
        mergedRight.add(pe);
        push(pe, left.values.get(pe), right.values.get(pe));
        li++;
        ri++;
        nextShared = shared.shift();
        continue;
      }
      if (right.values.has(pe) && nextShared !== undefined && nextShared !== pe) {
        li++;
        continue;
      }
    }
    if (li < left.pes.length) {
      const pe = left.pes[li] as PathElement;
      if (!right.values.has(pe)) {
        push(pe, lhs[li], undefined);
        li++;
        continue;
      } else if (mergedRight.has(pe)) {
        li++;
      }
    }
    if (ri < right.pes.length) {
      const pe = right.pes[ri] as PathElement;
      mergedRight.add(pe);
      push(pe, left.values.get(pe), right.values.get(pe));
      ri++;
      if (nextShared === pe) nextShared = shared.shift();
    }
  }
  return out.length > 0 ? out : undefined;
}

/** A value the walk cannot handle (a duplicate key in an applied list, an item without its key). */
export class TypedError extends Error {}
