import { isReservedTagKey, MAX_TAG_KEY_LENGTH, MAX_TAG_VALUE_LENGTH, RESERVED_TAG_KEYS_TEXT } from '../contract/tags.js';
import { ParameterError } from './errors.js';
import type { ParameterEntry } from './parameters.js';
import { evaluateTemplate, TemplateError, type TemplateData } from './template/index.js';

/** The values a tag template may use: the driver's `{{ .PVCName }}` and friends. */
export type TagTemplateValues = TemplateData;

/**
 * The tags a class's `tagSpecification*` entries ask for, as the driver makes them
 * (pkg/util/template/template.go): `key=value`, split at the first `=` (so values may contain
 * `=`); the key literal, the value a Go text/template over `.PVCName`, `.PVCNamespace` and
 * `.PVName` with the driver's functions (see ./template). A template that fails refuses the
 * volume, as the driver does by default; it never becomes literal text.
 *
 * Beyond the driver, volhook refuses before the call what EC2 would refuse (an empty or
 * over-long key, an over-long value), keys reserved by volhook's ownership rules (see
 * lib/contract/tags.ts: case-insensitive, and `aws:` too), and one tag key set twice — the
 * driver keeps one of them by Go's random map order.
 *
 * @throws ParameterError naming the tagSpecification key.
 */
export function tagsFrom(specifications: readonly ParameterEntry[], values: TagTemplateValues): Record<string, string> {
  const tags: Record<string, string> = {};
  const origin = new Map<string, string>();
  for (const entry of specifications) {
    const separator = entry.value.indexOf('=');
    if (separator < 0) {
      throw new ParameterError(entry.key, `"${entry.value}" must be key=value`);
    }
    const key = entry.value.slice(0, separator);
    const value = expand(entry, entry.value.slice(separator + 1), values);
    if (key === '') throw new ParameterError(entry.key, 'the tag key before "=" is empty');
    if ([...key].length > MAX_TAG_KEY_LENGTH) {
      throw new ParameterError(entry.key, `tag key is longer than EC2's ${MAX_TAG_KEY_LENGTH} characters`);
    }
    if ([...value].length > MAX_TAG_VALUE_LENGTH) {
      throw new ParameterError(entry.key, `tag value for "${key}" is longer than EC2's ${MAX_TAG_VALUE_LENGTH} characters`);
    }
    if (isReservedTagKey(key)) {
      throw new ParameterError(entry.key, `tag key "${key}" is reserved (${RESERVED_TAG_KEYS_TEXT})`);
    }
    const earlier = origin.get(key);
    if (earlier !== undefined) {
      throw new ParameterError(entry.key, `tag key "${key}" is already set by ${earlier}`);
    }
    origin.set(key, entry.key);
    tags[key] = value;
  }
  return tags;
}

function expand(entry: ParameterEntry, template: string, values: TagTemplateValues): string {
  try {
    return evaluateTemplate(template, values);
  } catch (error) {
    if (error instanceof TemplateError) throw new ParameterError(entry.key, `tag value template ${error.message}`);
    throw error;
  }
}
