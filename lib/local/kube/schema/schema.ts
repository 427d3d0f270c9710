/**
 * The field schema of the served kinds (schema.json), resolved as structured-merge-diff
 * resolves it: a type reference becomes an atom (scalar, list or map), and a value of an
 * untyped atom picks the branch that matches it (`deduceAtom`).
 */
import { readFileSync } from 'node:fs';
import type { ResourceInfo } from '../resources.js';
import type { ElementRelationship, ListType, MapType, ScalarType, SchemaFile, StructField, TypeDef, TypeRef } from './model.js';

export interface MapAtom {
  fields: ReadonlyMap<string, StructField>;
  elementType: TypeRef | undefined;
  atomic: boolean;
}

export interface ListAtom {
  elementType: TypeRef;
  associative: boolean;
  keys: readonly string[];
}

export interface Atom {
  scalar?: ScalarType;
  list?: ListAtom;
  map?: MapAtom;
}

let loaded: { kinds: Record<string, string>; types: Map<string, TypeDef> } | undefined;

function file(): NonNullable<typeof loaded> {
  if (!loaded) {
    const parsed = JSON.parse(readFileSync(new URL('./schema.json', import.meta.url), 'utf8')) as SchemaFile;
    loaded = { kinds: parsed.kinds, types: new Map(parsed.types.map((t) => [t.name, t])) };
  }
  return loaded;
}

const maps = new WeakMap<MapType, MapAtom>();
const lists = new WeakMap<ListType, ListAtom>();

function mapAtom(map: MapType, override: ElementRelationship | undefined): MapAtom {
  let atom = maps.get(map);
  if (!atom) {
    atom = { fields: new Map((map.fields ?? []).map((f) => [f.name, f])), elementType: map.elementType, atomic: map.elementRelationship === 'atomic' };
    maps.set(map, atom);
  }
  return override === undefined ? atom : { ...atom, atomic: override === 'atomic' };
}

function listAtom(list: ListType, override: ElementRelationship | undefined): ListAtom {
  let atom = lists.get(list);
  if (!atom) {
    atom = { elementType: list.elementType, associative: list.elementRelationship === 'associative', keys: list.keys ?? [] };
    lists.set(list, atom);
  }
  return override === undefined ? atom : { ...atom, associative: override === 'associative' };
}

/** The atom a type reference names; throws for a name the schema lacks (a generator bug, not a request error). */
export function resolve(ref: TypeRef): Atom {
  const source: TypeRef | TypeDef | undefined = ref.namedType ? file().types.get(ref.namedType) : ref;
  if (!source) throw new Error(`schema has no type ${ref.namedType}`);
  const atom: Atom = {};
  if (source.scalar) atom.scalar = source.scalar;
  if (source.list) atom.list = listAtom(source.list, ref.elementRelationship);
  if (source.map) atom.map = mapAtom(source.map, ref.elementRelationship);
  return atom;
}

export type ValueKind = 'scalar' | 'list' | 'map' | 'null';

export function valueKind(value: unknown): ValueKind {
  if (value === null || value === undefined) return 'null';
  if (Array.isArray(value)) return 'list';
  return typeof value === 'object' ? 'map' : 'scalar';
}

/** `deduceAtom`: an atom with several branches (untyped) narrowed to the one `value` has. */
export function deduce(atom: Atom, value: unknown): Atom {
  const kind = valueKind(value);
  if (kind === 'scalar' && atom.scalar) return { scalar: atom.scalar };
  if (kind === 'list' && atom.list) return { list: atom.list };
  if (kind === 'map' && atom.map) return { map: atom.map };
  return atom;
}

/** The type of a map's key: its named field, else the element type; undefined when the key is unknown. */
export function fieldType(map: MapAtom, key: string): TypeRef | undefined {
  return map.fields.get(key)?.type ?? map.elementType;
}

/** The root type of a served kind. */
export function rootType(info: Pick<ResourceInfo, 'group' | 'version' | 'kind'>): TypeRef {
  const name = file().kinds[`${info.group}/${info.version}/${info.kind}`];
  if (!name) throw new Error(`schema.json has no ${info.kind}: regenerate it (bin/kube-schema.ts)`);
  return { namedType: name };
}
