/**
 * The forwarder's work queue, keyed by `itemKey`. Pure: it holds keys and times, never
 * objects (items are built from the caches at send time, so they are fresh), and it reads
 * time only from the injected clock, so tests drive it without timers.
 *
 * - Coalescing: offering a queued key again does not add a second entry; offering a key whose
 *   batch is in flight marks it to run again once that batch settles.
 * - Batching: `take()` returns up to `batchSize` due keys, and nothing while `maxInFlight`
 *   batches are out.
 * - Backoff per key: each consecutive failure doubles the wait (1 s, 2 s, 4 s … capped at
 *   5 min); an answer that applied (`done`, `requeue`) resets it. A new event cuts short the wait after `requeue` or `failed` (the object
 *   changed, so the answer may differ: a node was re-selected, a class fixed; echoes of
 *   volhook's own writes are no such event and never get here, see changes.ts), but not the
 *   backoff after an `error` (no answer, or writes that did not apply): a backend that is
 *   down must not be hammered by a busy cluster.
 * - Never drops a key on failure: only `done` and `forget` (the object is gone) remove it.
 * - Cadence: while many keys are queued, every due time is rounded up to a grid of the clock,
 *   so that what falls due around the same moment goes out in the same batch and shares its
 *   requests' EC2 describes, instead of trickling out one key a request. A quiet queue sends
 *   at once: a single volume is not held up.
 */

export interface BackoffOptions {
  initialMs: number;
  maxMs: number;
}

export const DEFAULT_BACKOFF: BackoffOptions = { initialMs: 1_000, maxMs: 5 * 60_000 };

export interface CadenceOptions {
  /** The grid: due times are rounded up to a multiple of this. */
  gridMs: number;
  /** From this many keys queued (waiting or in flight), the grid applies. */
  busyKeys: number;
}

/**
 * Every 1.5 s, from 10 keys. Each step of a volume (protect, create, PV, record, attach) waits
 * at most a tick longer than asked, and each tick's batch serves tens of items with one
 * DescribeVolumes. Measured in a burst of 1,000 volumes (`npm run bench`): 0.15 describes a
 * volume and the first AttachVolume at 7.5 s; at 2 s, 0.13 and about 11 s.
 */
export const DEFAULT_CADENCE: CadenceOptions = { gridMs: 1_500, busyKeys: 10 };

/** Pure: `at`, or the first tick of the grid at or after it while the queue is busy. */
export function onCadence(at: number, queued: number, cadence: CadenceOptions | undefined): number {
  if (!cadence || cadence.gridMs <= 0 || queued < cadence.busyKeys) return at;
  return Math.ceil(at / cadence.gridMs) * cadence.gridMs;
}

export interface WorkQueueOptions {
  batchSize: number;
  maxInFlight: number;
  backoff?: BackoffOptions;
  /** None: every key is due exactly when asked. */
  cadence?: CadenceOptions;
  /** Milliseconds clock. */
  now?: () => number;
}

/** How one key's turn ended. */
export type Completion =
  /**
   * Converged: leaves the queue until the next event or resync; backoff reset. The volume
   * report's answer may say how soon the backend needs the next one (ReportTracker).
   */
  | { type: 'done'; reportWithinSeconds?: number }
  /** Progressing: look again after `afterMs`. */
  | { type: 'requeue'; afterMs: number }
  /** The backend refused the object (bad parameter…): backoff, or `afterMs` when it said so. */
  | { type: 'failed'; afterMs?: number }
  /** Could not get an answer or apply its writes: backoff. */
  | { type: 'error' }
  /** The object is gone or no longer ours: leaves the queue. */
  | { type: 'forget' };

export interface Batch<P> {
  readonly id: number;
  readonly keys: readonly string[];
  /** Payloads given with `add`, for keys whose object is not in any cache (deleted claims). */
  readonly payloads: ReadonlyMap<string, P>;
}

