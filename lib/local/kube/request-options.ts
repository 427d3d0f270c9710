/**
 * The query options of a write (`CreateOptions`, `UpdateOptions`, `PatchOptions`,
 * `DeleteOptions`), read and validated as apimachinery's `ValidateXxxOptions` do: a bad value
 * is 422 Invalid naming the option (`PatchOptions.meta.k8s.io "" is invalid: dryRun:
 * Unsupported value: []string{"Some"}: supported values: "All"`); a value that does not parse
 * at all is 400.
 */
import { badRequest, invalid, type FieldError } from './errors.js';
import type { FieldValidation } from './types.js';

export type WriteVerb = 'create' | 'update' | 'patch' | 'delete';

export interface RequestOptions {
  dryRun: boolean;
  /** As given, or from the User-Agent (its part before the first `/`) for non-apply writes. */
  fieldManager: string;
  fieldValidation: FieldValidation;
  force: boolean;
}

const OPTIONS_KIND: Record<WriteVerb, string> = { create: 'CreateOptions', update: 'UpdateOptions', patch: 'PatchOptions', delete: 'DeleteOptions' };
const FIELD_VALIDATION = ['', 'Ignore', 'Strict', 'Warn'];
const FIELD_MANAGER_MAX = 128;

/** `prefixFromUserAgent`: `kubectl/v1.34.5 (linux/amd64) …` → `kubectl`, printable characters, at most 128 bytes. */
export function managerFromUserAgent(userAgent: string | undefined): string {
  let out = '';
  for (const ch of (userAgent ?? '').split('/')[0] ?? '') {
    if (!/\P{C}/u.test(ch)) continue;
    if (Buffer.byteLength(out + ch) > FIELD_MANAGER_MAX) break;
    out += ch;
  }
  return out;
}

/** Go's `%#v` of a `[]string`. */
const goStrings = (values: string[]): string => `[]string{${values.map((v) => JSON.stringify(v)).join(', ')}}`;

function parseBool(name: string, text: string | null): boolean | undefined {
  if (text === null) return undefined;
  if (['true', '1', 't', 'T', 'TRUE', 'True'].includes(text)) return true;
  if (['false', '0', 'f', 'F', 'FALSE', 'False', ''].includes(text)) return false;
  throw badRequest(`strconv.ParseBool: parsing ${JSON.stringify(text)}: invalid syntax for ${name}`);
}

export interface OptionSource {
  /** The query's values (`dryRun` may repeat). */
  dryRun: string[];
  fieldManager: string;
  fieldValidation: string;
  force: boolean | undefined;
}

/** The options a query carries. */
export function optionsFromQuery(query: URLSearchParams): OptionSource {
  return {
    dryRun: query.getAll('dryRun'),
    fieldManager: query.get('fieldManager') ?? '',
    fieldValidation: query.get('fieldValidation') ?? '',
    force: parseBool('force', query.get('force')),
  };
}

/**
 * Validated options of one write. `apply`: a server-side apply (fieldManager required; only
 * it may say `force`). `userAgent` names the manager of other writes that name none.
 */
export function writeOptions(verb: WriteVerb, source: OptionSource, context: { apply?: boolean; userAgent?: string; name?: string } = {}): RequestOptions {
  const errors: FieldError[] = [];
  if (verb === 'patch' && context.apply && !source.fieldManager) errors.push({ field: 'fieldManager', type: 'Required', detail: 'is required for apply patch' });
  if (verb === 'patch' && !context.apply && source.force !== undefined) errors.push({ field: 'force', type: 'Forbidden', detail: 'may not be specified for non-apply patch' });
  if (verb !== 'delete') {
    if (Buffer.byteLength(source.fieldManager) > FIELD_MANAGER_MAX) errors.push({ field: 'fieldManager', type: 'TooLong', detail: `may not be more than ${FIELD_MANAGER_MAX} bytes` });
    const bad = [...source.fieldManager].findIndex((ch) => !/\P{C}/u.test(ch));
    if (bad >= 0) {
      const code = (source.fieldManager.codePointAt(bad) ?? 0).toString(16).toUpperCase().padStart(4, '0');
      errors.push({ field: 'fieldManager', type: 'Invalid', value: source.fieldManager, detail: `invalid character U+${code} (at position ${bad})` });
    }
  }
  if (!source.dryRun.every((v) => v === 'All')) errors.push({ field: 'dryRun', type: 'NotSupported', valueText: goStrings(source.dryRun), detail: 'supported values: "All"' });
  if (verb !== 'delete' && !FIELD_VALIDATION.includes(source.fieldValidation)) {
    errors.push({ field: 'fieldValidation', type: 'NotSupported', value: source.fieldValidation, detail: `supported values: ${FIELD_VALIDATION.map((v) => JSON.stringify(v)).join(', ')}` });
  }
  if (errors.length > 0) throw invalid(OPTIONS_KIND[verb], 'meta.k8s.io', context.name ?? '', errors, `${OPTIONS_KIND[verb]}.meta.k8s.io`);
  return {
    dryRun: source.dryRun.length > 0,
    fieldManager: source.fieldManager || (context.apply ? '' : managerFromUserAgent(context.userAgent)),
    // The API server's default since 1.25: unknown and duplicate fields are dropped with a warning.
    fieldValidation: (source.fieldValidation || 'Warn') as FieldValidation,
    force: source.force ?? false,
  };
}
