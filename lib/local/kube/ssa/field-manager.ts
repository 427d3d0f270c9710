/**
 * kube-apiserver's field manager (apimachinery `managedfields/internal`: the chain
 * `NewDefaultFieldManager` builds), for one kind and endpoint:
 *
 * - Updates (create, update, non-apply patch) are recorded per manager (operation Update).
 *   As `NewProbabilisticSkipNonAppliedManager` with the server's default probability 1
 *   (`DefaultTrackOnCreateProbability`): a create is tracked, so every object carries its
 *   writers from the start; an update of an object that carries none (its managedFields were
 *   reset) stays untracked, and the first apply gives its fields to `before-first-apply`.
 * - Applies merge the configuration, prune what the manager dropped, refuse conflicts (409)
 *   unless forced, and record the applied set (operation Apply). For `kubectl` an apply over
 *   a client-side applied object may take fields whose value still is the last-applied one
 *   (`lastAppliedManager`), and keeps the last-applied annotation current (`lastAppliedUpdater`).
 * - Update managers beyond 10 are merged into `ancient-changes`, oldest first.
 * - Not done: conversion between API versions (one version per kind is served).
 */
import { KubeApiError } from '../errors.js';
import { clone, isObject, type JsonObject } from '../json.js';
import { apiVersionOf, type ResourceInfo } from '../resources.js';
import { rootType } from '../schema/schema.js';
import type { KubeObject } from '../types.js';
import { FieldSet, fieldElement, pathText, type Path } from './fieldpath.js';
import {
  ManagedFieldsError,
  decodeManagedFields,
  emptyManaged,
  encodeManagedFields,
  isResetManagedFields,
  managerId,
  managerText,
  type Managed,
  type ManagedFieldsEntry,
} from './managed-fields.js';
import { compare, toFieldSet, validate, validationText } from './typed.js';
import { ConflictsError, applyConfig, updateConfig, type Conflict, type UpdaterContext } from './updater.js';

export const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

/** `stripMetaManager`: fields no manager ever owns. */
const STRIPPED = FieldSet.of([
  ['f:apiVersion'],
  ['f:kind'],
  ['f:metadata'],
  ...['name', 'namespace', 'creationTimestamp', 'selfLink', 'uid', 'clusterName', 'generation', 'managedFields', 'resourceVersion'].map((f) => ['f:metadata', `f:${f}`]),
]);

const STATUS = FieldSet.of([[fieldElement('status')]]);

export interface FieldManagerScope {
  info: ResourceInfo;
  subresource?: 'status';
  /** The write's time, as managedFields entries carry it (RFC 3339, seconds). */
  now: string;
}

/** The reset fields of an endpoint: status on the main resource of a kind with /status; all but status on /status. */
function context(scope: FieldManagerScope): UpdaterContext {
  const { info } = scope;
  let filter = (set: FieldSet): FieldSet => set;
  if (scope.subresource === 'status') {
    filter = (set) => {
      const status = set.withPrefix('f:status');
      return FieldSet.fromParts(new Set(set.members.has('f:status') ? ['f:status'] : []), status.empty() ? new Map() : new Map([['f:status', status]]));
    };
  }
  else if (info.status) filter = (set) => set.recursiveDifference(STATUS);
  return { ref: rootType(info), apiVersion: apiVersionOf(info), filter };
}

function withoutManagedFields(object: KubeObject | JsonObject): JsonObject {
  const copy = clone(object) as JsonObject;
  if (isObject(copy.metadata)) delete copy.metadata.managedFields;
  return copy;
}

function strip(managed: Managed, id: string): void {
  const owned = managed.managers.get(id);
  if (!owned) return;
  const set = owned.set.difference(STRIPPED);
  if (set.empty()) managed.managers.delete(id);
  else managed.managers.set(id, { ...owned, set });
}

/** `managedFieldsUpdater.Update` over `structuredMergeManager.Update`: the manager owns what this write changed, stamped now. */
function recordUpdate(scope: FieldManagerScope, managed: Managed, live: JsonObject, next: JsonObject, manager: string): void {
  const ctx = context(scope);
  const id = managerId({ manager: manager || 'unknown', operation: 'Update', apiVersion: ctx.apiVersion, ...(scope.subresource ? { subresource: scope.subresource } : {}) });
  const self = 'current-operation';
  const managers = updateConfig(live, next, managed.managers, self, ctx);
  const current: Managed = { managers, times: managed.times };
  strip(current, self);
  const operation = current.managers.get(self);
  if (operation) {
    current.managers.delete(self);
    const previous = current.managers.get(id);
    current.managers.set(id, { ...operation, set: previous ? operation.set.union(previous.set) : operation.set });
    current.times.set(id, scope.now);
  }
  managed.managers = current.managers;
  capUpdateManagers(managed);
}

