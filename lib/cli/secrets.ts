/**
 * Webhook secrets and what a cluster needs to use one: `whsec_<base64 of 32 random bytes>`,
 * as Standard Webhooks writes them, and the forwarder's Kubernetes Secret.
 */
import { randomBytes } from 'node:crypto';

export const FORWARDER_SECRET = { namespace: 'volhook-system', name: 'volhook-forwarder', key: 'secret' } as const;

export function generateSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** `whsec_…Zx4=`: enough to tell secrets apart in output, not enough to use one. */
export function redactSecret(secret: string): string {
  return `${secret.startsWith('whsec_') ? 'whsec_' : ''}…${secret.slice(-4)}`;
}

/**
 * The Secret the forwarder mounts (`kubectl apply -f -`). The value is in `data` (base64), so
 * no YAML quoting can alter it.
 */
export function forwarderSecretManifest(clusterId: string, secret: string): string {
  return [
    `# volhook: signing secret of cluster "${clusterId}"; apply it in that cluster.`,
    'apiVersion: v1',
    'kind: Secret',
    'metadata:',
    `  name: ${FORWARDER_SECRET.name}`,
    `  namespace: ${FORWARDER_SECRET.namespace}`,
    '  labels:',
    '    app.kubernetes.io/name: volhook-forwarder',
    '    app.kubernetes.io/part-of: volhook',
    'type: Opaque',
    'data:',
    `  ${FORWARDER_SECRET.key}: ${Buffer.from(secret, 'utf8').toString('base64')}`,
    '',
  ].join('\n');
}
