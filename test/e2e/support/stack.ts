/**
 * The local stack as the end-to-end tests run it: free ports on 127.0.0.1, a fast simulator,
 * a forwarder that retries and resyncs quickly, controllers that resync often.
 */
import { startLocalStack, type LocalStack, type LocalStackOptions } from '../../../lib/local/stack/index.js';
import { createStorageClass, DRIVER, kubeClients, type E2eKube } from './kube.js';
import { resultLog, type ScenarioContext } from './scenarios.js';

export interface E2eStack extends LocalStack {
  kube: E2eKube;
}

/** Defaults for speed; `options` win, field by field for `ec2`, `forwarder` and `controllers`. */
export async function startE2eStack(options: LocalStackOptions = {}): Promise<E2eStack> {
  const { ec2, forwarder, controllers, ...rest } = options;
  const stack = await startLocalStack({
    ports: { backend: 0, ec2: 0, kube: 0 },
    ...rest,
    ...(options.ec2Endpoint ? {} : { ec2: { timeScale: 40, seed: 42, ...ec2 } }),
    forwarder:
      forwarder === false
        ? false
        : { backoffInitialMs: 100, backoffMaxMs: 2_000, resyncSeconds: 2, informerRestartMs: 200, ...forwarder },
    controllers: {
      resyncIntervalMs: 200,
      // Optimistic-concurrency conflicts are normal; anything else is worth seeing in the log.
      onError: (error, { controller, key }) => {
        if ((error as { reason?: string }).reason === 'Conflict' || /Conflict|conflict/.test(String(error))) return;
        console.warn(`[e2e ${controller}] sync ${key} failed:`, error);
      },
      ...controllers,
    },
  });
  return Object.assign(stack, { kube: kubeClients(stack.urls.kube) });
}

/** The class `immediateClass` adds: gp3, bound at once, for claims that need no pod. */
export const IMMEDIATE_CLASS = 'gp3-immediate';

export interface ScenarioStackOptions extends LocalStackOptions {
  /** Also create StorageClass {@link IMMEDIATE_CLASS}. */
  immediateClass?: boolean;
}

/**
 * One suite's stack (see {@link startE2eStack}) and the ScenarioContext over it, every result
 * of the backend collected in `ctx.results`:
 *
 * ```ts
 * beforeAll(async () => ({ stack, ctx } = await startScenarioStack({ immediateClass: true })), 60_000);
 * ```
 */
export async function startScenarioStack(options: ScenarioStackOptions = {}): Promise<{ stack: E2eStack; ctx: ScenarioContext }> {
  const { immediateClass, onResult, ...rest } = options;
  const log = resultLog();
  const stack = await startE2eStack({
    ...rest,
    onResult: (clusterId, item, result) => {
      log.onResult(clusterId, item, result);
      onResult?.(clusterId, item, result);
    },
  });
  const ctx: ScenarioContext = { kube: stack.kube, ec2: stack.ec2, clusterId: stack.clusterId, nodes: stack.nodes, results: log.results };
  try {
    if (immediateClass) {
      await createStorageClass(stack.kube, { metadata: { name: IMMEDIATE_CLASS }, provisioner: DRIVER, parameters: { type: 'gp3' }, volumeBindingMode: 'Immediate' });
    }
  } catch (err) {
    await stack.stop();
    throw err;
  }
  return { stack, ctx };
}
