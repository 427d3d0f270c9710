/**
 * Operations in progress in this process, by name — the EBS CSI driver's `inFlight` guard: a
 * CreateSnapshot for a name that is being created already answers "in progress" instead of
 * racing it (CreateSnapshot has no ClientToken; two concurrent look-ups could both find
 * nothing and both create). Across processes the reconciler's look-up after creating deletes
 * a younger duplicate; within one, this keeps it from being made at all. Likewise a volume
 * being modified or tagged (modify.ts): two look-ups could both find a tag missing.
 */
const running = new Set<string>();

/** Runs `operation` unless one for `key` is running here; then `busy` instead. */
export async function exclusively<T>(key: string, operation: () => Promise<T>, busy: () => T): Promise<T> {
  if (running.has(key)) return busy();
  running.add(key);
  try {
    return await operation();
  } finally {
    running.delete(key);
  }
}
