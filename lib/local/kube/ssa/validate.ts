/** `TypedValue.Validate` (typed/validate.go), and the unknown fields a strict decode reports. */
import { isObject, type JsonObject } from '../json.js';
import type { TypeRef } from '../schema/model.js';
import { fieldType, type Atom, type ListAtom } from '../schema/schema.js';
import { fieldElement, pathElementText, type Path, type PathElement } from './fieldpath.js';
import { asList, asMap, atomOf, listItemElement } from './values.js';

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
