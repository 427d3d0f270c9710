import { availableParallelism } from 'node:os';
import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Against the real control plane, built with Go: `npm run test:real-plane` (vitest.real-plane.config.ts).
    exclude: [...configDefaults.exclude, 'test/real-plane/**', 'test/peer/**'],
    setupFiles: ['test/setup.ts'],
    pool: 'forks',
    // At least two files at once, also on 2 cores (vitest's default there is one): most of the
    // suite's time is end-to-end files waiting on the simulated AWS latencies, not using a core.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    testTimeout: 30_000,
    hookTimeout: 60_000,
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
  },
});
