/**
 * A kubeconfig for one API server and one user, as `kubectl` and client-go read it: what the
 * local stack writes as `kubeconfig` in its local directory (either Kubernetes), and what the
 * control plane's own components are given. Pure.
 */
import { stringify } from 'yaml';

export interface KubeconfigInput {
  server: string;
  /** Bearer token; none for the simulated API, which authenticates nobody. */
  token?: string;
  /** Base64 PEM of the CA that signed the server's certificate. */
  caData?: string;
  /** A file holding that PEM instead (the control plane's components). */
  caFile?: string;
  user?: string;
}

export function kubeconfigText(input: KubeconfigInput): string {
  const cluster: Record<string, unknown> = { server: input.server };
  if (input.caData) cluster['certificate-authority-data'] = input.caData;
  else if (input.caFile) cluster['certificate-authority'] = input.caFile;
  const user = input.user ?? 'volhook-local';
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'volhook-local', cluster }],
    users: [{ name: user, user: input.token ? { token: input.token } : {} }],
    contexts: [{ name: 'volhook-local', context: { cluster: 'volhook-local', user } }],
    'current-context': 'volhook-local',
  });
}
