/**
 * Values walked with their schema, as structured-merge-diff's `typed` package walks them:
 * the field set a value owns, the merge of an applied configuration into a live object, the
 * comparison of two objects, removing a set of fields, and validation. Ported rule for rule
 * (typed/tofieldset.go, merge.go, compare.go, remove.go, validate.go), because ownership and
 * pruning follow from these rules in ways a simpler walk gets subtly wrong (an empty list
 * owns nothing; an emptied map becomes null; struct fields are not members unless empty).
 */
import { deepEqual, isObject, type JsonObject } from '../json.js';
import { UNTYPED_DEDUCED, type TypeRef } from '../schema/model.js';
import { deduce, fieldType, resolve, type Atom, type ListAtom, type MapAtom } from '../schema/schema.js';
import { FieldSet, FieldSetBuilder, fieldElement, keyElement, pathElementText, valueElement, type Path, type PathElement } from './fieldpath.js';

const DEDUCED: TypeRef = { namedType: UNTYPED_DEDUCED };

/** A field the schema does not declare is walked as untyped (only `validate` refuses it). */
const typeOf = (map: MapAtom, key: string): TypeRef => fieldType(map, key) ?? DEDUCED;

const atomOf = (ref: TypeRef, value: unknown): Atom => deduce(resolve(ref), value);
const asList = (value: unknown): unknown[] | undefined => (Array.isArray(value) ? value : undefined);
const asMap = (value: unknown): JsonObject | undefined => (isObject(value) ? value : undefined);
const isEmptyOrNull = (value: unknown): boolean => value === null || (isObject(value) && Object.keys(value).length === 0);

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

const elementOf = (list: ListAtom, item: unknown): PathElement | undefined => {
  const pe = listItemElement(list, item);
  return typeof pe === 'string' ? pe : undefined;
};

// ---- ToFieldSet ----

/** The fields a value sets: leaves, list items, map entries, and empty or null struct fields. */
export function toFieldSet(value: unknown, ref: TypeRef): FieldSet {
  const builder = new FieldSetBuilder();
  fieldSetOf(value, ref, [], builder);
  return builder.build();
}

function fieldSetOf(value: unknown, ref: TypeRef, path: PathElement[], out: FieldSetBuilder): void {
  const atom = atomOf(ref, value);
  if (atom.map) {
    if (atom.map.atomic) return out.insert(path);
    const map = asMap(value);
    if (!map) return;
    for (const [key, child] of Object.entries(map)) {
      const childPath = [...path, fieldElement(key)];
      fieldSetOf(child, typeOf(atom.map, key), childPath, out);
      if (isEmptyOrNull(child) || !atom.map.fields.has(key)) out.insert(childPath);
    }
    return;
  }
  if (atom.scalar) return out.insert(path);
  if (atom.list) {
    if (!atom.list.associative) return out.insert(path);
    const list = asList(value);
    if (!list) return;
    const elements = list.map((item) => elementOf(atom.list as ListAtom, item));
    const duplicated = new Set(elements.filter((pe, i) => pe !== undefined && elements.indexOf(pe) !== i));
    for (const pe of duplicated) out.insert([...path, pe as PathElement]);
    list.forEach((item, i) => {
      const pe = elements[i];
      if (pe === undefined || duplicated.has(pe)) return;
      fieldSetOf(item, (atom.list as ListAtom).elementType, [...path, pe], out);
      out.insert([...path, pe]);
    });
  }
}

// ---- Merge ----

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

// ---- Compare ----

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

// ---- RemoveItems ----

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

/** `Set.EnsureNamedFieldsAreMembers`: struct fields with members below them become members too (maps' keys do not). */
export function ensureNamedFieldsAreMembers(set: FieldSet, ref: TypeRef | undefined): FieldSet {
  if (set.empty()) return set;
  const atom: Atom = ref ? resolve(ref) : {};
  const members = new Set(set.members);
  const children = new Map<PathElement, FieldSet>();
  for (const [pe, child] of set.children) {
    let childRef: TypeRef | undefined;
    if (pe.startsWith('f:') && atom.map) {
      const name = pe.slice(2);
      if (atom.map.fields.has(name)) members.add(pe);
      childRef = fieldType(atom.map, name);
    } else if (pe.startsWith('k:') && atom.list) {
      childRef = atom.list.elementType;
    }
    children.set(pe, ensureNamedFieldsAreMembers(child, childRef));
  }
  return FieldSet.fromParts(members, children);
}

