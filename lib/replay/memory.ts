/**
 * Seen webhook ids in one process's memory (the local stack, tests). Memory stays bounded:
 * expired entries are swept at most once per `sweepIntervalSeconds`, so the map never holds
 * more than the ids of the last window plus one interval.
 */
import type { ReplayStore } from './store.js';

export interface MemoryReplayStore extends ReplayStore {
  /** Entries held now, swept or not. */
  size(): number;
}

export function createMemoryReplayStore(options: { sweepIntervalSeconds?: number } = {}): MemoryReplayStore {
  const sweepInterval = options.sweepIntervalSeconds ?? 60;
  const expiries = new Map<string, number>();
  let nextSweep = -Infinity;

  return {
    async recordOnce(key, expiresAt, now) {
      if (now >= nextSweep) {
        for (const [k, expiry] of expiries) if (expiry < now) expiries.delete(k);
        nextSweep = now + sweepInterval;
      }
      const expiry = expiries.get(key);
      if (expiry !== undefined && expiry >= now) return false;
      expiries.set(key, expiresAt);
      return true;
    },
    size: () => expiries.size,
  };
}
