import { createHash } from 'node:crypto';

/**
 * The CreateVolume ClientToken for a volume: hex SHA-256 of `<clusterId>/<name>`, 64
 * characters (EC2's limit). The same cluster and name always give the same token, so a
 * retried create can never make a second disk, and two clusters never share one.
 */
export function clientTokenFor(clusterId: string, name: string): string {
  return createHash('sha256').update(`${clusterId}/${name}`).digest('hex');
}
