/** Building client-node clients, in the cluster (ServiceAccount) or from a server URL. */
import { CoreV1Api, CustomObjectsApi, KubeConfig, StorageV1Api } from '@kubernetes/client-node';

/** The API groups every write in the contract goes through; `custom` for `snapshot.storage.k8s.io`. */
export interface KubeClients {
  core: CoreV1Api;
  storage: StorageV1Api;
  custom: CustomObjectsApi;
}

export function kubeClientsFromConfig(kc: KubeConfig): KubeClients {
  return { core: kc.makeApiClient(CoreV1Api), storage: kc.makeApiClient(StorageV1Api), custom: kc.makeApiClient(CustomObjectsApi) };
}

export interface KubeServerOptions {
  /** `https://…` (or `http://…` for the local stack). */
  server: string;
  /** Bearer token (a ServiceAccount token for `writeBack: direct`). */
  token?: string;
  /** Base64 PEM of the cluster CA. */
  caData?: string;
  skipTLSVerify?: boolean;
}

/**
 * A KubeConfig for one API server — what the backend uses for `writeBack: direct`, and the
 * forwarder for `VOLHOOK_KUBE_SERVER`. A plain `http://` server gets `skipTLSVerify`, which
 * client-node needs to accept a non-TLS URL at all.
 */
export function kubeConfigFor(options: KubeServerOptions): KubeConfig {
  const kc = new KubeConfig();
  const plainHttp = options.server.startsWith('http://');
  kc.loadFromOptions({
    clusters: [
      {
        name: 'volhook',
        server: options.server.replace(/\/+$/, ''),
        skipTLSVerify: plainHttp || (options.skipTLSVerify ?? false),
        ...(options.caData ? { caData: options.caData } : {}),
      },
    ],
    users: [{ name: 'volhook', ...(options.token ? { token: options.token } : {}) }],
    contexts: [{ name: 'volhook', cluster: 'volhook', user: 'volhook' }],
    currentContext: 'volhook',
  });
  return kc;
}
