import { describe, expect, it } from 'vitest';
import { backoffDelay, onCadence, WorkQueue, type Batch, type Completion } from '../../lib/forwarder/queue.js';

function fakeClock(start = 1_000_000) {
  const clock = { now: start, advance: (ms: number) => (clock.now += ms) };
  return clock;
}

function queue(options: { batchSize?: number; maxInFlight?: number } = {}) {
  const clock = fakeClock();
  const q = new WorkQueue<string>({ batchSize: options.batchSize ?? 10, maxInFlight: options.maxInFlight ?? 4, now: () => clock.now });
  return { q, clock };
}

const all = (batch: Batch<string>, completion: Completion) => new Map(batch.keys.map((k) => [k, completion]));

describe('WorkQueue', () => {
  it('one object updated many times before sending -> one key in one batch', () => {
    const { q } = queue();
    for (let i = 0; i < 5; i++) q.add('PersistentVolumeClaim/default/a');
    q.add('PersistentVolume/pvc-1');
    expect(q.size).toBe(2);
    expect(q.take()?.keys).toEqual(['PersistentVolumeClaim/default/a', 'PersistentVolume/pvc-1']);
    expect(q.take()).toBeUndefined();
  });

  it('250 keys, batch size 100 -> batches of 100, 100, 50 in arrival order', () => {
    const { q } = queue({ batchSize: 100 });
    for (let i = 0; i < 250; i++) q.add(`PersistentVolume/pv-${i}`);
    const sizes = [q.take(), q.take(), q.take(), q.take()].map((b) => b?.keys.length);
    expect(sizes).toEqual([100, 100, 50, undefined]);
  });

  it('maxInFlight batches out -> nothing more is taken until one settles', () => {
    const { q } = queue({ batchSize: 1, maxInFlight: 2 });
    for (let i = 0; i < 5; i++) q.add(`k/${i}`);
    const first = q.take()!;
    q.take();
    expect(q.take()).toBeUndefined();
    expect(q.inFlight).toBe(2);
    q.settle(first, all(first, { type: 'done' }));
    expect(q.take()?.keys).toEqual(['k/2']);
  });

  it('failures -> backoff 1 s, 2 s, 4 s … capped at 5 min; done resets it', () => {
    const { q, clock } = queue();
    const waits: number[] = [];
    q.add('k');
    for (let i = 0; i < 12; i++) {
      const batch = q.take()!;
      expect(batch.keys).toEqual(['k']);
      q.settle(batch, all(batch, { type: 'error' }));
      const wait = q.dueAt('k')! - clock.now;
      waits.push(wait);
      clock.advance(wait - 1);
      expect(q.take()).toBeUndefined(); // not a millisecond early
      clock.advance(1);
    }
    expect(waits).toEqual([1, 2, 4, 8, 16, 32, 64, 128, 256, 300, 300, 300].map((s) => s * 1000));
    const batch = q.take()!;
    q.settle(batch, all(batch, { type: 'done' }));
    expect(q.has('k')).toBe(false);
    q.add('k');
    const again = q.take()!;
    q.settle(again, all(again, { type: 'error' }));
    expect(q.dueAt('k')! - clock.now).toBe(1000);
  });

  it('errors, then a requeue answer, then an error -> backoff starts again at 1 s: only consecutive failures count', () => {
    const { q, clock } = queue();
    q.add('k');
    const settleNext = (completion: Completion) => {
      clock.advance(q.dueAt('k')! - clock.now);
      const batch = q.take()!;
      q.settle(batch, all(batch, completion));
      return q.dueAt('k')! - clock.now;
    };
    expect([settleNext({ type: 'error' }), settleNext({ type: 'error' }), settleNext({ type: 'error' })]).toEqual([1000, 2000, 4000]);
    expect(settleNext({ type: 'requeue', afterMs: 500 })).toBe(500);
    expect(q.failures('k')).toBe(0);
    expect(settleNext({ type: 'error' })).toBe(1000);
  });

  it('backoffDelay -> doubling from 1 s, never above 5 min', () => {
    expect([1, 2, 3, 9, 10, 100].map((n) => backoffDelay(n))).toEqual([1000, 2000, 4000, 256_000, 300_000, 300_000]);
  });

  it('requeue after 30 s -> not due before 30 s, due at 30 s; failures not counted', () => {
    const { q, clock } = queue();
    q.add('k');
    const batch = q.take()!;
    q.settle(batch, all(batch, { type: 'requeue', afterMs: 30_000 }));
    clock.advance(29_999);
    expect(q.take()).toBeUndefined();
    expect(q.nextDueAt()).toBe(clock.now + 1);
    clock.advance(1);
    expect(q.take()?.keys).toEqual(['k']);
    expect(q.failures('k')).toBe(0);
  });

  it('failed with requeueAfterSeconds -> waits exactly that; failed without -> exponential backoff', () => {
    const { q, clock } = queue();
    q.add('a');
    q.add('b');
    const batch = q.take()!;
    q.settle(batch, new Map<string, Completion>([['a', { type: 'failed', afterMs: 600_000 }], ['b', { type: 'failed' }]]));
    expect(q.dueAt('a')! - clock.now).toBe(600_000);
    expect(q.dueAt('b')! - clock.now).toBe(1_000);
    expect(q.failures('a')).toBe(1);
  });

  it('event during a requeue or failed wait -> due now; event during an error backoff -> still waits', () => {
    const { q, clock } = queue();
    q.add('requeued');
    q.add('refused');
    q.add('failing');
    const batch = q.take()!;
    q.settle(
      batch,
      new Map<string, Completion>([
        ['requeued', { type: 'requeue', afterMs: 60_000 }],
        ['refused', { type: 'failed', afterMs: 3_600_000 }],
        ['failing', { type: 'error' }],
      ]),
    );
    q.add('requeued');
    q.add('refused');
    q.add('failing');
    expect(q.take()?.keys).toEqual(['requeued', 'refused']);
    clock.advance(1_000);
    expect(q.take()?.keys).toEqual(['failing']);
  });

  it('event while the key is in flight -> sent again right after it settles, even when done', () => {
    const { q } = queue();
    q.add('k');
    const batch = q.take()!;
    q.add('k');
    expect(q.take()).toBeUndefined(); // never twice in flight
    q.settle(batch, all(batch, { type: 'done' }));
    expect(q.take()?.keys).toEqual(['k']);
  });

  it('changed while in flight, then failed -> due now; then error -> backoff still applies', () => {
    const { q, clock } = queue();
    q.add('k');
    let batch = q.take()!;
    q.add('k');
    q.settle(batch, all(batch, { type: 'failed', afterMs: 3_600_000 }));
    batch = q.take()!;
    expect(batch.keys).toEqual(['k']);
    q.add('k');
    q.settle(batch, all(batch, { type: 'error' }));
    expect(q.take()).toBeUndefined();
    expect(q.dueAt('k')! - clock.now).toBe(2_000); // second failure in a row
  });

  it('no completion for a key (lost result) -> treated as an error, key kept', () => {
    const { q, clock } = queue();
    q.add('k');
    const batch = q.take()!;
    q.settle(batch, new Map());
    expect(q.has('k')).toBe(true);
    expect(q.dueAt('k')! - clock.now).toBe(1_000);
  });

  it('forget -> the key leaves the queue; its payload travels with the batch', () => {
    const { q } = queue();
    q.add('PersistentVolumeClaimDeleted/u1', 'payload-1');
    const batch = q.take()!;
    expect(batch.payloads.get('PersistentVolumeClaimDeleted/u1')).toBe('payload-1');
    q.settle(batch, all(batch, { type: 'forget' }));
    expect(q.size).toBe(0);
  });

  it('backend down for hours with thousands of keys -> every key stays queued, none is dropped', () => {
    const { q, clock } = queue({ batchSize: 100, maxInFlight: 4 });
    for (let i = 0; i < 1000; i++) q.add(`k/${i}`);
    for (let step = 0; step < 2_000; step++) {
      for (let b = q.take(); b; b = q.take()) q.settle(b, all(b, { type: 'error' }));
      clock.advance(10_000);
    }
    expect(q.size).toBe(1000);
    expect(q.failures('k/0')).toBeGreaterThan(50);
    // and when it comes back, everything is delivered
    clock.advance(300_000);
    let delivered = 0;
    for (let b = q.take(); b; b = q.take()) {
      delivered += b.keys.length;
      q.settle(b, all(b, { type: 'done' }));
    }
    expect(delivered).toBe(1000);
    expect(q.size).toBe(0);
  });
});

