/**
 * Label and field selectors with the API server's grammar, so a selector that works here
 * works against a real cluster and one that fails there fails here too (400 BadRequest).
 */
import { badRequest } from './errors.js';
import { getPath, isObject } from './json.js';

export type Labels = Record<string, string> | undefined;

type Operator = 'exists' | '!' | '=' | '!=' | 'in' | 'notin' | '<' | '>';
interface Requirement {
  key: string;
  op: Operator;
  values: string[];
}

const SPECIAL = new Set([',', '(', ')', '=', '!', '<', '>']);
const NAME = /^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$/;
const PREFIX = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

function tokenize(input: string): string[] {
  const tokens: string[] = [];
  let i = 0;
  while (i < input.length) {
    const ch = input[i] as string;
    if (/\s/.test(ch)) {
      i++;
    } else if (SPECIAL.has(ch)) {
      const two = input.slice(i, i + 2);
      if (two === '==' || two === '!=') {
        tokens.push(two);
        i += 2;
      } else {
        tokens.push(ch);
        i++;
      }
    } else {
      let j = i;
      while (j < input.length && !SPECIAL.has(input[j] as string) && !/\s/.test(input[j] as string)) j++;
      tokens.push(input.slice(i, j));
      i = j;
    }
  }
  return tokens;
}

const isWord = (token: string | undefined): token is string => token !== undefined && !SPECIAL.has(token[0] as string);

function checkKey(key: string, selector: string): void {
  const slash = key.lastIndexOf('/');
  const name = slash >= 0 ? key.slice(slash + 1) : key;
  const prefix = slash >= 0 ? key.slice(0, slash) : undefined;
  if (!name || !NAME.test(name) || (prefix !== undefined && (!PREFIX.test(prefix) || prefix.length > 253))) {
    throw badRequest(`unable to parse requirement: invalid label key "${key}" in selector "${selector}"`);
  }
}

function checkValue(value: string, selector: string): void {
  if (!NAME.test(value)) throw badRequest(`unable to parse requirement: invalid label value "${value}" in selector "${selector}"`);
}

function parseRequirements(selector: string): Requirement[] {
  const tokens = tokenize(selector);
  const requirements: Requirement[] = [];
  let pos = 0;
  const fail = (what: string): never => {
    throw badRequest(`unable to parse requirement: ${what} in selector "${selector}"`);
  };
  while (pos < tokens.length) {
    let token = tokens[pos++];
    if (token === '!') {
      token = tokens[pos++];
      if (!isWord(token)) fail('expected a key after "!"');
      checkKey(token as string, selector);
      requirements.push({ key: token as string, op: '!', values: [] });
    } else {
      if (!isWord(token)) fail(`unexpected "${token}"`);
      const key = token as string;
      checkKey(key, selector);
      const next = tokens[pos];
      if (next === undefined || next === ',') {
        requirements.push({ key, op: 'exists', values: [] });
      } else if (next === '=' || next === '==' || next === '!=') {
        pos++;
        const value = isWord(tokens[pos]) ? (tokens[pos++] as string) : '';
        checkValue(value, selector);
        requirements.push({ key, op: next === '!=' ? '!=' : '=', values: [value] });
      } else if (next === 'in' || next === 'notin') {
        pos++;
        if (tokens[pos++] !== '(') fail(`expected "(" after ${next}`);
        const values: string[] = [];
        while (tokens[pos] !== ')') {
          const value = tokens[pos++];
          if (value === undefined) fail('missing ")"');
          if (value === ',') continue;
          if (!isWord(value)) fail(`unexpected "${value}"`);
          checkValue(value as string, selector);
          values.push(value as string);
        }
        pos++;
        if (values.length === 0) fail(`for '${next}' operator, values set can't be empty`);
        requirements.push({ key, op: next, values });
      } else if (next === '<' || next === '>') {
        pos++;
        const value = tokens[pos++];
        if (!isWord(value) || !/^-?\d+$/.test(value)) fail(`for '${next}' operator, the value must be an integer`);
        requirements.push({ key, op: next, values: [value as string] });
      } else {
        fail(`unexpected "${next}" after key "${key}"`);
      }
    }
    if (pos < tokens.length) {
      if (tokens[pos] !== ',') fail(`expected "," but found "${tokens[pos]}"`);
      pos++;
      if (pos === tokens.length) fail('trailing ","');
    }
  }
  return requirements;
}

