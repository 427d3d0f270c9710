/**
 * Where the forwarder's API server is and how a request to it authenticates, without
 * client-node: importing `@kubernetes/client-node` costs the process 25–33 MiB resident
 * (every auth provider, its generated models, its fetch implementation), a quarter of the
 * forwarder's memory budget, for the handful of verbs the forwarder uses (bench scenario c).
 *
 * - in the cluster: the ServiceAccount's token and CA, as client-go's `InClusterConfig`; the
 *   token file is read again once a minute (bound tokens rotate), as client-go's cached
 *   file token source does;
 * - a client-node `KubeConfig` handed in (tests, the local stack, a kubeconfig file loaded by
 *   bin/forwarder.ts out of the cluster): its own `applyToHTTPSOptions` supplies the TLS
 *   material and credentials of each request, so every auth method it knows keeps working.
 */
import { readFile } from 'node:fs/promises';
import type { RequestOptions } from 'node:https';

/** TLS material (servername: a kubeconfig's tls-server-name) and headers of one request. */
export type AccessOptions = Pick<RequestOptions, 'ca' | 'cert' | 'key' | 'rejectUnauthorized' | 'servername'> & { headers: Record<string, string> };

export interface KubeAccess {
  /** The API server's base URL, no trailing slash: `https://10.96.0.1:443`. */
  readonly server: string;
  /** What one request carries; may read a rotated token. */
  requestOptions(): Promise<AccessOptions>;
}

/** What is used of client-node's `KubeConfig` (structurally, so nothing of it is loaded here). */
export interface KubeConfigLike {
  getCurrentCluster(): { server: string } | null;
  applyToHTTPSOptions(options: RequestOptions): Promise<void>;
}

export function accessFromKubeConfig(kubeConfig: KubeConfigLike): KubeAccess {
  const cluster = kubeConfig.getCurrentCluster();
  if (!cluster) throw new Error('the kubeconfig names no current cluster');
  return {
    server: cluster.server.replace(/\/+$/, ''),
    async requestOptions() {
      const options: RequestOptions = {};
      await kubeConfig.applyToHTTPSOptions(options);
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(options.headers ?? {})) {
        if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : String(value);
      }
      if (options.auth) headers.Authorization = `Basic ${Buffer.from(options.auth).toString('base64')}`;
      // Its `agent` is dropped: requests go through one keep-alive agent of ours (rest.ts).
      const { rejectUnauthorized, servername } = options;
      return {
        headers,
        ...(options.ca !== undefined ? { ca: options.ca } : {}),
        ...(options.cert !== undefined ? { cert: options.cert } : {}),
        ...(options.key !== undefined ? { key: options.key } : {}),
        ...(rejectUnauthorized !== undefined ? { rejectUnauthorized } : {}),
        ...(servername ? { servername } : {}),
      };
    },
  };
}

/** The ServiceAccount's files, as the kubelet mounts them. */
export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';
/** How long a token read from its file is used before reading it again (client-go: 1 minute). */
export const TOKEN_REREAD_MS = 60_000;

export interface InClusterOptions {
  env?: NodeJS.ProcessEnv;
  dir?: string;
  now?: () => number;
}

/** Running in a pod: `KUBERNETES_SERVICE_HOST` and `KUBERNETES_SERVICE_PORT` are set. */
export function inCluster(env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(env.KUBERNETES_SERVICE_HOST && env.KUBERNETES_SERVICE_PORT);
}

/** client-go's `InClusterConfig`: the service's host and port, the mounted token and CA. */
export async function inClusterAccess(options: InClusterOptions = {}): Promise<KubeAccess> {
  const env = options.env ?? process.env;
  const dir = options.dir ?? SERVICE_ACCOUNT_DIR;
  const now = options.now ?? Date.now;
  const host = env.KUBERNETES_SERVICE_HOST;
  const port = env.KUBERNETES_SERVICE_PORT;
  if (!host || !port) throw new Error('not in a cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be set');
  const ca = await readFile(`${dir}/ca.crt`);
  let token = (await readFile(`${dir}/token`, 'utf8')).trim();
  let readAt = now();
  return {
    server: `https://${host.includes(':') ? `[${host}]` : host}:${port}`,
    async requestOptions() {
      if (now() - readAt >= TOKEN_REREAD_MS) {
        // A failed re-read keeps the token we have, as client-go's cached source does.
        token = (await readFile(`${dir}/token`, 'utf8').catch(() => token)).trim();
        readAt = now();
      }
      return { headers: { Authorization: `Bearer ${token}` }, ca };
    },
  };
}

/**
 * An API server named by URL, with no credentials (`VOLHOOK_KUBE_SERVER`: the local stack, or
 * `kubectl proxy`); an https one is not verified, as `kubeConfigFor({ skipTLSVerify: true })`
 * had it before.
 */
export function serverAccess(server: string): KubeAccess {
  const url = new URL(server);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`VOLHOOK_KUBE_SERVER must be an http:// or https:// URL; got ${url.protocol}`);
  const options: AccessOptions = url.protocol === 'https:' ? { headers: {}, rejectUnauthorized: false } : { headers: {} };
  return { server: server.replace(/\/+$/, ''), requestOptions: async () => options };
}
