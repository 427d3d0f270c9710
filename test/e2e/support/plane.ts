/**
 * Which Kubernetes the end-to-end suite runs against: the simulated API with its controllers
 * (lib/local/kube, lib/local/controllers; the default, no Go needed) or the real control plane
 * (lib/local/plane: etcd, kube-apiserver, kube-controller-manager, kube-scheduler built from
 * tools/kube, node agents), chosen by `VOLHOOK_E2E_PLANE=real`. The same test code runs on
 * both; where a scenario needs one plane's own hook, it says so with {@link onPlane}.
 */
import { KubeConfig } from '@kubernetes/client-node';
import { kubeConfigFor } from '../../../lib/kube/index.js';

export type PlaneName = 'simulated' | 'real';

export const PLANE_VARIABLE = 'VOLHOOK_E2E_PLANE';

/** The plane `env` selects; a value that names neither is refused, named. */
export function selectedPlane(env: Record<string, string | undefined> = process.env): PlaneName {
  const value = env[PLANE_VARIABLE];
  if (value === undefined || value === '' || value === 'simulated') return 'simulated';
  if (value === 'real') return 'real';
  throw new Error(`${PLANE_VARIABLE}=${value}: not a plane; use "real" (the control plane built from tools/kube) or "simulated" (the default)`);
}

export const PLANE: PlaneName = selectedPlane();

/**
 * A plane-specific part of a scenario, said explicitly: `onPlane({ simulated: …, real: … })`
 * picks the value (or runs the function) of the plane this run is on.
 */
export function onPlane<T>(choices: Record<PlaneName, T>, plane: PlaneName = PLANE): T {
  return choices[plane];
}

/** How long a suite's `beforeAll` may take to start its stack: the real plane starts four processes and node agents, and may build first. */
export const STACK_START_MS = onPlane({ simulated: 60_000, real: 600_000 });

/** A client-node KubeConfig of a stack's kubeconfig text: the administrator on the real plane (token, CA). */
export function kubeConfigOf(stack: { kubeconfig: string; urls: { kube: string } }, plane: PlaneName = PLANE): KubeConfig {
  if (plane === 'simulated') return kubeConfigFor({ server: stack.urls.kube });
  const kc = new KubeConfig();
  kc.loadFromString(stack.kubeconfig);
  return kc;
}
