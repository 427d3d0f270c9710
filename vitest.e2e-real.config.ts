import { defineConfig } from 'vitest/config';

/**
 * `npm run test:e2e:real`: the end-to-end scenarios of test/e2e on the real Kubernetes control
 * plane (VOLHOOK_E2E_PLANE=real, test/e2e/support/plane.ts), the same test code the default
 * run uses on the simulated API. Only the files listed here are converted; the others start
 * their stack with what the real plane refuses or do not exercise Kubernetes (docs/real-plane.md
 * lists them and why). One file at a time: each starts a control plane of its own.
 */
export const REAL_PLANE_E2E_FILES = [
  'test/e2e/provisioning.test.ts',
  'test/e2e/topology-and-sources.test.ts',
  'test/e2e/migration.test.ts',
  'test/e2e/resize.test.ts',
  'test/e2e/snapshots.test.ts',
  'test/e2e/chart.test.ts',
  'test/e2e/release.test.ts',
  'test/e2e/audit.test.ts',
  'test/e2e/group-snapshots.test.ts',
];

export default defineConfig({
  test: {
    include: REAL_PLANE_E2E_FILES,
    setupFiles: ['test/setup.ts'],
    pool: 'forks',
    maxWorkers: 1,
    fileParallelism: false,
    testTimeout: 240_000,
    hookTimeout: 600_000,
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', VOLHOOK_E2E_PLANE: 'real' },
  },
});