describe('WorkQueue cadence', () => {
  const cadence = { gridMs: 2_000, busyKeys: 3 };
  function paced(start = 1_000_500) {
    const clock = fakeClock(start);
    const q = new WorkQueue<string>({ batchSize: 100, maxInFlight: 4, cadence, now: () => clock.now });
    return { q, clock };
  }

  it('onCadence: the first tick at or after the time once busy, the time itself while quiet', () => {
    expect(onCadence(10_500, 3, cadence)).toBe(12_000);
    expect(onCadence(12_000, 3, cadence)).toBe(12_000);
    expect(onCadence(10_500, 2, cadence)).toBe(10_500);
    expect(onCadence(10_500, 100, undefined)).toBe(10_500);
    expect(onCadence(10_500, 100, { gridMs: 0, busyKeys: 1 })).toBe(10_500);
  });

  it('a quiet queue sends at once: a single volume is not held up', () => {
    const { q } = paced();
    q.add('PersistentVolumeClaim/default/a');
    q.add('PersistentVolume/pvc-a');
    expect(q.take()?.keys).toEqual(['PersistentVolumeClaim/default/a', 'PersistentVolume/pvc-a']);
  });

  it('a busy queue: keys arriving one by one between two ticks go out together at the tick', () => {
    const { q, clock } = paced();
    for (const name of ['a', 'b']) q.add(`k/${name}`);
    expect(q.take()?.keys).toEqual(['k/a', 'k/b']);
    // From the third key on, the queue is busy: what arrives waits for the tick at 1,002,000.
    q.add('k/c');
    clock.advance(300);
    q.add('k/d');
    clock.advance(700);
    q.add('k/e');
    expect(q.take()).toBeUndefined();
    expect(q.nextDueAt()).toBe(1_002_000);
    clock.advance(500);
    expect(q.take()?.keys).toEqual(['k/c', 'k/d', 'k/e']);
  });

  it('a busy queue: requeues asked for different moments come back on one tick, never before their time', () => {
    const { q, clock } = paced();
    for (let i = 0; i < 4; i++) q.add(`k/${i}`);
    clock.advance(1_500); // the tick at 1,002,000
    const batch = q.take()!;
    expect(batch.keys).toHaveLength(4);
    q.settle(batch, new Map(batch.keys.map((k, i) => [k, { type: 'requeue', afterMs: 200 + 400 * i } satisfies Completion])));
    // Asked for 1,002,200 … 1,003,400: all due at the tick of 1,004,000.
    clock.advance(1_999);
    expect(q.take()).toBeUndefined();
    clock.advance(1);
    expect(q.take()?.keys).toHaveLength(4);
  });

  it('an event does not pull a waiting key ahead of the tick while the queue is busy', () => {
    const { q, clock } = paced();
    for (let i = 0; i < 3; i++) q.add(`k/${i}`);
    expect(q.dueAt('k/2')).toBe(1_002_000);
    clock.advance(100);
    q.add('k/2');
    expect(q.take()?.keys).toEqual(['k/0', 'k/1']);
    expect(q.dueAt('k/2')).toBe(1_002_000);
  });
});
