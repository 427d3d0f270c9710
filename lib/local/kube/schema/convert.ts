/**
 * Builds `schema.json` from upstream text (pure; bin/kube-schema.ts reads and writes the
 * files): the built-in types from client-go's embedded SMD schema (the one its apply
 * configurations use, kube-apiserver's own), the custom resources from their CRDs'
 * `openAPIV3Schema`, converted as apiextensions-apiserver converts them for its field manager.
 */
import { parse } from 'yaml';
import { UNTYPED_DEDUCED, type ListType, type MapType, type SchemaFile, type StructField, type TypeDef, type TypeRef } from './model.js';

type Json = Record<string, unknown>;
const isJson = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The types of `k8s.io/client-go/applyconfigurations/internal/internal.go` (its `schemaYAML`), without `unions`. */
export function clientGoTypes(goSource: string): TypeDef[] {
  const open = 'typed.YAMLObject(`';
  const start = goSource.indexOf(open);
  const end = goSource.indexOf('`)', start);
  if (start < 0 || end < 0) throw new Error('no typed.YAMLObject(`...`) schema in this file');
  const doc = parse(goSource.slice(start + open.length, end), { maxAliasCount: -1 }) as { types: TypeDef[] };
  return doc.types.map((t) => {
    if (!t.map) return t;
    const { fields, elementType, elementRelationship } = t.map;
    const map: MapType = {};
    if (fields) map.fields = fields;
    if (elementType) map.elementType = elementType;
    if (elementRelationship) map.elementRelationship = elementRelationship;
    return { ...t, map };
  });
}

function refsOf(ref: TypeRef | undefined, out: string[]): void {
  if (!ref) return;
  if (ref.namedType) out.push(ref.namedType);
  if (ref.list) refsOf(ref.list.elementType, out);
  if (ref.map) mapRefs(ref.map, out);
}

function mapRefs(map: MapType, out: string[]): void {
  for (const field of map.fields ?? []) refsOf(field.type, out);
  refsOf(map.elementType, out);
}

/** The types reachable from `roots`, in the order of `types`. */
export function closure(types: TypeDef[], roots: string[]): TypeDef[] {
  const byName = new Map(types.map((t) => [t.name, t]));
  const seen = new Set<string>();
  const pending = [...roots];
  for (let name = pending.pop(); name !== undefined; name = pending.pop()) {
    if (seen.has(name)) continue;
    const type = byName.get(name);
    if (!type) throw new Error(`type ${name} is referenced but not defined`);
    seen.add(name);
    const refs: string[] = [];
    if (type.map) mapRefs(type.map, refs);
    if (type.list) refsOf(type.list.elementType, refs);
    pending.push(...refs);
  }
  return types.filter((t) => seen.has(t.name));
}

const OBJECT_META = 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta';

/** One OpenAPI v3 schema of a CRD as an SMD type reference (inline). */
function crdRef(schema: Json): TypeRef {
  if (schema['x-kubernetes-int-or-string'] === true) return { scalar: 'untyped' };
  const preserve = schema['x-kubernetes-preserve-unknown-fields'] === true;
  switch (schema.type) {
    case 'string':
      return { scalar: 'string' };
    case 'integer':
    case 'number':
      return { scalar: 'numeric' };
    case 'boolean':
      return { scalar: 'boolean' };
    case 'array': {
      const items = isJson(schema.items) ? schema.items : {};
      const list: ListType = { elementType: crdRef(items), elementRelationship: 'atomic' };
      if (schema['x-kubernetes-list-type'] === 'map') {
        list.elementRelationship = 'associative';
        list.keys = (schema['x-kubernetes-list-map-keys'] as string[] | undefined) ?? [];
      } else if (schema['x-kubernetes-list-type'] === 'set') {
        list.elementRelationship = 'associative';
      }
      return { list };
    }
    case 'object':
    case undefined: {
      if (schema.type === undefined && !preserve && !isJson(schema.properties)) return { namedType: UNTYPED_DEDUCED };
      const map: MapType = {};
      const properties = isJson(schema.properties) ? schema.properties : {};
      const fields: StructField[] = Object.entries(properties)
        .filter((entry): entry is [string, Json] => isJson(entry[1]))
        .map(([name, property]) => {
          const field: StructField = { name, type: crdRef(property) };
          if (property.default !== undefined) field.default = property.default;
          return field;
        });
      if (schema['x-kubernetes-embedded-resource'] === true) {
        for (const name of ['apiVersion', 'kind']) if (!properties[name]) fields.push({ name, type: { scalar: 'string' } });
        const meta = fields.find((f) => f.name === 'metadata');
        if (meta) meta.type = { namedType: OBJECT_META };
        else fields.push({ name: 'metadata', type: { namedType: OBJECT_META } });
      }
      if (fields.length > 0) map.fields = fields.sort((a, b) => (a.name < b.name ? -1 : 1));
      if (isJson(schema.additionalProperties)) map.elementType = crdRef(schema.additionalProperties);
      else if (schema.additionalProperties === true || preserve) map.elementType = { namedType: UNTYPED_DEDUCED };
      if (schema['x-kubernetes-map-type'] === 'atomic') map.elementRelationship = 'atomic';
      return { map };
    }
    default:
      return { namedType: UNTYPED_DEDUCED };
  }
}

/** `snapshot.storage.k8s.io` → `io.k8s.storage.snapshot`, as the API server names CRD types in OpenAPI. */
function reverseDomain(group: string): string {
  return group.split('.').reverse().join('.');
}

/** The root type of one served version of a CustomResourceDefinition, and its `group/version/Kind`. */
export function crdType(crd: unknown, version = 'v1'): { kind: string; type: TypeDef } {
  if (!isJson(crd) || !isJson(crd.spec) || !isJson(crd.spec.names)) throw new Error('not a CustomResourceDefinition');
  const { group, names, versions } = crd.spec as { group: string; names: { kind: string }; versions: Json[] };
  const served = versions.find((v) => v.name === version);
  const schema = isJson(served?.schema) ? served.schema.openAPIV3Schema : undefined;
  if (!isJson(schema)) throw new Error(`${names.kind} has no ${version} schema`);
  const root = crdRef(schema);
  const fields = (root.map?.fields ?? []).map((f) => (f.name === 'metadata' ? { name: 'metadata', type: { namedType: OBJECT_META } } : f));
  return { kind: `${group}/${version}/${names.kind}`, type: { name: `${reverseDomain(group)}.${version}.${names.kind}`, map: { ...root.map, fields } } };
}

/** `schema.json`'s text: one type per line, so a regeneration diffs by type. */
export function schemaFileText(file: SchemaFile): string {
  const types = file.types.map((t) => `    ${JSON.stringify(t)}`).join(',\n');
  const nested = (value: unknown): string => JSON.stringify(value, null, 2).replace(/\n/g, '\n  ');
  return `{\n  "sources": ${nested(file.sources)},\n  "kinds": ${nested(file.kinds)},\n  "types": [\n${types}\n  ]\n}\n`;
}
