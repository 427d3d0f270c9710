/**
 * A deduplicating work queue of keys, as client-go's: adding a key already waiting is a
 * no-op, so a burst of events about one object costs one sync. One worker takes keys in
 * order; a key added while its sync runs waits again and is synced once more afterwards.
 */
export class WorkQueue {
  private readonly waiting = new Set<string>();
  private readonly timers = new Set<NodeJS.Timeout>();

  /** @param onAdd called after a key starts waiting, to wake the worker. */
  constructor(private readonly onAdd: () => void) {}

  add(key: string): void {
    if (this.waiting.has(key)) return;
    this.waiting.add(key);
    this.onAdd();
  }

  /** Adds the key after `delayMs` (retries with backoff). */
  addAfter(key: string, delayMs: number): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.add(key);
    }, delayMs);
    timer.unref();
    this.timers.add(timer);
  }

  /** The oldest waiting key, removed from the queue; undefined when empty. */
  take(): string | undefined {
    const next = this.waiting.values().next();
    if (next.done) return undefined;
    this.waiting.delete(next.value);
    return next.value;
  }

  get size(): number {
    return this.waiting.size;
  }

  /** Keys added later by {@link addAfter} whose delay has not run out yet. */
  get delayed(): number {
    return this.timers.size;
  }

  /** Drops waiting keys and pending retries. */
  clear(): void {
    this.waiting.clear();
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }
}
