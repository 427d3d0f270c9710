import { isReservedTagKey, RESERVED_TAG_KEYS_TEXT } from '../contract/tags.js';
import { ParameterError } from './errors.js';
import type { ParameterEntry } from './parameters.js';

/** The values a tag template may use: the driver's `{{ .PVCName }}` and friends. */
export interface TagTemplateValues {
  PVCName: string;
  PVCNamespace: string;
  PVName: string;
}

/** EC2's limits on a tag, in Unicode characters. */
const MAX_TAG_KEY_LENGTH = 128;
const MAX_TAG_VALUE_LENGTH = 256;

const TEMPLATE_ACTION = /\{\{(.*?)\}\}/g;
const TEMPLATE_VARIABLE = /^\.(PVCName|PVCNamespace|PVName)$/;

/**
 * The tags a class's `tagSpecification_N` entries ask for: `key=value`, split at the first
 * `=` (so values may contain `=`), with `{{ .PVCName }}`, `{{ .PVCNamespace }}` and
 * `{{ .PVName }}` in the value replaced.
 *
 * Only those three variables are understood — not the rest of Go's text/template the driver
 * runs — so any other `{{ … }}`, or an unclosed `{{`, is refused rather than passed on as
 * literal text the user did not mean.
 *
 * @throws ParameterError naming the tagSpecification key: no `=`, an empty or over-long key,
 * an over-long value, a reserved key, an unknown template, or the same tag key twice.
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
    const value = expandTemplate(entry, entry.value.slice(separator + 1), values);
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

function expandTemplate(entry: ParameterEntry, template: string, values: TagTemplateValues): string {
  const expanded = template.replace(TEMPLATE_ACTION, (action: string, inner: string) => {
    const variable = TEMPLATE_VARIABLE.exec(inner.trim())?.[1] as keyof TagTemplateValues | undefined;
    if (!variable) {
      throw new ParameterError(entry.key, `template ${action} is not one of {{ .PVCName }}, {{ .PVCNamespace }}, {{ .PVName }}`);
    }
    return values[variable];
  });
  if (template.replace(TEMPLATE_ACTION, '').includes('{{')) {
    throw new ParameterError(entry.key, `"${template}" has a "{{" that is never closed with "}}"`);
  }
  return expanded;
}
