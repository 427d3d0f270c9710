/** A local Kubernetes API server (lib/local/kube) on 127.0.0.1, with client-node clients for it. */
import type { KubeConfig } from '@kubernetes/client-node';
import { createObjectStore, startKubeApiServer, type KubeApiServer, type LocalObjectStore, type ObjectStoreOptions } from '../../lib/local/kube/index.js';
import { kubeClientsFromConfig, kubeConfigFor, type KubeClients } from '../../lib/kube/index.js';

export interface KubeHarness {
  store: LocalObjectStore;
  url: string;
  kubeConfig: KubeConfig;
  clients: KubeClients;
  /** Every request the server finished: `METHOD path?query STATUS`, and the User-Agent it came with. */
  requests: { method: string; url: string; status: number; userAgent?: string }[];
  /** Installs optional CRDs (the snapshot CRDs of a server started without them). */
  installCrds: KubeApiServer['installCrds'];
  close(): Promise<void>;
}

export async function startKube(options: { store?: ObjectStoreOptions; port?: number; snapshots?: boolean } = {}): Promise<KubeHarness> {
  const store = createObjectStore(options.store);
  const requests: KubeHarness['requests'] = [];
  const server = await startKubeApiServer({ store, port: options.port ?? 0, host: '127.0.0.1', onRequest: (line) => requests.push(line), ...(options.snapshots !== undefined && { snapshots: options.snapshots }) });
  const kubeConfig = kubeConfigFor({ server: server.url });
  let closed: Promise<void> | undefined;
  return { store, url: server.url, kubeConfig, clients: kubeClientsFromConfig(kubeConfig), requests, installCrds: (crds) => server.installCrds(crds), close: () => (closed ??= server.close()) };
}
