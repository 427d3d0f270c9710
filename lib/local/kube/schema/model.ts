/**
 * The schema format of sigs.k8s.io/structured-merge-diff (SMD), the one kube-apiserver's
 * field manager walks: every type is a scalar, a list or a map; a map with `fields` is a
 * struct. Lists are atomic (replaced whole) or associative (merged by `keys`, or as a set of
 * scalars when there are none); maps are separable (merged per key) or atomic.
 * `schema.json` holds these types for every kind served (see bin/kube-schema.ts).
 */

export type ScalarType = 'string' | 'numeric' | 'boolean' | 'untyped';
export type ElementRelationship = 'atomic' | 'associative' | 'separable';

export interface TypeRef {
  namedType?: string;
  scalar?: ScalarType;
  list?: ListType;
  map?: MapType;
  /** Overrides the relationship of the referenced type (e.g. PV `claimRef`: an atomic ObjectReference made separable). */
  elementRelationship?: ElementRelationship;
}

export interface StructField {
  name: string;
  type: TypeRef;
  /** The default SMD uses for a missing key field of an associative list (ports' `protocol`: TCP); for CRDs, also the structural default. */
  default?: unknown;
}

export interface MapType {
  fields?: StructField[];
  /** The type of keys that are not named fields; absent: such keys are unknown fields. */
  elementType?: TypeRef;
  elementRelationship?: ElementRelationship;
}

export interface ListType {
  elementType: TypeRef;
  elementRelationship?: ElementRelationship;
  keys?: string[];
}

export interface TypeDef {
  name: string;
  scalar?: ScalarType;
  list?: ListType;
  map?: MapType;
}

export interface SchemaFile {
  /** Where each part came from (upstream file and version), for whoever regenerates it. */
  sources: string[];
  /** Root type of each served kind, by `group/version/Kind` ('' group for core). */
  kinds: Record<string, string>;
  types: TypeDef[];
}

/** The structured-merge-diff names for values of unknown shape. */
export const UNTYPED_ATOMIC = '__untyped_atomic_';
export const UNTYPED_DEDUCED = '__untyped_deduced_';
