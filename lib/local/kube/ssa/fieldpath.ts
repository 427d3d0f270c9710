/**
 * Field paths and sets of them, as structured-merge-diff's `fieldpath` package has them and as
 * `metadata.managedFields[].fieldsV1` spells them: a path element is `f:<field>` (a map key or
 * struct field), `k:{"name":"app"}` (an associative list item by its key fields, sorted),
 * `v:"x"` (a set item by value) or `i:3` (a list index). A set holds member paths; a node that
 * is a member and has children writes `".": {}` among them.
 */
import type { JsonObject } from '../json.js';

/** One path element in its FieldsV1 spelling, which is also its identity. */
export type PathElement = string;
export type Path = readonly PathElement[];

export const fieldElement = (name: string): PathElement => `f:${name}`;
export const valueElement = (value: unknown): PathElement => `v:${JSON.stringify(value)}`;

/** Key fields by name, sorted, as `value.FieldList.Sort` orders them. */
export function keyElement(fields: ReadonlyArray<readonly [string, unknown]>): PathElement {
  const sorted = [...fields].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `k:{${sorted.map(([name, value]) => `${JSON.stringify(name)}:${JSON.stringify(value)}`).join(',')}}`;
}

const RANK: Record<string, number> = { f: 0, k: 1, v: 2, i: 3 };

