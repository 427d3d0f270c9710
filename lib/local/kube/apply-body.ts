/**
 * The body of a server-side apply (`application/apply-patch+yaml`): YAML or JSON, read as
 * sigs.k8s.io/yaml reads it (YAML 1.1: `0440` is octal, `yes` a boolean; a repeated key keeps
 * its last value). Under Strict and Warn field validation a repeated key is refused or warned
 * about, in go-yaml's words.
 */
import { parseAllDocuments, parseDocument } from 'yaml';
import { badRequest } from './errors.js';
import { isObject, type JsonObject } from './json.js';
import type { FieldValidation } from './types.js';

function goTypeOf(value: unknown): string {
  if (Array.isArray(value)) return 'array';
  if (value === null) return 'null';
  return typeof value === 'string' ? 'string' : typeof value === 'number' ? 'number' : typeof value === 'boolean' ? 'bool' : 'object';
}

/** go-yaml's strict errors for repeated keys: `line 4: key "c" already set in map`. */
function repeatedKeys(text: string): string[] {
  const lines = text.split('\n');
  return parseDocument(text, { version: '1.1', uniqueKeys: true })
    .errors.filter((e) => e.code === 'DUPLICATE_KEY')
    .map((e) => {
      const line = e.linePos?.[0].line ?? 0;
      const key = (lines[line - 1] ?? '').trim().replace(/^[-{,\s]+/, '').split(':')[0]?.replace(/^["']|["']$/g, '') ?? '';
      return `line ${line}: key ${JSON.stringify(key)} already set in map`;
    });
}

export function decodeApplyBody(text: string, directive: FieldValidation, warnings: string[]): JsonObject {
  const [doc] = parseAllDocuments(text, { version: '1.1', uniqueKeys: false });
  if (!doc || !('toJS' in doc)) return {};
  const [error] = doc.errors;
  if (error) throw badRequest(`error decoding YAML: ${error.message}`);
  const value: unknown = doc.toJS({ maxAliasCount: 100 });
  if (value === null || value === undefined) return {};
  if (!isObject(value)) throw badRequest(`error decoding YAML: json: cannot unmarshal ${goTypeOf(value)} into Go value of type map[string]interface {}`);
  if (directive !== 'Ignore') {
    const repeated = repeatedKeys(text);
    if (repeated.length > 0) {
      const message = `error converting YAML to JSON: yaml: unmarshal errors:\n  ${repeated.join('\n  ')}`;
      if (directive === 'Strict') throw badRequest(`error strict decoding YAML: ${message}`);
      warnings.push(message);
    }
  }
  return value;
}