function matches(requirement: Requirement, labels: Labels): boolean {
  const has = labels !== undefined && Object.prototype.hasOwnProperty.call(labels, requirement.key);
  const value = has ? labels[requirement.key] : undefined;
  switch (requirement.op) {
    case 'exists':
      return has;
    case '!':
      return !has;
    case '=':
      return has && value === requirement.values[0];
    case '!=':
      return !has || value !== requirement.values[0];
    case 'in':
      return has && requirement.values.includes(value as string);
    case 'notin':
      return !has || !requirement.values.includes(value as string);
    case '<':
    case '>': {
      if (!has || !/^-?\d+$/.test(value as string)) return false;
      const actual = Number(value);
      const bound = Number(requirement.values[0]);
      return requirement.op === '<' ? actual < bound : actual > bound;
    }
  }
}

/** Parses a `labelSelector` query (`a=b,c!=d,e in (x,y),!f`); throws BadRequest when malformed. */
export function parseLabelSelector(selector: string | undefined): (labels: Labels) => boolean {
  if (!selector || !selector.trim()) return () => true;
  const requirements = parseRequirements(selector);
  return (labels) => requirements.every((r) => matches(r, labels));
}

/** A `metav1.LabelSelector` as objects carry it (PVC `spec.selector`). */
export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist'; values?: string[] }[];
}

/**
 * Whether `labels` satisfy a `metav1.LabelSelector`. An absent selector selects everything,
 * which is what a PVC without `spec.selector` means to the PV controller.
 */
export function labelSelectorMatches(selector: LabelSelector | null | undefined, labels: Labels): boolean {
  if (!selector) return true;
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
    if (!matches({ key, op: '=', values: [value] }, labels)) return false;
  }
  const ops = { In: 'in', NotIn: 'notin', Exists: 'exists', DoesNotExist: '!' } as const;
  return (selector.matchExpressions ?? []).every((e) => {
    const op = ops[e.operator];
    if (!op) return false;
    return matches({ key: e.key, op, values: e.values ?? [] }, labels);
  });
}

function splitUnescaped(input: string, separator: string): string[] {
  const parts: string[] = [];
  let current = '';
  for (let i = 0; i < input.length; i++) {
    const ch = input[i] as string;
    if (ch === '\\' && i + 1 < input.length) {
      current += ch + input[++i];
    } else if (ch === separator) {
      parts.push(current);
      current = '';
    } else {
      current += ch;
    }
  }
  parts.push(current);
  return parts;
}

const unescape = (value: string): string => value.replace(/\\(.)/g, '$1');

/** The string a field selector compares against: booleans as `true`/`false`, absent as ''. */
export function fieldValue(object: unknown, field: string): string {
  const value = field === 'source' ? getPath(object, 'source.component') : getPath(object, field);
  if (value === undefined || value === null || isObject(value) || Array.isArray(value)) {
    return field === 'spec.unschedulable' || field === 'spec.hostNetwork' ? 'false' : '';
  }
  return String(value);
}

/**
 * Parses a `fieldSelector` (`=`, `==`, `!=`, comma-separated). Fields outside `allowed` are a
 * 400 "field label not supported", exactly as the server answers for a typo.
 */
export function parseFieldSelector(selector: string | undefined, allowed: ReadonlySet<string>): (object: unknown) => boolean {
  if (!selector || !selector.trim()) return () => true;
  const terms = splitUnescaped(selector, ',').map((term) => {
    const match = /^(.*?)(!=|==|=)(.*)$/s.exec(term);
    if (!match) throw badRequest(`invalid selector: '${selector}'; can't understand '${term}'`);
    const field = (match[1] as string).trim();
    if (!allowed.has(field)) throw badRequest(`field label not supported: ${field}`);
    return { field, negate: match[2] === '!=', value: unescape(match[3] as string) };
  });
  return (object) => terms.every((t) => (fieldValue(object, t.field) === t.value) !== t.negate);
}
