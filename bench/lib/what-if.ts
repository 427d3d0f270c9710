/**
 * Diagnostic what-ifs: changes to the running process that volhook as shipped does not have,
 * to measure what a suspected bottleneck costs. Every run that uses one says so loudly; its
 * figures are not volhook's.
 */
import { createRequire } from 'node:module';

export const WHAT_IFS = ['no-sdk-limiter'] as const;
export type WhatIf = (typeof WHAT_IFS)[number];

export const WHAT_IF_NOTE: Record<WhatIf, string> = {
  'no-sdk-limiter':
    "WHAT-IF no-sdk-limiter: the AWS SDK's adaptive client-side rate limiter (DefaultRateLimiter.acquireTokenBucket) " +
    'is patched to never wait, as retryMode "standard" would behave; retries and back-off are unchanged. NOT volhook as shipped.',
};

interface RateLimiterPrototype {
  acquireTokenBucket(amount: number): Promise<void>;
}

/** Applies the what-if to this process (for the in-process backend); returns the undo. */
export function applyWhatIf(whatIf: WhatIf): () => void {
  switch (whatIf) {
    case 'no-sdk-limiter': {
      // The SDK's client-node build requires @smithy/core/retry; the same module instance is patched.
      const retry = createRequire(import.meta.url)('@smithy/core/retry') as { DefaultRateLimiter?: { prototype: RateLimiterPrototype } };
      const proto = retry.DefaultRateLimiter?.prototype;
      if (!proto || typeof proto.acquireTokenBucket !== 'function') {
        throw new Error('what-if no-sdk-limiter: @smithy/core/retry has no DefaultRateLimiter.acquireTokenBucket (SDK changed?)');
      }
      const original = proto.acquireTokenBucket;
      proto.acquireTokenBucket = async () => undefined;
      return () => {
        proto.acquireTokenBucket = original;
      };
    }
  }
}
