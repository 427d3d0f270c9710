/**
 * The local stack as the end-to-end tests run it: free ports on 127.0.0.1, a fast simulator,
 * a forwarder that retries and resyncs quickly, and Kubernetes as the plane fixture says
 * (plane.ts): the simulated API with controllers that resync often, or the real control plane.
 */
import type { LocalObjectStore } from '../../../lib/local/kube/index.js';
import type { RealKube } from '../../../lib/local/plane/real-kube.js';
import { startLocalStack, type LocalStack, type LocalStackOptions } from '../../../lib/local/stack/index.js';
import { e2eRealPlaneInputs } from './real-plane.js';
import { createStorageClass, DRIVER, kubeClientsOf, operatorKubeconfig, type E2eKube } from './kube.js';
import { kubeConfigOf, PLANE, type PlaneName } from './plane.js';
import { resultLog, type ScenarioContext } from './scenarios.js';

export interface E2eStack extends Omit<LocalStack, 'store'> {
  /** Which Kubernetes this is (plane.ts). */
  plane: PlaneName;
  kube: E2eKube;
  /** The simulated API's object store; none on the real plane. */
  store?: LocalObjectStore;
  /** The real control plane's processes and node agents; none on the simulated plane. */
  real?: RealKube;
  /** A kubeconfig an operator's CLI (adopt, release) is given: a token on the simulated API, the administrator's on the real plane. */
  operatorKubeconfig: string;
}

/** The simulated API's store, for a scenario that reads or drives it directly: refused, saying so, on the real plane. */
export function simulatedStore(stack: E2eStack, scenario: string): LocalObjectStore {
  if (!stack.store) throw new Error(`${scenario} runs on the simulated API only (it reads its object store); this stack is the ${stack.plane} plane`);
  return stack.store;
}

/**
 * Defaults for speed; `options` win, field by field for `ec2`, `forwarder` and `controllers`.
 * On the real plane `controllers` (the simulated API's) is refused, named, as are the
 * options the real plane does not implement (lib/local/stack refuses `writeBack: 'direct'`).
 */
export async function startE2eStack(options: LocalStackOptions = {}, plane: PlaneName = PLANE): Promise<E2eStack> {
  const { ec2, forwarder, controllers, ...rest } = options;
  const common = {
    ports: { backend: 0, ec2: 0, kube: 0 },
    ...rest,
    ...(options.ec2Endpoint ? {} : { ec2: { timeScale: 40, seed: 42, ...ec2 } }),
    forwarder:
      forwarder === false
        ? (false as const)
        : { backoffInitialMs: 100, backoffMaxMs: 2_000, resyncSeconds: 2, informerRestartMs: 200, ...forwarder },
  };
  if (plane === 'real') {
    if (controllers) throw new Error(`controllers (${Object.keys(controllers).join(', ')}): options of the simulated API's controllers; the real plane runs kube-controller-manager's own`);
    const inputs = await e2eRealPlaneInputs();
    const stack = await startLocalStack({ ...common, kube: inputs });
    const kube = kubeClientsOf(kubeConfigOf(stack, 'real'), { podsWaitForServiceAccount: true });
    return Object.assign(stack, { plane, kube, operatorKubeconfig: stack.kubeconfig });
  }
  const stack = await startLocalStack({
    ...common,
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
  return Object.assign(stack, { plane, kube: kubeClientsOf(kubeConfigOf(stack, 'simulated')), operatorKubeconfig: operatorKubeconfig(stack.urls.kube) });
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
