/** A seeded source of randomness: the same seed replays the same faults and latencies. */
export interface Random {
  /** Uniform in [0, 1). */
  next(): number;
}

/** mulberry32: tiny, fast, good enough for simulation. */
export function seededRandom(seed: number): Random {
  let a = seed >>> 0;
  return {
    next() {
      a = (a + 0x6d2b79f5) >>> 0;
      let t = a;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    },
  };
}

/** How long a simulated operation takes, in simulated milliseconds. */
export type LatencySpec =
  | { kind: 'fixed'; ms: number }
  | { kind: 'uniform'; minMs: number; maxMs: number }
  /** Lognormal: real cloud latencies have a long right tail. */
  | { kind: 'lognormal'; medianMs: number; p99Ms: number; maxMs?: number };

const Z99 = 2.3263478740408408;

/** Standard normal by Box–Muller. */
function normal(rng: Random): number {
  const u = 1 - rng.next();
  const v = rng.next();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
}

export function drawLatency(spec: LatencySpec, rng: Random): number {
  switch (spec.kind) {
    case 'fixed':
      return spec.ms;
    case 'uniform':
      return spec.minMs + (spec.maxMs - spec.minMs) * rng.next();
    case 'lognormal': {
      const mu = Math.log(spec.medianMs);
      const sigma = Math.log(spec.p99Ms / spec.medianMs) / Z99;
      const ms = Math.exp(mu + sigma * normal(rng));
      return Math.min(ms, spec.maxMs ?? spec.p99Ms * 4);
    }
  }
}