const MAX_UPDATE_MANAGERS = 10;

/** `capManagersManager`: beyond 10 update managers, the oldest are merged into `ancient-changes` (one per API version). */
function capUpdateManagers(managed: Managed): void {
  const updaters = [...managed.managers].filter(([, owned]) => !owned.applied).map(([id]) => id);
  if (updaters.length <= MAX_UPDATE_MANAGERS) return;
  const seconds = (id: string): number => Date.parse(managed.times.get(id) ?? '') || 0;
  updaters.sort((a, b) => seconds(a) - seconds(b) || (a < b ? -1 : a > b ? 1 : 0));
  const firstOfVersion = new Map<string, string>();
  let count = updaters.length;
  for (const id of updaters) {
    if (count <= MAX_UPDATE_MANAGERS) break;
    const owned = managed.managers.get(id);
    if (!owned) continue;
    const bucket = managerId({ manager: 'ancient-changes', operation: 'Update', apiVersion: owned.apiVersion });
    const first = firstOfVersion.get(owned.apiVersion);
    if (first === undefined) {
      firstOfVersion.set(owned.apiVersion, id);
      continue;
    }
    if (!managed.managers.has(bucket)) {
      const firstSet = managed.managers.get(first);
      managed.managers.delete(first);
      if (firstSet) managed.managers.set(bucket, firstSet);
    }
    const merged = managed.managers.get(bucket);
    managed.managers.set(bucket, { ...owned, set: merged ? owned.set.union(merged.set) : owned.set });
    managed.managers.delete(id);
    managed.times.set(bucket, managed.times.get(id));
    count--;
  }
}

/**
 * The managedFields of `next` after a non-apply write replacing `live` (undefined on create)
 * by `manager`; undefined when the object carries none. The request's own managedFields are
 * taken when it sets some (`[]` or `[{}]` clears them), as `decodeLiveOrNew` takes them.
 */
export function managedFieldsAfterUpdate(scope: FieldManagerScope, live: KubeObject | undefined, next: KubeObject, manager: string): ManagedFieldsEntry[] | undefined {
  const decodeOrEmpty = (entries: unknown): Managed => {
    try {
      return decodeManagedFields(entries);
    } catch (err) {
      if (err instanceof ManagedFieldsError) return emptyManaged();
      throw err;
    }
  };
  let managed: Managed;
  if (scope.subresource) managed = decodeOrEmpty(live?.metadata.managedFields);
  else if (isResetManagedFields(next.metadata.managedFields)) managed = emptyManaged();
  else {
    managed = decodeOrEmpty(next.metadata.managedFields);
    if (managed.managers.size === 0) managed = decodeOrEmpty(live?.metadata.managedFields);
  }
  // skipNonAppliedManager with probability 1: a create is tracked; an update of an object
  // without managed fields is not.
  if (managed.managers.size === 0 && live !== undefined) return undefined;
  recordUpdate(scope, managed, live ? withoutManagedFields(live) : {}, withoutManagedFields(next), manager);
  return encodeManagedFields(managed);
}

/** `metadata.namespace/name; group/version, Kind=K`, as errors of the field manager name an object. */
function objectName(info: ResourceInfo, object: JsonObject): string {
  const meta = isObject(object.metadata) ? object.metadata : {};
  return `${String(meta.namespace ?? '')}/${String(meta.name ?? '')}; ${info.group}/${info.version}, Kind=${info.kind}`;
}

/** `NewConflictError`: 409 Conflict, one cause per field, the message listing managers and fields. */
export function conflictError(conflicts: readonly Conflict[]): KubeApiError {
  const causes = conflicts.map((c) => ({ reason: 'FieldManagerConflict', message: `conflict with ${managerText(c.manager)}`, field: pathText(c.path) }));
  let message: string;
  if (conflicts.length === 1) {
    const [only] = conflicts as [Conflict];
    message = `Apply failed with 1 conflict: conflict with ${managerText(only.manager)}: ${pathText(only.path)}`;
  } else {
    const byManager = new Map<string, Path[]>();
    for (const c of conflicts) byManager.set(c.manager, [...(byManager.get(c.manager) ?? []), c.path]);
    const lines = [...byManager.keys()].sort().flatMap((m) => [`conflicts with ${managerText(m)}:`, ...(byManager.get(m) as Path[]).map((p) => `- ${pathText(p)}`)]);
    message = `Apply failed with ${conflicts.length} conflicts: ${lines.join('\n')}`;
  }
  return new KubeApiError('Conflict', message, { causes });
}

