import { createHash } from 'node:crypto';

/**
 * The CreateVolume ClientToken for a volume: hex SHA-256 of `<clusterId>/<name>`, 64
 * characters (EC2's limit). The same cluster and name always give the same token, so a
 * retried create can never make a second disk, and two clusters never share one.
 *
 * EC2 keeps a token bound to its volume for hours, also after the volume failed and was
 * deleted: a retry with the same token only gets the dead volume back. The replacement is
 * created under the next generation, `<clusterId>/<name>/after/<failed volume ID>` — derived
 * from what EC2 shows, so every retry of the replacement uses the same token again.
 */
export function clientTokenFor(clusterId: string, name: string, afterVolumeId?: string): string {
  const input = afterVolumeId === undefined ? `${clusterId}/${name}` : `${clusterId}/${name}/after/${afterVolumeId}`;
  return createHash('sha256').update(input).digest('hex');
}
