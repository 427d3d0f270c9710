/**
 * JSON Patch (RFC 6902) and JSON Merge Patch (RFC 7386), applied to plain JSON. Both return a
 * new document and leave their inputs alone, so a failed patch changes nothing.
 */
import { KubeApiError, badRequest } from './errors.js';
import { clone, deepEqual, isObject, type JsonObject } from './json.js';

/**
 * A patch that is well formed but does not apply (a failed `test`, a missing path). The real
 * server answers these with 422 Invalid and a generic message that does not say which
 * operation failed, so callers must re-read the object to learn why.
 */
export function patchNotApplied(): KubeApiError {
  return new KubeApiError('Invalid', 'the server rejected our request due to an error in our request', {});
}

class NotApplied extends Error {}

function parsePointer(path: string): string[] {
  if (path === '') return [];
  if (!path.startsWith('/')) throw badRequest(`invalid JSON pointer "${path}"`);
  return path
    .slice(1)
    .split('/')
    .map((token) => token.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function arrayIndex(token: string, length: number, allowEnd: boolean): number {
  if (allowEnd && token === '-') return length;
  if (!/^(0|[1-9]\d*)$/.test(token)) throw new NotApplied(`invalid array index ${token}`);
  const index = Number(token);
  if (index > length || (!allowEnd && index === length)) throw new NotApplied(`index ${token} out of bounds`);
  return index;
}

/** The container holding the last token, which must exist. */
function parentOf(doc: unknown, tokens: string[]): unknown {
  let current = doc;
  for (const token of tokens.slice(0, -1)) {
    if (Array.isArray(current)) current = current[arrayIndex(token, current.length, false)];
    else if (isObject(current) && Object.prototype.hasOwnProperty.call(current, token)) current = current[token];
    else throw new NotApplied('doc is missing path');
  }
  if (!Array.isArray(current) && !isObject(current)) throw new NotApplied('doc is missing path');
  return current;
}

function read(doc: unknown, tokens: string[]): unknown {
  if (tokens.length === 0) return doc;
  const parent = parentOf(doc, tokens);
  const last = tokens[tokens.length - 1] as string;
  if (Array.isArray(parent)) return parent[arrayIndex(last, parent.length, false)];
  if (!Object.prototype.hasOwnProperty.call(parent, last)) throw new NotApplied(`doc is missing key ${last}`);
  return (parent as JsonObject)[last];
}

function remove(doc: unknown, tokens: string[]): unknown {
  if (tokens.length === 0) throw new NotApplied('cannot remove the whole document');
  const parent = parentOf(doc, tokens);
  const last = tokens[tokens.length - 1] as string;
  if (Array.isArray(parent)) return parent.splice(arrayIndex(last, parent.length, false), 1)[0];
  if (!Object.prototype.hasOwnProperty.call(parent, last)) throw new NotApplied(`doc is missing key ${last}`);
  const value = (parent as JsonObject)[last];
  delete (parent as JsonObject)[last];
  return value;
}

/** Adds (or replaces, when `replace`) and returns the new document root. */
function put(doc: unknown, tokens: string[], value: unknown, replace: boolean): unknown {
  if (tokens.length === 0) return value;
  const parent = parentOf(doc, tokens);
  const last = tokens[tokens.length - 1] as string;
  if (Array.isArray(parent)) {
    if (replace) parent[arrayIndex(last, parent.length, false)] = value;
    else parent.splice(arrayIndex(last, parent.length, true), 0, value);
  } else {
    if (replace && !Object.prototype.hasOwnProperty.call(parent, last)) throw new NotApplied(`doc is missing key ${last}`);
    (parent as JsonObject)[last] = value;
  }
  return doc;
}

interface Operation {
  op: string;
  path: string;
  from?: string;
  value?: unknown;
}

function checkOperations(patch: unknown): Operation[] {
  if (!Array.isArray(patch)) throw badRequest('json: cannot unmarshal object into Go value of type jsonpatch.Patch');
  for (const op of patch) {
    if (!isObject(op) || typeof op.op !== 'string' || typeof op.path !== 'string') {
      throw badRequest('invalid JSON patch operation: each needs "op" and "path"');
    }
    if (!['add', 'remove', 'replace', 'move', 'copy', 'test'].includes(op.op)) throw badRequest(`Unexpected kind: ${op.op}`);
    if ((op.op === 'move' || op.op === 'copy') && typeof op.from !== 'string') throw badRequest(`${op.op} operation needs "from"`);
    if (['add', 'replace', 'test'].includes(op.op) && !('value' in op)) throw badRequest(`${op.op} operation needs "value"`);
  }
  return patch as Operation[];
}

/** Applies an RFC 6902 patch; malformed → 400 BadRequest, not applicable → 422 Invalid. */
export function applyJsonPatch<T>(document: T, patch: unknown): T {
  const operations = checkOperations(patch);
  let doc: unknown = clone(document);
  try {
    for (const op of operations) {
      const path = parsePointer(op.path);
      switch (op.op) {
        case 'add':
          doc = put(doc, path, clone(op.value), false);
          break;
        case 'replace':
          doc = put(doc, path, clone(op.value), true);
          break;
        case 'remove':
          remove(doc, path);
          break;
        case 'move': {
          const value = remove(doc, parsePointer(op.from as string));
          doc = put(doc, path, value, false);
          break;
        }
        case 'copy':
          doc = put(doc, path, clone(read(doc, parsePointer(op.from as string))), false);
          break;
        case 'test':
          if (!deepEqual(read(doc, path), op.value)) throw new NotApplied(`testing value ${op.path} failed: test failed`);
          break;
      }
    }
  } catch (err) {
    if (err instanceof NotApplied) throw patchNotApplied();
    throw err;
  }
  return doc as T;
}

/** Applies an RFC 7386 merge patch: objects merge, `null` deletes, everything else replaces. */
export function applyMergePatch<T>(document: T, patch: unknown): T {
  if (!isObject(patch)) throw badRequest('a merge patch for an object must be a JSON object');
  return merge(clone(document), patch) as T;
}

function merge(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return clone(patch);
  const result: JsonObject = isObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = merge(result[key], value);
  }
  return result;
}
