/**
 * The local stack as the end-to-end tests run it: free ports on 127.0.0.1, a fast simulator,
 * a forwarder that retries and resyncs quickly, controllers that resync often.
 */
import { startLocalStack, type LocalStack, type LocalStackOptions } from '../../../lib/local/stack/index.js';
import { kubeClients, type E2eKube } from './kube.js';

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
