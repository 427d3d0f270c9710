/**
 * `metadata.managedFields` to and from the managers of `updater.ts`, as apimachinery's
 * managedfields package encodes them: one entry per manager identity (manager, operation,
 * subresource, and for updates the API version), `fieldsType: FieldsV1`, sorted Apply first,
 * then by time, manager, API version and subresource.
 */
import { deepEqual, isObject } from '../json.js';
import type { KubeObject } from '../types.js';
import { FieldSet } from './fieldpath.js';
import type { Managers } from './updater.js';

export type Operation = 'Apply' | 'Update';

/** `metav1.ManagedFieldsEntry`, keys in the order Go writes them. */
export interface ManagedFieldsEntry {
  manager?: string;
  operation?: Operation;
  apiVersion?: string;
  time?: string;
  fieldsType?: 'FieldsV1';
  fieldsV1?: Record<string, unknown>;
  subresource?: string;
}

/** Managers and the time each last changed something (RFC 3339, whole seconds). */
export interface Managed {
  managers: Managers;
  times: Map<string, string | undefined>;
}

export const emptyManaged = (): Managed => ({ managers: new Map(), times: new Map() });

interface Identity {
  manager: string;
  operation: Operation;
  apiVersion?: string;
  subresource?: string;
}

/** `BuildManagerIdentifier`: the entry without time and fields, and without the API version for appliers. */
export function managerId(identity: Identity): string {
  const id: Record<string, string> = { manager: identity.manager, operation: identity.operation };
  if (identity.operation === 'Update' && identity.apiVersion) id.apiVersion = identity.apiVersion;
  if (identity.subresource) id.subresource = identity.subresource;
  return JSON.stringify(id);
}

export function parseManagerId(id: string): Identity {
  return JSON.parse(id) as Identity;
}

/** `printManager`: `"kubectl"`, `"kube-controller-manager" using v1`, `"x" with subresource "status"`. */
export function managerText(id: string): string {
  let identity: Identity;
  try {
    identity = parseManagerId(id);
  } catch {
    return JSON.stringify(id);
  }
  let text = JSON.stringify(identity.manager);
  if (identity.subresource) text += ` with subresource ${JSON.stringify(identity.subresource)}`;
  if (identity.operation === 'Update') text += ` using ${identity.apiVersion ?? ''}`;
  return text;
}

export class ManagedFieldsError extends Error {}

/** `DecodeManagedFields`; throws `ManagedFieldsError` with upstream's wording for a malformed entry. */
export function decodeManagedFields(entries: unknown): Managed {
  const managed = emptyManaged();
  if (entries === undefined || entries === null) return managed;
  if (!Array.isArray(entries)) throw new ManagedFieldsError('managedFields must be a list');
  entries.forEach((entry, i) => {
    if (!isObject(entry)) throw new ManagedFieldsError(`managed fields entry ${i} must be an object`);
    const { operation, apiVersion, fieldsType, manager, subresource, time, fieldsV1 } = entry;
    if (operation !== 'Apply' && operation !== 'Update') throw new ManagedFieldsError('operation must be `Apply` or `Update`');
    if (typeof apiVersion !== 'string' || apiVersion.length < 1) throw new ManagedFieldsError('apiVersion must not be empty');
    if (fieldsType === undefined || fieldsType === '') throw new ManagedFieldsError(`missing fieldsType in managed fields entry ${i}`);
    if (fieldsType !== 'FieldsV1') throw new ManagedFieldsError(`invalid fieldsType ${JSON.stringify(fieldsType)} in managed fields entry ${i}`);
    const identity: Identity = { manager: typeof manager === 'string' ? manager : '', operation, apiVersion };
    if (typeof subresource === 'string' && subresource) identity.subresource = subresource;
    const id = managerId(identity);
    let set: FieldSet;
    try {
      set = FieldSet.fromFieldsV1(fieldsV1 ?? {});
    } catch (err) {
      throw new ManagedFieldsError(`error decoding versioned set: ${(err as Error).message}`);
    }
    managed.managers.set(id, { set, apiVersion, applied: operation === 'Apply' });
    managed.times.set(id, typeof time === 'string' ? time : undefined);
  });
  return managed;
}

/** `isResetManagedFields`: `[]` or `[{}]` in a request clears the object's managed fields. */
export function isResetManagedFields(entries: unknown): boolean {
  return Array.isArray(entries) && (entries.length === 0 || (entries.length === 1 && isObject(entries[0]) && Object.keys(entries[0]).length === 0));
}

/** `encodeManagedFields`: undefined when no manager is left (the field is then omitted). */
export function encodeManagedFields(managed: Managed): ManagedFieldsEntry[] | undefined {
  if (managed.managers.size === 0) return undefined;
  const entries = [...managed.managers].map(([id, owned]) => {
    const identity = parseManagerId(id);
    const entry: ManagedFieldsEntry = { manager: identity.manager, operation: owned.applied ? 'Apply' : 'Update', apiVersion: owned.apiVersion };
    const time = managed.times.get(id);
    if (time) entry.time = time;
    entry.fieldsType = 'FieldsV1';
    entry.fieldsV1 = owned.set.toFieldsV1();
    if (identity.subresource) entry.subresource = identity.subresource;
    return entry;
  });
  const seconds = (t: string | undefined): number => (t ? Date.parse(t) : 0);
  const order = (a: string | undefined, b: string | undefined): number => ((a ?? '') < (b ?? '') ? -1 : (a ?? '') > (b ?? '') ? 1 : 0);
  return entries.sort(
    (p, q) =>
      order(p.operation, q.operation) ||
      seconds(p.time) - seconds(q.time) ||
      order(p.manager, q.manager) ||
      order(p.apiVersion, q.apiVersion) ||
      order(p.subresource, q.subresource),
  );
}

/**
 * `IgnoreManagedFieldsTimestampsTransformer` (kube-apiserver's registry, on every update):
 * when a write changes nothing but managedFields timestamps — an apply whose merge differed
 * from the live object only until defaulting or conversion (a Secret's stringData, a defaulted
 * field in an atomic struct) — the old timestamps are kept, so no resourceVersion is used.
 * Mutates `next`.
 */
export function keepTimestampsOfNoop(next: KubeObject, previous: KubeObject): void {
  const now = next.metadata.managedFields;
  const before = previous.metadata.managedFields;
  if (!Array.isArray(now) || !Array.isArray(before) || now.length !== before.length || now.length === 0) return;
  const timeOf = (entry: unknown): unknown => (isObject(entry) ? entry.time : undefined);
  if (now.every((entry, i) => timeOf(entry) === timeOf(before[i]))) return;
  const withoutTime = (entry: unknown): unknown => (isObject(entry) ? { ...entry, time: undefined } : entry);
  if (!now.every((entry, i) => deepEqual(withoutTime(entry), withoutTime(before[i])))) return;
  const rest = (o: KubeObject): unknown => ({ ...o, metadata: { ...o.metadata, managedFields: undefined } });
  if (!deepEqual(rest(next), rest(previous))) return;
  next.metadata.managedFields = now.map((entry, i) => {
    if (!isObject(entry)) return entry;
    const time = timeOf(before[i]);
    const { time: _changed, ...others } = entry;
    return time === undefined ? others : { ...others, time };
  });
}
