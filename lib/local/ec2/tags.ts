import { Ec2Error, ec2Errors } from './errors.js';
import type { Tag } from './model.js';

const MAX_TAGS = 50;

/** Checks tags as EC2 does before any of them is applied. */
export function checkTags(tags: readonly { key: string; value: string | undefined }[]): Tag[] {
  const seen = new Set<string>();
  return tags.map(({ key, value }) => {
    if (key === '') throw ec2Errors.invalidValue('Tag key cannot be empty.');
    if (key.length > 128) throw ec2Errors.invalidValue(`Tag key exceeds the maximum length of 128 characters.`);
    if ((value ?? '').length > 256) throw ec2Errors.invalidValue(`Tag value exceeds the maximum length of 256 characters.`);
    if (key.toLowerCase().startsWith('aws:')) {
      throw ec2Errors.invalidValue(`Tag keys starting with 'aws:' are reserved for internal use`);
    }
    if (seen.has(key)) throw ec2Errors.invalidValue(`Duplicate tag key '${key}' specified.`);
    seen.add(key);
    return { key, value: value ?? '' };
  });
}

/** Adds or overwrites; refuses to go past EC2's 50 tags per resource. */
export function mergeTags(current: readonly Tag[], add: readonly Tag[]): Tag[] {
  const out = current.map((t) => ({ ...t }));
  for (const t of add) {
    const existing = out.find((x) => x.key === t.key);
    if (existing) existing.value = t.value;
    else out.push({ ...t });
  }
  if (out.length > MAX_TAGS) {
    throw new Ec2Error('TagLimitExceeded', `The maximum number of tags (${MAX_TAGS}) for a resource has been reached.`);
  }
  return out;
}

/** A tag named without a value goes whatever its value; with one, only if it matches. */
export function removeTags(current: readonly Tag[], remove: readonly { key: string; value: string | undefined }[]): Tag[] {
  if (remove.length === 0) return [];
  return current.filter(
    (t) => !remove.some((r) => r.key === t.key && (r.value === undefined || r.value === t.value)),
  );
}
