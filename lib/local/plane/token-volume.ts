/**
 * The forwarder's ServiceAccount volume, as kubelet projects it into a pod: `token` (from the
 * TokenRequest API, replaced at 80 % of its lifetime, as kubelet does), `ca.crt` and
 * `namespace` in one directory. The forwarder reads it with its in-cluster code
 * (kube/access.ts `inClusterAccess`), the same as in a cluster.
 */
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { KubeRest } from '../../forwarder/kube/rest.js';

export interface TokenVolumeOptions {
  /** A client allowed to request tokens for the ServiceAccount (the administrator). */
  rest: KubeRest;
  namespace: string;
  serviceAccount: string;
  /** The PEM of the API server's CA. */
  caPem: string;
  dir: string;
  /** kubelet's default for projected tokens: one hour. */
  expirationSeconds?: number;
  /** Default 80 % of the lifetime. */
  rotateEveryMs?: number;
  onError?(err: unknown): void;
}

export interface TokenVolume {
  dir: string;
  /** The token in the volume now. */
  token(): string;
  /** Replaces the token now (what the timer does). */
  rotate(): Promise<void>;
  stop(): void;
}

async function writeAtomically(path: string, text: string): Promise<void> {
  await writeFile(`${path}.new`, text, { mode: 0o600 });
  await rename(`${path}.new`, path);
}

export async function startTokenVolume(options: TokenVolumeOptions): Promise<TokenVolume> {
  const expirationSeconds = options.expirationSeconds ?? 3600;
  await mkdir(options.dir, { recursive: true, mode: 0o700 });
  await writeAtomically(join(options.dir, 'ca.crt'), options.caPem);
  await writeAtomically(join(options.dir, 'namespace'), options.namespace);
  let current = '';
  const rotate = async () => {
    const answer = await options.rest.request<{ status: { token: string } }>('POST', `/api/v1/namespaces/${options.namespace}/serviceaccounts/${options.serviceAccount}/token`, {
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds } },
    });
    await writeAtomically(join(options.dir, 'token'), answer.status.token);
    current = answer.status.token;
  };
  await rotate();
  const timer = setInterval(() => void rotate().catch((err: unknown) => options.onError?.(err)), options.rotateEveryMs ?? expirationSeconds * 800);
  timer.unref();
  return { dir: options.dir, token: () => current, rotate, stop: () => clearInterval(timer) };
}
