import { ec2Errors } from './errors.js';
import type { Tag } from './model.js';
import type { QueryFilter } from './query.js';

/** EC2 filter values allow `*` (any run) and `?` (one character); `\` escapes them. */
export function wildcardMatch(pattern: string, value: string): boolean {
  return patternRegExp(pattern).test(value);
}

function patternRegExp(pattern: string): RegExp {
  let re = '^';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i] as string;
    if (c === '\\' && i + 1 < pattern.length) re += escapeRe(pattern[++i] as string);
    else if (c === '*') re += '[\\s\\S]*';
    else if (c === '?') re += '[\\s\\S]';
    else re += escapeRe(c);
  }
  return new RegExp(`${re}$`);
}

/**
 * One filter's values as a predicate, compiled once: the plain values (no `*`, `?` or `\`)
 * in a set, the patterns as regular expressions. A describe by 200 names over thousands of
 * volumes otherwise built a regular expression per value per volume.
 */
function valueMatcher(patterns: readonly string[]): (value: string) => boolean {
  const plain = new Set(patterns.filter((p) => !/[*?\\]/.test(p)));
  const wild = patterns.filter((p) => !plain.has(p)).map(patternRegExp);
  return (value) => plain.has(value) || wild.some((re) => re.test(value));
}

const escapeRe = (c: string) => c.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The filters a resource kind supports: named fields, plus `tag:K`, `tag-key`, `tag-value`. */
export interface FilterTable<T> {
  fields: Readonly<Record<string, (item: T) => readonly string[]>>;
  tags?: (item: T) => readonly Tag[];
}

function valuesFor<T>(table: FilterTable<T>, name: string): ((item: T) => readonly string[]) | undefined {
  const field = table.fields[name];
  if (field) return field;
  const tags = table.tags;
  if (!tags) return undefined;
  if (name === 'tag-key') return (item) => tags(item).map((t) => t.key);
  if (name === 'tag-value') return (item) => tags(item).map((t) => t.value);
  if (name.startsWith('tag:')) {
    const key = name.slice(4);
    return (item) => tags(item).filter((t) => t.key === key).map((t) => t.value);
  }
  return undefined;
}

/**
 * A predicate for the filters: values OR-ed within a filter, filters AND-ed. An unknown
 * filter name is refused up front, whether or not anything would be filtered.
 */
export function compileFilters<T>(filters: readonly QueryFilter[], table: FilterTable<T>): (item: T) => boolean {
  const checks = filters.map((f) => {
    const values = valuesFor(table, f.name);
    if (!values) throw ec2Errors.invalidValue(`The filter '${f.name}' is invalid`);
    const matches = valueMatcher(f.values);
    return (item: T) => values(item).some(matches);
  });
  return (item) => checks.every((check) => check(item));
}
