/**
 * A read-only look into the AWS SDK's adaptive retry mode: its client-side rate limiter
 * (`DefaultRateLimiter` of @smithy/core) makes every call of a client wait for a token once
 * EC2 has throttled any one action. The backend used it until it stalled whole bursts (calls
 * waiting past the request deadline while EC2 sat idle); it now uses `standard`, so nothing
 * should show here — if something does, the progress lines and the report say how many calls
 * wait. Behaviour is unchanged: the wrapper only counts.
 */
import { createRequire } from 'node:module';

interface RateLimiter {
  enabled?: boolean;
  fillRate?: number;
  acquireTokenBucket(amount: number): Promise<void>;
}

export interface LimiterState {
  /** Calls waiting for a token now, over every adaptive client in the process. */
  waiting: number;
  /** The most seen waiting at once since the watch began. */
  maxWaiting: number;
  /** Tokens handed out while the limiter was on. */
  granted: number;
  /** The lowest fill rate (tokens/s) of the limiters that are on; undefined when none is. */
  fillRate?: number;
}

export interface LimiterWatch {
  state(): LimiterState;
  stop(): void;
}

type Prototype = { acquireTokenBucket(this: RateLimiter, amount: number): Promise<void> };

/** Starts counting; undefined when the SDK no longer has the limiter where it is looked for. */
export function watchSdkLimiter(): LimiterWatch | undefined {
  let proto: Prototype | undefined;
  try {
    const retry = createRequire(import.meta.url)('@smithy/core/retry') as { DefaultRateLimiter?: { prototype: Prototype } };
    proto = retry.DefaultRateLimiter?.prototype;
  } catch {
    return undefined;
  }
  if (!proto || typeof proto.acquireTokenBucket !== 'function') return undefined;
  const target = proto;
  const original = target.acquireTokenBucket;
  const limiters = new Set<RateLimiter>();
  let waiting = 0;
  let maxWaiting = 0;
  let granted = 0;
  target.acquireTokenBucket = async function (this: RateLimiter, amount: number) {
    limiters.add(this);
    if (!this.enabled) return original.call(this, amount);
    waiting++;
    maxWaiting = Math.max(maxWaiting, waiting);
    try {
      return await original.call(this, amount);
    } finally {
      waiting--;
      granted++;
    }
  };
  return {
    state() {
      const rates = [...limiters].filter((l) => l.enabled && typeof l.fillRate === 'number').map((l) => l.fillRate as number);
      return { waiting, maxWaiting, granted, fillRate: rates.length > 0 ? Math.min(...rates) : undefined };
    },
    stop() {
      target.acquireTokenBucket = original;
    },
  };
}
