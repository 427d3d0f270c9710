/** The fields a value sets (`TypedValue.ToFieldSet`), and struct fields as members (`EnsureNamedFieldsAreMembers`). */
import type { TypeRef } from '../schema/model.js';
import { fieldType, resolve, type Atom, type ListAtom } from '../schema/schema.js';
import { FieldSet, FieldSetBuilder, fieldElement, type PathElement } from './fieldpath.js';
import { asList, asMap, atomOf, elementOf, isEmptyOrNull, typeOf } from './values.js';

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
