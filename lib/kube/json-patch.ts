/** JSON Patch (RFC 6902) operations and the guarded finalizer patches built from them. */

export type JsonPatchOp =
  | { op: 'test' | 'add' | 'replace'; path: string; value: unknown }
  | { op: 'remove'; path: string };

/** Escapes one JSON Pointer token: `~` → `~0`, `/` → `~1` (annotation keys contain `/`). */
export function escapePointerToken(token: string): string {
  return token.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** The metadata a guarded patch is computed from: the object as just read. */
export interface ObservedMeta {
  uid?: string;
  resourceVersion?: string;
  finalizers?: string[] | null;
}

/**
 * The patch that adds or removes `finalizer`, or `undefined` when it is already present
 * (add) or absent (remove).
 *
 * Every patch starts with `test`s of what it was computed from: the object's uid (never touch
 * a namesake created since the read), and the finalizer list as read — or the
 * resourceVersion when there is no list yet. This prevents the lost-update race where two
 * writers (volhook and, say, the PV controller adding `kubernetes.io/pv-protection`) each read
 * the list, each append their own entry and the later write silently drops the earlier one.
 * With the `test` the later write fails with 422 instead, and the caller re-reads and retries.
 */
export function finalizerPatch(
  meta: ObservedMeta,
  finalizer: string,
  action: 'add' | 'remove',
): JsonPatchOp[] | undefined {
  const current = meta.finalizers ?? [];
  const present = current.includes(finalizer);
  if (action === 'add' ? present : !present) return undefined;

  const ops: JsonPatchOp[] = [];
  if (meta.uid) ops.push({ op: 'test', path: '/metadata/uid', value: meta.uid });
  if (action === 'add') {
    if (meta.finalizers && meta.finalizers.length > 0) {
      ops.push({ op: 'test', path: '/metadata/finalizers', value: current });
      ops.push({ op: 'add', path: '/metadata/finalizers/-', value: finalizer });
    } else {
      // No list to test (it may be absent or null): guard on the whole object's version.
      ops.push({ op: 'test', path: '/metadata/resourceVersion', value: meta.resourceVersion ?? '' });
      ops.push({ op: 'add', path: '/metadata/finalizers', value: [finalizer] });
    }
    return ops;
  }
  const remaining = current.filter((f) => f !== finalizer);
  ops.push({ op: 'test', path: '/metadata/finalizers', value: current });
  ops.push(
    remaining.length > 0
      ? { op: 'replace', path: '/metadata/finalizers', value: remaining }
      : { op: 'remove', path: '/metadata/finalizers' },
  );
  return ops;
}
