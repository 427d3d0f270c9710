/**
 * Server-side field validation (`fieldValidation=Strict|Warn|Ignore`), as kube-apiserver
 * decodes a request body: fields the kind's schema does not declare, and fields a JSON body
 * repeats, refuse the request under Strict, are dropped with a `Warning` under Warn (the
 * default), and are dropped silently under Ignore. Server-side apply is stricter (see
 * ssa/field-manager.ts): a field the schema lacks is refused whatever the directive.
 */
import { badRequest, invalid } from './errors.js';
import type { ResourceInfo } from './resources.js';
import { rootType } from './schema/index.js';
import { unknownFields } from './ssa/index.js';
import type { KubeObject, WriteOptions } from './types.js';

/** What was decoded: a whole object from a body, or the result of a JSON, merge or strategic patch. */
export type Decoded = { from: 'body' } | { from: 'patch' };

/**
 * The object as decoding leaves it: unknown fields gone (or the request refused under Strict),
 * the decode's warnings added to `options.warnings`. Unchecked without a directive (in-process writes).
 */
export function decodeFields(info: ResourceInfo, object: KubeObject, options: WriteOptions, decoded: Decoded): KubeObject {
  const directive = options.fieldValidation;
  if (!directive) return object;
  const { unknown, pruned } = unknownFields(object, rootType(info));
  const problems = [...(options.duplicateFields ?? []).map((f) => `duplicate field ${JSON.stringify(f)}`), ...unknown.map((f) => `unknown field ${JSON.stringify(f)}`)];
  if (problems.length === 0) return object;
  if (directive === 'Strict') {
    const strict = `strict decoding error: ${problems.join(', ')}`;
    if (decoded.from === 'patch') throw invalid('', '', '', [{ field: 'patch', type: 'Invalid', valueText: JSON.stringify(JSON.stringify(object)), detail: strict }]);
    throw badRequest(`${info.kind} in version ${JSON.stringify(info.version)} cannot be handled as a ${info.kind}: ${strict}`);
  }
  if (directive === 'Warn') options.warnings?.push(...problems);
  return pruned as KubeObject;
}

/**
 * Keys a JSON text repeats within one object, by path (`spec.replicas`,
 * `spec.containers[0].name`), as a strict JSON decode reports them. Assumes valid JSON.
 */
export function duplicateJsonFields(text: string): string[] {
  const found: string[] = [];
  let i = 0;
  const space = (): void => {
    while (i < text.length && ' \t\n\r'.includes(text[i] as string)) i++;
  };
  const string = (): string => {
    const start = i;
    i++;
    while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
    i++;
    return JSON.parse(text.slice(start, i)) as string;
  };
  const value = (path: string): void => {
    space();
    const ch = text[i];
    if (ch === '{') {
      i++;
      const keys = new Set<string>();
      space();
      while (i < text.length && text[i] !== '}') {
        space();
        const key = string();
        const keyPath = path ? `${path}.${key}` : key;
        if (keys.has(key)) found.push(keyPath);
        keys.add(key);
        space();
        i++; // ':'
        value(keyPath);
        space();
        if (text[i] === ',') i++;
        space();
      }
      i++;
    } else if (ch === '[') {
      i++;
      let index = 0;
      space();
      while (i < text.length && text[i] !== ']') {
        value(`${path}[${index++}]`);
        space();
        if (text[i] === ',') i++;
        space();
      }
      i++;
    } else if (ch === '"') {
      string();
    } else {
      while (i < text.length && !',}] \t\n\r'.includes(text[i] as string)) i++;
    }
  };
  value('');
  return found;
}