// ---- Validate ----

export interface ValidationError {
  path: string;
  message: string;
}

/** SMD's `ValidationErrors.Error()`: one error as `path: message`, several as an indented list. */
export function validationText(errors: readonly ValidationError[]): string {
  const one = (e: ValidationError): string => (e.path ? `${e.path}: ${e.message}` : e.message);
  return errors.length === 1 ? one(errors[0] as ValidationError) : ['errors:', ...errors.map((e) => `  ${one(e)}`)].join('\n');
}

function scalarError(scalar: Atom['scalar'], value: unknown): string | undefined {
  if (value === null || value === undefined) return undefined;
  const kind = typeof value;
  switch (scalar) {
    case 'numeric':
      return kind === 'number' ? undefined : `expected numeric (int or float), got ${Array.isArray(value) ? '[]interface {}' : kind === 'object' ? 'map[string]interface {}' : kind}`;
    case 'string':
      return kind === 'string' ? undefined : `expected string, got ${JSON.stringify(value)}`;
    case 'boolean':
      return kind === 'boolean' ? undefined : `expected boolean, got ${JSON.stringify(value)}`;
    default:
      return kind === 'number' || kind === 'string' || kind === 'boolean' ? undefined : `expected any scalar, got ${JSON.stringify(value)}`;
  }
}

/** `TypedValue.Validate` (what `ObjectToTyped` checks): fields the schema lacks, wrong scalar types, duplicate list keys. */
export function validate(value: unknown, ref: TypeRef, options: { allowDuplicates?: boolean } = {}): ValidationError[] {
  const errors: ValidationError[] = [];
  const walk = (v: unknown, type: TypeRef, path: Path): void => {
    const atom = atomOf(type, v);
    const at = path.map(pathElementText).join('');
    if (atom.map) {
      if (v === null) return;
      const map = asMap(v);
      if (!map) return void errors.push({ path: at, message: `expected map, got ${JSON.stringify(v)}` });
      for (const [key, child] of Object.entries(map)) {
        const childType = fieldType(atom.map, key);
        if (!childType) {
          errors.push({ path: `${at}.${key}`, message: 'field not declared in schema' });
          return;
        }
        walk(child, childType, [...path, fieldElement(key)]);
      }
      return;
    }
    if (atom.list) {
      if (v === null) return;
      const list = asList(v);
      if (!list) return void errors.push({ path: at, message: `expected list, got ${JSON.stringify(v)}` });
      const seen = new Set<PathElement>();
      for (const [i, item] of list.entries()) {
        let pe: PathElement = `i:${i}`;
        if (atom.list.associative) {
          const found = listItemElement(atom.list, item);
          if (typeof found !== 'string') return void errors.push({ path: at, message: `element ${i}: ${found.error}` });
          if (seen.has(found) && !options.allowDuplicates) errors.push({ path: at, message: `duplicate entries for key ${pathElementText(found)}` });
          seen.add(found);
          pe = found;
        }
        walk(item, atom.list.elementType, [...path, pe]);
      }
      return;
    }
    const problem = scalarError(atom.scalar, v);
    if (problem) errors.push({ path: at, message: problem });
  };
  walk(value, ref, []);
  return errors;
}

// ---- Unknown fields (strict decoding) ----

/**
 * Fields the schema does not declare, named as a strict JSON decode names them
 * (`spec.template.spec.containers[0].imagePullPolcy`), and the value without them, as
 * decoding into the API types (or CRD pruning) drops them.
 */
export function unknownFields(value: unknown, ref: TypeRef): { unknown: string[]; pruned: unknown } {
  const unknown: string[] = [];
  const walk = (v: unknown, type: TypeRef, at: string): unknown => {
    const atom = atomOf(type, v);
    if (atom.map && isObject(v)) {
      const out: JsonObject = {};
      for (const [key, child] of Object.entries(v)) {
        const childType = fieldType(atom.map, key);
        const childAt = at ? `${at}.${key}` : key;
        if (!childType) unknown.push(childAt);
        else out[key] = walk(child, childType, childAt);
      }
      return out;
    }
    if (atom.list && Array.isArray(v)) return v.map((item, i) => walk(item, (atom.list as ListAtom).elementType, `${at}[${i}]`));
    return v;
  };
  const pruned = walk(value, ref, '');
  return { unknown, pruned };
}
