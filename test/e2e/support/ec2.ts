/** Reading the cluster's disks back from EC2, over the EC2 API (simulator or moto). */
import { DescribeVolumesCommand, type EC2Client, type Filter, type Volume } from '@aws-sdk/client-ec2';

/** The tags DESIGN.md requires on every volume volhook creates. */
export const TagKeys = {
  csiVolumeName: 'CSIVolumeName',
  ebsCluster: 'ebs.csi.aws.com/cluster',
  pvcName: 'kubernetes.io/created-for/pvc/name',
  pvcNamespace: 'kubernetes.io/created-for/pvc/namespace',
  pvName: 'kubernetes.io/created-for/pv/name',
  owner: (clusterId: string) => `kubernetes.io/cluster/${clusterId}`,
  volhookCluster: 'volhook.io/cluster',
} as const;

export async function describeVolumes(ec2: EC2Client, filters: Filter[] = [], volumeIds?: string[]): Promise<Volume[]> {
  const volumes: Volume[] = [];
  let token: string | undefined;
  do {
    const page = await ec2.send(
      new DescribeVolumesCommand({
        ...(filters.length > 0 ? { Filters: filters } : {}),
        ...(volumeIds ? { VolumeIds: volumeIds } : { MaxResults: 500 }),
        ...(token ? { NextToken: token } : {}),
      }),
    );
    volumes.push(...(page.Volumes ?? []));
    token = page.NextToken;
  } while (token);
  return volumes;
}

/** Every volume volhook provisioned (tagged `CSIVolumeName`) for `clusterId`, deleted ones excluded. */
export async function provisionedVolumes(ec2: EC2Client, clusterId: string): Promise<Volume[]> {
  const all = await describeVolumes(ec2, [
    { Name: 'tag-key', Values: [TagKeys.csiVolumeName] },
    { Name: `tag:${TagKeys.owner(clusterId)}`, Values: ['owned'] },
  ]);
  return all.filter((v) => v.State !== 'deleted');
}

/** One volume by ID, or undefined when EC2 no longer knows it (or reports it deleted). */
export async function volumeById(ec2: EC2Client, volumeId: string): Promise<Volume | undefined> {
  try {
    const [volume] = await describeVolumes(ec2, [], [volumeId]);
    return volume?.State === 'deleted' ? undefined : volume;
  } catch (err) {
    if ((err as { name?: string }).name === 'InvalidVolume.NotFound') return undefined;
    throw err;
  }
}

export function tagsOf(volume: Volume | undefined): Record<string, string> {
  return Object.fromEntries((volume?.Tags ?? []).map((t) => [t.Key ?? '', t.Value ?? '']));
}

/** A compact view of volumes for failure messages. */
export function volumesState(volumes: Volume[]): unknown {
  return volumes.map((v) => ({ id: v.VolumeId, state: v.State, zone: v.AvailabilityZone, name: tagsOf(v)[TagKeys.csiVolumeName] }));
}
