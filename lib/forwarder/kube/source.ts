/**
 * Where bin/forwarder.ts finds its API server, in client-node's `loadFromDefault` order:
 * `VOLHOOK_KUBE_SERVER` first (the local stack), then a kubeconfig file (`KUBECONFIG`, else
 * `~/.kube/config`), then the pod's ServiceAccount. A kubeconfig file is read by client-node,
 * imported only then (`npm run`/tsx out of the cluster: every auth method of a kubeconfig keeps
 * working, exec plugins, client certificates); the image's bundle does not include it, so
 * there a kubeconfig file is refused with a message saying so. Nothing found is refused, not
 * defaulted to localhost as client-node would.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { accessFromKubeConfig, inClusterAccess, serverAccess, SERVICE_ACCOUNT_DIR, type KubeAccess } from './access.js';

export type KubeSource = { kind: 'server'; server: string } | { kind: 'kubeconfig' } | { kind: 'in-cluster' };

/** Which of the sources applies; undefined when none does. */
export function kubeSource(options: { kubeServer?: string; env: NodeJS.ProcessEnv; exists: (path: string) => boolean; serviceAccountDir?: string }): KubeSource | undefined {
  const { env, exists } = options;
  if (options.kubeServer) return { kind: 'server', server: options.kubeServer };
  if (env.KUBECONFIG) return { kind: 'kubeconfig' };
  if (env.HOME && exists(join(env.HOME, '.kube', 'config'))) return { kind: 'kubeconfig' };
  if (exists(join(options.serviceAccountDir ?? SERVICE_ACCOUNT_DIR, 'token'))) return { kind: 'in-cluster' };
  return undefined;
}

export async function kubeAccessFor(kubeServer: string | undefined, env: NodeJS.ProcessEnv = process.env): Promise<KubeAccess> {
  const source = kubeSource({ kubeServer, env, exists: existsSync });
  switch (source?.kind) {
    case 'server':
      return serverAccess(source.server);
    case 'in-cluster':
      return inClusterAccess({ env });
    case 'kubeconfig': {
      const { KubeConfig } = await import('@kubernetes/client-node').catch((err: unknown) => {
        // The image's bundle leaves client-node out (infra/forwarder/bundle.ts).
        throw new Error(
          `a kubeconfig file (KUBECONFIG or ~/.kube/config) is read with @kubernetes/client-node, which this build does not include: run in a pod (its ServiceAccount) or set VOLHOOK_KUBE_SERVER (${err instanceof Error ? err.message : String(err)})`,
        );
      });
      const kubeConfig = new KubeConfig();
      kubeConfig.loadFromDefault();
      return accessFromKubeConfig(kubeConfig);
    }
    case undefined:
      throw new Error(
        `no Kubernetes API server: set VOLHOOK_KUBE_SERVER or KUBECONFIG, or run in a pod (no ${SERVICE_ACCOUNT_DIR}/token)`,
      );
  }
}