interface Entry<P> {
  payload: P | undefined;
  /** When the key is due. */
  notBefore: number;
  /** Failures since the last `done`. */
  failures: number;
  /** Waiting out the backoff after an `error` (events do not cut it short). */
  backingOff: boolean;
  inFlight: boolean;
  /** Offered again while in flight. */
  dirty: boolean;
  /** Bumped on every (re)schedule; heap nodes with an older version are stale. */
  version: number;
}

interface HeapNode {
  at: number;
  order: number;
  key: string;
  version: number;
}

/** Delay after the n-th consecutive failure (n ≥ 1). */
export function backoffDelay(failures: number, backoff: BackoffOptions = DEFAULT_BACKOFF): number {
  const exponent = Math.max(0, failures - 1);
  return Math.min(backoff.maxMs, backoff.initialMs * 2 ** Math.min(exponent, 40));
}

export class WorkQueue<P = unknown> {
  readonly #entries = new Map<string, Entry<P>>();
  readonly #heap: HeapNode[] = [];
  readonly #inFlight = new Map<number, Batch<P>>();
  #order = 0;
  #batchIds = 0;
  readonly batchSize: number;
  readonly maxInFlight: number;
  readonly backoff: BackoffOptions;
  readonly cadence: CadenceOptions | undefined;
  readonly now: () => number;

  constructor(options: WorkQueueOptions) {
    if (!(options.batchSize >= 1)) throw new RangeError('batchSize must be at least 1');
    if (!(options.maxInFlight >= 1)) throw new RangeError('maxInFlight must be at least 1');
    this.batchSize = options.batchSize;
    this.maxInFlight = options.maxInFlight;
    this.backoff = options.backoff ?? DEFAULT_BACKOFF;
    this.cadence = options.cadence;
    this.now = options.now ?? Date.now;
  }

  /** Keys queued, waiting or in flight. */
  get size(): number {
    return this.#entries.size;
  }

  /** Batches taken and not yet settled. */
  get inFlight(): number {
    return this.#inFlight.size;
  }

  has(key: string): boolean {
    return this.#entries.has(key);
  }

  /** Consecutive failures of `key` (0 when not queued). */
  failures(key: string): number {
    return this.#entries.get(key)?.failures ?? 0;
  }

  /** When `key` is due, if it is waiting. */
  dueAt(key: string): number | undefined {
    const entry = this.#entries.get(key);
    return entry && !entry.inFlight ? entry.notBefore : undefined;
  }

