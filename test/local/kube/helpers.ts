import { KubeConfig } from '@kubernetes/client-node';
import { createObjectStore, KubeApiError, startKubeApiServer, type KubeApiServer, type LocalObjectStore, type ObjectStoreOptions } from '../../../lib/local/kube/index.js';
import type { KubeApiServerOptions } from '../../../lib/local/kube/index.js';

export interface Harness {
  store: LocalObjectStore;
  server: KubeApiServer;
  kc: KubeConfig;
}

/** A store and its server on an ephemeral loopback port, with a KubeConfig pointing at it. */
export async function startHarness(
  storeOptions: ObjectStoreOptions = {},
  serverOptions: Omit<KubeApiServerOptions, 'store'> = {},
): Promise<Harness> {
  const store = createObjectStore(storeOptions);
  const server = await startKubeApiServer({ store, port: 0, host: '127.0.0.1', ...serverOptions });
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'local', server: server.url, skipTLSVerify: true }],
    users: [{ name: 'local' }],
    contexts: [{ name: 'local', cluster: 'local', user: 'local', namespace: 'default' }],
    currentContext: 'local',
  });
  return { store, server, kc };
}

export function pvc(name: string, extra: { labels?: Record<string, string>; finalizers?: string[]; storage?: string } = {}) {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name, namespace: 'default', labels: extra.labels, finalizers: extra.finalizers },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: extra.storage ?? '1Gi' } }, storageClassName: 'gp3' },
  };
}

/** The HTTP status of a failed client-node call (ApiException.code) and the Status body. */
export async function failure(promise: Promise<unknown>): Promise<{ code: number; reason: string; message: string }> {
  try {
    await promise;
  } catch (err) {
    const e = err as { code?: number; body?: unknown };
    const body = (typeof e.body === 'string' ? JSON.parse(e.body) : e.body) as { reason: string; message: string };
    return { code: e.code ?? 0, reason: body.reason, message: body.message };
  }
  throw new Error('expected the call to fail');
}

/** The KubeApiError a synchronous handler or store call throws; throws itself if it does not refuse. */
export function refusalOf(fn: () => unknown): KubeApiError {
  try {
    fn();
  } catch (err) {
    if (err instanceof KubeApiError) return err;
    throw err;
  }
  throw new Error('expected a refusal');
}
