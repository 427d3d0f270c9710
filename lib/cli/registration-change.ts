/**
 * `cluster set`, decided purely: a stored registration with a change applied (checked as `add`
 * checks its options, then by the registration's one schema), and the diff of the two. The
 * secrets, the region, the session and the write-back are never part of a change.
 */
import { isDeepStrictEqual } from 'node:util';
import { zoneProblem, type RegistrationChange } from './args.js';
import { readStored, type StoredRegistration } from './edits.js';

/** A change refused, with what to fix; nothing is written. */
export class ChangeRefused extends Error {
  override readonly name = 'ChangeRefused';
}

/** The registration's fields a change may touch, in the order the diff lists them. */
export const CHANGED_FIELDS = ['maxSizeGiB', 'allowedZones', 'allowedVolumeTypes', 'extraTags', 'audit'] as const;

export function applyChange(clusterId: string, stored: StoredRegistration, change: RegistrationChange): StoredRegistration {
  const region = stored['region'];
  if (typeof region !== 'string') throw new ChangeRefused(`cluster "${clusterId}" has no region in its registration`);
  for (const zone of change.allowedZones ?? []) {
    const problem = zoneProblem(zone, region);
    if (problem) throw new ChangeRefused(`--zones: ${problem} (the registration's region)`);
  }
  const next: StoredRegistration = { ...stored, secrets: stored.secrets };
  if (change.maxSizeGiB !== undefined) next['maxSizeGiB'] = change.maxSizeGiB;
  if (change.allowedZones !== undefined) next['allowedZones'] = change.allowedZones;
  if (change.allowedVolumeTypes !== undefined) next['allowedVolumeTypes'] = change.allowedVolumeTypes;
  if (change.extraTags !== undefined) next['extraTags'] = change.extraTags;
  if (change.audit !== undefined) next['audit'] = { ...(stored['audit'] as object | undefined), ...change.audit };
  try {
    return readStored(clusterId, next);
  } catch (err) {
    throw new ChangeRefused(`the changed registration would be invalid: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** `field: before -> after`, one line per changed field; empty when nothing changes. */
export function registrationDiff(before: StoredRegistration, after: StoredRegistration): string[] {
  const show = (value: unknown) => (value === undefined ? '(unset)' : JSON.stringify(value));
  return CHANGED_FIELDS.filter((field) => !isDeepStrictEqual(before[field], after[field])).map((field) => `${field}: ${show(before[field])} -> ${show(after[field])}`);
}
