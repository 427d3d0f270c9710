/** The in-memory replay store: once per key until its expiry, expired entries swept away. */
import { describe, expect, it } from 'vitest';
import { createMemoryReplayStore, replayExpiry, replayKey, replayStoreFromEnvironment } from '../../lib/replay/index.js';

const T = 1_800_000_000;

describe('createMemoryReplayStore', () => {
  it('a key -> accepted once; again before or at its expiry -> refused; after it -> accepted again', async () => {
    const store = createMemoryReplayStore();
    expect(await store.recordOnce('c1#m1', T + 300, T)).toBe(true);
    expect(await store.recordOnce('c1#m1', T + 300, T + 1)).toBe(false);
    expect(await store.recordOnce('c1#m1', T + 300, T + 300)).toBe(false);
    expect(await store.recordOnce('c1#m1', T + 601, T + 301)).toBe(true);
    expect(await store.recordOnce('c1#m1', T + 601, T + 302)).toBe(false);
  });

  it('other keys -> independent, per cluster too', async () => {
    const store = createMemoryReplayStore();
    expect(await store.recordOnce(replayKey('c1', 'm'), T + 300, T)).toBe(true);
    expect(await store.recordOnce(replayKey('c2', 'm'), T + 300, T)).toBe(true);
    expect(await store.recordOnce(replayKey('c1', 'n'), T + 300, T)).toBe(true);
    expect(await store.recordOnce(replayKey('c1', 'm'), T + 300, T)).toBe(false);
  });

  it('memory is bounded: expired entries are swept, live ones kept', async () => {
    const store = createMemoryReplayStore({ sweepIntervalSeconds: 60 });
    for (let i = 0; i < 10_000; i++) await store.recordOnce(`c1#old-${i}`, replayExpiry(T), T);
    for (let i = 0; i < 10; i++) await store.recordOnce(`c1#live-${i}`, replayExpiry(T + 250), T + 250);
    expect(store.size()).toBe(10_010);

    // Past the old entries' expiry and the sweep interval: the next record sweeps them.
    await store.recordOnce('c1#new', replayExpiry(T + 400), T + 400);
    expect(store.size()).toBe(11);
    expect(await store.recordOnce('c1#live-3', replayExpiry(T + 250), T + 400)).toBe(false);
  });

  it('replayExpiry -> the last second the signed timestamp passes the ±5 min check', () => {
    expect(replayExpiry(T)).toBe(T + 300);
  });
});

describe('replayStoreFromEnvironment', () => {
  it('no VOLHOOK_REPLAY_TABLE (or an empty one) -> in memory', async () => {
    for (const env of [{}, { VOLHOOK_REPLAY_TABLE: '' }, { VOLHOOK_REPLAY_TABLE: '  ' }]) {
      const store = replayStoreFromEnvironment(env);
      expect(await store.recordOnce('k', T + 300, T)).toBe(true);
      expect(await store.recordOnce('k', T + 300, T)).toBe(false);
    }
  });
});