/** Fields, then keys, then values, then indices, as `PathElement.Compare` orders them. */
export function comparePathElements(a: PathElement, b: PathElement): number {
  const rank = (RANK[a[0] ?? ''] ?? 9) - (RANK[b[0] ?? ''] ?? 9);
  if (rank !== 0) return rank;
  if (a[0] === 'i') return Number(a.slice(2)) - Number(b.slice(2));
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Go's `value.ToString`: strings quoted, numbers and booleans bare. */
function scalarText(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'string') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(scalarText).join(',')}]`;
  if (typeof value === 'object') return Object.entries(value as JsonObject).map(([k, v]) => `${k}=${scalarText(v)}`).join('');
  return String(value);
}

/** `PathElement.String()`: `.spec`, `[name="app"]`, `[="x"]`, `[3]`. */
export function pathElementText(pe: PathElement): string {
  const rest = pe.slice(2);
  switch (pe[0]) {
    case 'f':
      return `.${rest}`;
    case 'k':
      return `[${Object.entries(JSON.parse(rest) as JsonObject).map(([k, v]) => `${k}=${scalarText(v)}`).join(',')}]`;
    case 'v':
      return `[=${scalarText(JSON.parse(rest))}]`;
    default:
      return `[${rest}]`;
  }
}

/** `Path.String()`: `.spec.template.spec.containers[name="app"].image`. */
export function pathText(path: Path): string {
  return path.map(pathElementText).join('');
}

/** An immutable set of paths: members here, and a subset per child element. Never holds an empty child. */
export class FieldSet {
  private constructor(
    readonly members: ReadonlySet<PathElement>,
    readonly children: ReadonlyMap<PathElement, FieldSet>,
  ) {}

  static readonly EMPTY = new FieldSet(new Set(), new Map());

  /** A set from its parts; `children` must hold no empty set. */
  static fromParts(members: ReadonlySet<PathElement>, children: ReadonlyMap<PathElement, FieldSet>): FieldSet {
    return members.size === 0 && children.size === 0 ? FieldSet.EMPTY : new FieldSet(members, children);
  }

  static of(paths: Iterable<Path>): FieldSet {
    const builder = new FieldSetBuilder();
    for (const path of paths) builder.insert(path);
    return builder.build();
  }

  empty(): boolean {
    return this.members.size === 0 && this.children.size === 0;
  }

  has(path: Path): boolean {
    const [head, ...rest] = path;
    if (head === undefined) return false;
    if (rest.length === 0) return this.members.has(head);
    return this.children.get(head)?.has(rest) ?? false;
  }

  /** The subset under `pe` (paths relative to it). */
  withPrefix(pe: PathElement): FieldSet {
    return this.children.get(pe) ?? FieldSet.EMPTY;
  }

  union(other: FieldSet): FieldSet {
    if (other.empty()) return this;
    if (this.empty()) return other;
    const members = new Set([...this.members, ...other.members]);
    const children = new Map(this.children);
    for (const [pe, set] of other.children) children.set(pe, children.get(pe)?.union(set) ?? set);
    return new FieldSet(members, children);
  }

  intersection(other: FieldSet): FieldSet {
    const members = new Set([...this.members].filter((m) => other.members.has(m)));
    const children = new Map<PathElement, FieldSet>();
    for (const [pe, set] of this.children) {
      const theirs = other.children.get(pe);
      if (!theirs) continue;
      const both = set.intersection(theirs);
      if (!both.empty()) children.set(pe, both);
    }
    return new FieldSet(members, children);
  }

  /** Members of this not members of `other`, at every depth (a member of `other` does not remove children). */
  difference(other: FieldSet): FieldSet {
    if (other.empty()) return this;
    const members = new Set([...this.members].filter((m) => !other.members.has(m)));
    const children = new Map<PathElement, FieldSet>();
    for (const [pe, set] of this.children) {
      const theirs = other.children.get(pe);
      const rest = theirs ? set.difference(theirs) : set;
      if (!rest.empty()) children.set(pe, rest);
    }
    return new FieldSet(members, children);
  }

  /** As `difference`, and a member of `other` also removes everything under it. */
  recursiveDifference(other: FieldSet): FieldSet {
    if (other.empty()) return this;
    const members = new Set([...this.members].filter((m) => !other.members.has(m)));
    const children = new Map<PathElement, FieldSet>();
    for (const [pe, set] of this.children) {
      if (other.members.has(pe)) continue;
      const theirs = other.children.get(pe);
      const rest = theirs ? set.recursiveDifference(theirs) : set;
      if (!rest.empty()) children.set(pe, rest);
    }
    return new FieldSet(members, children);
  }

  equals(other: FieldSet): boolean {
    if (this.members.size !== other.members.size || this.children.size !== other.children.size) return false;
    for (const m of this.members) if (!other.members.has(m)) return false;
    for (const [pe, set] of this.children) {
      const theirs = other.children.get(pe);
      if (!theirs || !set.equals(theirs)) return false;
    }
    return true;
  }

  /** Every member path, members of a node before its children, each in path-element order (`Set.Iterate`). */
  paths(prefix: Path = []): Path[] {
    const out: Path[] = [...this.members].sort(comparePathElements).map((m) => [...prefix, m]);
    for (const pe of [...this.children.keys()].sort(comparePathElements)) out.push(...(this.children.get(pe) as FieldSet).paths([...prefix, pe]));
    return out;
  }

  /** The `fieldsV1` JSON, keys in path-element order. */
  toFieldsV1(): JsonObject {
    const out: JsonObject = {};
    const keys = [...new Set([...this.members, ...this.children.keys()])].sort(comparePathElements);
    for (const pe of keys) {
      const child = this.children.get(pe);
      if (!child) out[pe] = {};
      else out[pe] = this.members.has(pe) ? { '.': {}, ...child.toFieldsV1() } : child.toFieldsV1();
    }
    return out;
  }

  /** Reads `fieldsV1`; keys of unknown element types are skipped, as `readIterV1` does. */
  static fromFieldsV1(json: unknown): FieldSet {
    const builder = new FieldSetBuilder();
    const walk = (node: unknown, prefix: PathElement[]): void => {
      if (typeof node !== 'object' || node === null || Array.isArray(node)) throw new Error('fieldsV1 must be a JSON object');
      for (const [key, child] of Object.entries(node as JsonObject)) {
        if (key === '.') continue;
        if (!/^[fkvi]:/.test(key)) continue;
        const path = [...prefix, key];
        const entries = Object.keys(child as JsonObject);
        if (entries.length === 0 || entries.includes('.')) builder.insert(path);
        walk(child, path);
      }
    };
    walk(json, []);
    return builder.build();
  }
}

/** Mutable construction of a `FieldSet` (insertions), frozen by `build`. */
export class FieldSetBuilder {
  private readonly members = new Set<PathElement>();
  private readonly children = new Map<PathElement, FieldSetBuilder>();

  insert(path: Path): void {
    const [head, ...rest] = path;
    if (head === undefined) return;
    if (rest.length === 0) {
      this.members.add(head);
      return;
    }
    let child = this.children.get(head);
    if (!child) {
      child = new FieldSetBuilder();
      this.children.set(head, child);
    }
    child.insert(rest);
  }

  build(): FieldSet {
    const children = new Map<PathElement, FieldSet>();
    for (const [pe, child] of this.children) {
      const built = child.build();
      if (!built.empty()) children.set(pe, built);
    }
    return FieldSet.fromParts(this.members, children);
  }
}
