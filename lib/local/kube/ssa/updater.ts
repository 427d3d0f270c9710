/**
 * Field ownership across writes: structured-merge-diff's `merge.Updater` (merge/update.go).
 * `updateManagers` moves the fields a write changes to its manager and finds the conflicts an
 * apply would cause; `applyConfig` merges an applied configuration, prunes what its manager
 * applied before and now omits (unless another manager owns it), and records the new set.
 * One API version per kind is served, so no conversion between versions is needed.
 */
import type { TypeRef } from '../schema/model.js';
import { FieldSet, type Path } from './fieldpath.js';
import { compare, ensureNamedFieldsAreMembers, merge, removeItems, toFieldSet, type Comparison } from './typed.js';
import { deepEqual } from '../json.js';

/** One manager's fields: its identity is the key of `Managers` (manager, operation, subresource…). */
export interface ManagedSet {
  set: FieldSet;
  apiVersion: string;
  applied: boolean;
}

export type Managers = Map<string, ManagedSet>;

export interface Conflict {
  manager: string;
  path: Path;
}

/** An apply that would change fields other managers own (`merge.Conflicts`). */
export class ConflictsError extends Error {
  constructor(readonly conflicts: Conflict[]) {
    super('conflicts');
  }
}

/** What one kind needs: its schema and its reset fields (the filter a write's fields pass through). */
export interface UpdaterContext {
  ref: TypeRef;
  apiVersion: string;
  /** Removes the fields this endpoint never writes (status on the main resource, all but status on /status). */
  filter: (set: FieldSet) => FieldSet;
}

function filtered(comparison: Comparison, ctx: UpdaterContext): Comparison {
  return { added: ctx.filter(comparison.added), modified: ctx.filter(comparison.modified), removed: ctx.filter(comparison.removed) };
}

/** `Updater.update`: conflicts with (or, when forced, ownership taken from) every other manager. */
function updateManagers(live: unknown, next: unknown, managers: Managers, workflow: string, force: boolean, ctx: UpdaterContext): { managers: Managers; comparison: Comparison } {
  const comparison = filtered(compare(live, next, ctx.ref), ctx);
  const changed = comparison.modified.union(comparison.added);
  const conflicts = new Map<string, FieldSet>();
  for (const [manager, owned] of managers) {
    if (manager === workflow) continue;
    const conflict = owned.set.intersection(changed);
    if (!conflict.empty()) conflicts.set(manager, conflict);
  }
  if (!force && conflicts.size > 0) {
    throw new ConflictsError([...conflicts].flatMap(([manager, set]) => set.paths().map((path) => ({ manager, path }))));
  }
  const out: Managers = new Map();
  for (const [manager, owned] of managers) {
    let set = owned.set;
    if (manager !== workflow) {
      const conflict = conflicts.get(manager);
      if (conflict) set = set.difference(conflict);
      set = set.difference(comparison.removed);
    }
    if (!set.empty()) out.set(manager, { ...owned, set });
  }
  return { managers: out, comparison };
}

/** `Updater.Update` (create, update and non-apply patch): the manager owns what it changed, on top of what it owned. */
export function updateConfig(live: unknown, next: unknown, managers: Managers, manager: string, ctx: UpdaterContext): Managers {
  const { managers: updated, comparison } = updateManagers(live, next, managers, manager, true, ctx);
  const previous = updated.get(manager)?.set ?? FieldSet.EMPTY;
  const set = ctx.filter(previous.difference(comparison.removed).union(comparison.modified).union(comparison.added));
  if (set.empty()) updated.delete(manager);
  else updated.set(manager, { set, apiVersion: ctx.apiVersion, applied: false });
  return updated;
}

/**
 * `Updater.Apply`: `config` merged into `live`, pruned of what `manager` applied last time and
 * not now (unless another manager owns it), conflicts refused unless `force`. `object` is
 * undefined when the apply changes nothing in the object (ownership may still change).
 */
export function applyConfig(live: unknown, config: unknown, managers: Managers, manager: string, force: boolean, ctx: UpdaterContext): { object: unknown; managers: Managers } {
  let merged = merge(live, config, ctx.ref);
  const last = managers.get(manager);
  const set = ctx.filter(toFieldSet(config, ctx.ref));
  const withNew: Managers = new Map(managers);
  withNew.set(manager, { set, apiVersion: ctx.apiVersion, applied: true });
  merged = prune(merged, withNew, last, ctx);
  const { managers: updated } = updateManagers(live, merged, withNew, manager, force, ctx);
  return { object: deepEqual(live, merged) ? undefined : merged, managers: updated };
}

/** Removes what the applier applied last time (`last`) unless someone (the applier's new set included) still owns it. */
function prune(merged: unknown, managers: Managers, last: ManagedSet | undefined, ctx: UpdaterContext): unknown {
  if (!last || last.set.empty()) return merged;
  const ensure = (set: FieldSet): FieldSet => ensureNamedFieldsAreMembers(set, ctx.ref);
  let pruned = removeItems(merged, ensure(last.set), ctx.ref);
  // addBackOwnedItems: keep what anyone owns (this manager's new set included).
  let owned = FieldSet.EMPTY;
  for (const { set } of managers.values()) owned = owned.union(set);
  const mergedSet = ensure(toFieldSet(merged, ctx.ref));
  pruned = removeItems(merged, mergedSet.difference(ensure(toFieldSet(pruned, ctx.ref)).union(ensure(owned))), ctx.ref);
  // addBackDanglingItems: remove only what this manager owned before; unowned fields stay.
  const prunedSet = ensure(toFieldSet(pruned, ctx.ref));
  return removeItems(merged, mergedSet.difference(prunedSet).intersection(ensure(last.set)), ctx.ref);
}
