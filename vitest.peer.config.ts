import { defineConfig } from 'vitest/config';

/**
 * `npm run test:peer`: volhook beside the reference EBS CSI controller stack on the real
 * control plane (test/peer): the same claims provisioned by each, compared; and the hand-overs
 * between them both ways (handover-in, handover-out). Needs Go (the
 * plane from tools/kube, the stack from tools/ebs-csi); CI runs it after test:real-plane.
 * One file at a time: each starts control planes of its own.
 */
export default defineConfig({
  test: {
    include: ['test/peer/**/*.test.ts'],
    setupFiles: ['test/setup.ts'],
    pool: 'forks',
    maxWorkers: 1,
    fileParallelism: false,
    testTimeout: 240_000,
    hookTimeout: 1_500_000,
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
  },
});
