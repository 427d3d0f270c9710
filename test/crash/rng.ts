/**
 * A small seeded PRNG (mulberry32) with the helpers the explorer needs. Every random choice
 * of a run comes from one of these, so a seed replays the run.
 */
export class Rng {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    let t = (this.state = (this.state + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** Integer in [lo, hi], both included. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(values: readonly T[]): T {
    if (values.length === 0) throw new Error('pick from an empty list');
    return values[Math.floor(this.next() * values.length)] as T;
  }

  /** A weighted pick: `[[value, weight], …]`. */
  weighted<T>(choices: readonly (readonly [T, number])[]): T {
    const total = choices.reduce((sum, [, w]) => sum + w, 0);
    let x = this.next() * total;
    for (const [value, w] of choices) {
      if ((x -= w) < 0) return value;
    }
    return (choices[choices.length - 1] as readonly [T, number])[0];
  }

  /** An independent stream, so that one part's draws never shift another's. */
  fork(): Rng {
    return new Rng(Math.floor(this.next() * 4294967296));
  }
}