  /** Offers `key`: something about its object may have changed. */
  add(key: string, payload?: P): void {
    const now = this.now();
    const entry = this.#entries.get(key);
    if (!entry) {
      const at = onCadence(now, this.#entries.size + 1, this.cadence);
      this.#entries.set(key, { payload, notBefore: at, failures: 0, backingOff: false, inFlight: false, dirty: false, version: 0 });
      this.#push(key, at, 0);
      return;
    }
    if (payload !== undefined) entry.payload = payload;
    if (entry.inFlight) {
      entry.dirty = true;
    } else if (!entry.backingOff && entry.notBefore > onCadence(now, this.#entries.size, this.cadence)) {
      this.#schedule(key, entry, now);
    }
  }

  /**
   * The next batch of due keys, or undefined when none is due or `maxInFlight` batches are
   * out. The keys stay queued (in flight) until `settle`.
   */
  take(): Batch<P> | undefined {
    if (this.#inFlight.size >= this.maxInFlight) return undefined;
    const now = this.now();
    const keys: string[] = [];
    const payloads = new Map<string, P>();
    while (keys.length < this.batchSize && this.#heap.length > 0) {
      const top = this.#heap[0] as HeapNode;
      if (top.at > now) break;
      this.#pop();
      const entry = this.#entries.get(top.key);
      if (!entry || entry.inFlight || entry.version !== top.version) continue; // stale node
      entry.inFlight = true;
      keys.push(top.key);
      if (entry.payload !== undefined) payloads.set(top.key, entry.payload);
    }
    if (keys.length === 0) return undefined;
    const batch: Batch<P> = { id: ++this.#batchIds, keys, payloads };
    this.#inFlight.set(batch.id, batch);
    return batch;
  }

  /**
   * Ends a batch: each key is rescheduled or removed by its completion; a key without one
   * counts as an error (never silently dropped).
   */
  settle(batch: Batch<P>, completions: ReadonlyMap<string, Completion>): void {
    if (!this.#inFlight.delete(batch.id)) throw new Error(`batch ${batch.id} is not in flight`);
    const now = this.now();
    for (const key of batch.keys) {
      const entry = this.#entries.get(key);
      if (!entry) continue;
      entry.inFlight = false;
      const dirty = entry.dirty;
      entry.dirty = false;
      const completion = completions.get(key) ?? { type: 'error' };
      switch (completion.type) {
        case 'done':
        case 'forget':
          if (dirty) {
            entry.failures = 0;
            entry.backingOff = false;
            this.#schedule(key, entry, now);
          } else {
            this.#entries.delete(key);
          }
          break;
        case 'requeue':
          // An answer whose writes applied: the backend is reachable, the failures no longer consecutive.
          entry.failures = 0;
          entry.backingOff = false;
          this.#schedule(key, entry, dirty ? now : now + completion.afterMs);
          break;
        case 'failed':
        case 'error': {
          entry.failures += 1;
          entry.backingOff = completion.type === 'error';
          const delay =
            completion.type === 'failed' && completion.afterMs !== undefined
              ? completion.afterMs
              : backoffDelay(entry.failures, this.backoff);
          // Changed while in flight: a refusal may not hold for the new state, so look now.
          this.#schedule(key, entry, dirty && completion.type === 'failed' ? now : now + delay);
          break;
        }
      }
    }
  }

  /** The earliest time a waiting key is due (undefined when none waits). */
  nextDueAt(): number | undefined {
    while (this.#heap.length > 0) {
      const top = this.#heap[0] as HeapNode;
      const entry = this.#entries.get(top.key);
      if (entry && !entry.inFlight && entry.version === top.version) return top.at;
      this.#pop();
    }
    return undefined;
  }

  #schedule(key: string, entry: Entry<P>, asked: number): void {
    const at = onCadence(asked, this.#entries.size, this.cadence);
    entry.notBefore = at;
    entry.version += 1;
    this.#push(key, at, entry.version);
    // Rescheduling leaves stale nodes behind; rebuild when they outnumber live entries.
    if (this.#heap.length > 2 * this.#entries.size + 1024) this.#compact();
  }

  #compact(): void {
    const live = this.#heap.filter((node) => {
      const entry = this.#entries.get(node.key);
      return entry !== undefined && !entry.inFlight && entry.version === node.version;
    });
    this.#heap.length = 0;
    for (const node of live) this.#pushNode(node);
  }

  #push(key: string, at: number, version: number): void {
    this.#pushNode({ at, order: ++this.#order, key, version });
  }

  #pushNode(node: HeapNode): void {
    const heap = this.#heap;
    heap.push(node);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(heap[i] as HeapNode, heap[parent] as HeapNode)) break;
      [heap[i], heap[parent]] = [heap[parent] as HeapNode, heap[i] as HeapNode];
      i = parent;
    }
  }

  #pop(): void {
    const heap = this.#heap;
    const last = heap.pop();
    if (heap.length === 0 || !last) return;
    heap[0] = last;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let smallest = i;
      if (left < heap.length && before(heap[left] as HeapNode, heap[smallest] as HeapNode)) smallest = left;
      if (right < heap.length && before(heap[right] as HeapNode, heap[smallest] as HeapNode)) smallest = right;
      if (smallest === i) break;
      [heap[i], heap[smallest]] = [heap[smallest] as HeapNode, heap[i] as HeapNode];
      i = smallest;
    }
  }
}

function before(a: HeapNode, b: HeapNode): boolean {
  return a.at < b.at || (a.at === b.at && a.order < b.order);
}