/** `lastAppliedManager.allowedConflictsFromLastApplied`: fields of the last-applied configuration whose value is still the live one. */
function allowedFromLastApplied(live: JsonObject, ctx: UpdaterContext): FieldSet | undefined {
  const meta = isObject(live.metadata) ? live.metadata : {};
  const text = isObject(meta.annotations) ? meta.annotations[LAST_APPLIED] : undefined;
  if (typeof text !== 'string' || !text) return undefined;
  let lastApplied: unknown;
  try {
    lastApplied = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isObject(lastApplied) || lastApplied.apiVersion !== ctx.apiVersion || validate(lastApplied, ctx.ref).length > 0) return undefined;
  const changed = compare(lastApplied, live, ctx.ref);
  return toFieldSet(lastApplied, ctx.ref).difference(changed.modified).difference(changed.added).difference(changed.removed);
}

/** Go's encoding of an unstructured object: keys sorted at every level, then a newline (`json.Encoder`). */
function sortedJson(value: unknown): string {
  const sort = (v: unknown): unknown =>
    Array.isArray(v) ? v.map(sort) : isObject(v) ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, sort(v[k])])) : v;
  return `${JSON.stringify(sort(value))}\n`;
}

export interface ApplyResult {
  /** The object to store: the merge, or the live object unchanged. managedFields not set. */
  object: JsonObject;
  managedFields: ManagedFieldsEntry[] | undefined;
}

/**
 * A server-side apply of `config` by `manager` over `live` (undefined: the object does not
 * exist yet). Throws 400 for a configuration the schema refuses and 409 for conflicts.
 */
export function applyWithFieldManager(scope: FieldManagerScope, live: KubeObject | undefined, config: JsonObject, manager: string, force: boolean): ApplyResult {
  const ctx = context(scope);
  if (isObject(config.metadata) && config.metadata.managedFields !== undefined) throw new KubeApiError('BadRequest', 'metadata.managedFields must be nil');
  const errors = validate(config, ctx.ref);
  if (errors.length > 0) {
    // kube-apiserver 1.34 answers this with a 500 (kubernetes/kubernetes#139253, fix pending as #139255); a 400 is what it means.
    throw new KubeApiError('BadRequest', `failed to create typed patch object (${objectName(scope.info, config)}): ${validationText(errors)}`);
  }
  let managed: Managed;
  try {
    managed = decodeManagedFields(live?.metadata.managedFields);
  } catch (err) {
    throw new KubeApiError('InternalError', `failed to decode managed fields: ${(err as Error).message}`);
  }
  const base = live ? withoutManagedFields(live) : {};
  if (managed.managers.size === 0) recordUpdate(scope, managed, {}, base, 'before-first-apply');
  const id = managerId({ manager, operation: 'Apply', ...(scope.subresource ? { subresource: scope.subresource } : {}) });
  const attempt = (forced: boolean): { object: unknown; managed: Managed } => {
    const result = applyConfig(base, config, new Map(managed.managers), id, forced, ctx);
    const times = new Map(managed.times);
    if (result.object !== undefined) times.set(id, scope.now);
    const next: Managed = { managers: result.managers, times };
    strip(next, id);
    return { object: result.object, managed: next };
  };
  let outcome: { object: unknown; managed: Managed };
  try {
    outcome = attempt(force);
  } catch (err) {
    if (!(err instanceof ConflictsError)) throw err;
    const allowed = manager === 'kubectl' ? allowedFromLastApplied(base, ctx) : undefined;
    const remaining = allowed ? err.conflicts.filter((c) => !allowed.has(c.path)) : err.conflicts;
    if (remaining.length > 0) throw conflictError(remaining);
    outcome = attempt(true);
  }
  const object = (outcome.object === undefined ? base : outcome.object) as JsonObject;
  const meta = isObject(object.metadata) ? object.metadata : undefined;
  if (manager === 'kubectl' && meta && isObject(meta.annotations) && typeof meta.annotations[LAST_APPLIED] === 'string' && meta.annotations[LAST_APPLIED]) {
    const applied = clone(config);
    if (isObject(applied.metadata) && isObject(applied.metadata.annotations)) delete applied.metadata.annotations[LAST_APPLIED];
    meta.annotations[LAST_APPLIED] = sortedJson(applied);
  }
  return { object, managedFields: encodeManagedFields(outcome.managed) };
}
