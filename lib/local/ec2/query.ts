import { Ec2Error, ec2Errors } from './errors.js';

/**
 * A view over EC2 Query parameters (`VolumeId.1=…&Filter.1.Value.1=…`), scoped to a prefix,
 * so that nested lists read the same way at every depth.
 */
export class QueryParams {
  private constructor(
    private readonly all: ReadonlyMap<string, string>,
    private readonly prefix: string,
  ) {}

  static parse(body: string): QueryParams {
    return QueryParams.from(new URLSearchParams(body));
  }

  static from(entries: Iterable<[string, string]> | Record<string, string>): QueryParams {
    const it = Symbol.iterator in entries ? entries : Object.entries(entries);
    return new QueryParams(new Map(it as Iterable<[string, string]>), '');
  }

  has(name: string): boolean {
    return this.all.has(this.prefix + name);
  }

  /** Every key under this view, without the prefix: the canonical form for idempotency. */
  entries(): [string, string][] {
    const out: [string, string][] = [];
    for (const [k, v] of this.all) {
      if (k.startsWith(this.prefix)) out.push([k.slice(this.prefix.length), v]);
    }
    return out.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  }

  str(name: string): string | undefined {
    return this.all.get(this.prefix + name);
  }

  required(name: string, label = name): string {
    const v = this.str(name);
    if (v === undefined || v === '') throw ec2Errors.missing(label);
    return v;
  }

  int(name: string): number | undefined {
    const v = this.str(name);
    if (v === undefined) return undefined;
    if (!/^-?\d+$/.test(v.trim())) {
      throw new Ec2Error('InvalidParameterValue', `Invalid value '${v}' for ${name}`);
    }
    return Number(v);
  }

  bool(name: string): boolean | undefined {
    const v = this.str(name);
    if (v === undefined) return undefined;
    const lower = v.toLowerCase();
    if (lower === 'true') return true;
    if (lower === 'false') return false;
    throw new Ec2Error('InvalidParameterValue', `Invalid value '${v}' for ${name}`);
  }

  /** `Name.1`, `Name.2`, … in index order. */
  list(name: string): string[] {
    return this.indexes(name)
      .filter((i) => this.all.has(`${this.prefix}${name}.${i}`))
      .map((i) => this.all.get(`${this.prefix}${name}.${i}`) as string);
  }

  /** `Name.1.X`, `Name.2.X`, … as scoped views, in index order. */
  structs(name: string): QueryParams[] {
    return this.indexes(name).map((i) => new QueryParams(this.all, `${this.prefix}${name}.${i}.`));
  }

  scope(name: string): QueryParams {
    return new QueryParams(this.all, `${this.prefix}${name}.`);
  }

  private indexes(name: string): number[] {
    const head = `${this.prefix}${name}.`;
    const seen = new Set<number>();
    for (const k of this.all.keys()) {
      if (!k.startsWith(head)) continue;
      const m = /^(\d+)(\.|$)/.exec(k.slice(head.length));
      if (m) seen.add(Number(m[1]));
    }
    return [...seen].sort((a, b) => a - b);
  }
}

/** A filter as EC2 receives it: values OR-ed, filters AND-ed. */
export interface QueryFilter {
  name: string;
  values: string[];
}

export function readFilters(params: QueryParams): QueryFilter[] {
  return params.structs('Filter').map((f) => ({
    name: f.required('Name', 'Filter.Name'),
    values: f.list('Value'),
  }));
}

/** Tag lists come as `Tag.N.Key` / `Tag.N.Value` (CreateTags, TagSpecification.N). */
export function readTags(params: QueryParams): { key: string; value: string | undefined }[] {
  return params.structs('Tag').map((t) => ({ key: t.str('Key') ?? '', value: t.str('Value') }));
}
