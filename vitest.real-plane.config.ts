import { defineConfig } from 'vitest/config';

/**
 * `npm run test:real-plane`: the files that run volhook against the real Kubernetes control
 * plane (etcd, kube-apiserver, kube-controller-manager, kube-scheduler built from tools/kube).
 * Not part of `npm test`, which needs no Go; CI runs it after `npm run kube:build`. One file at
 * a time: each starts a control plane of its own, four processes on two cores.
 */
export default defineConfig({
  test: {
    include: ['test/real-plane/**/*.test.ts'],
    setupFiles: ['test/setup.ts'],
    pool: 'forks',
    maxWorkers: 1,
    fileParallelism: false,
    testTimeout: 240_000,
    hookTimeout: 240_000,
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
  },
});
