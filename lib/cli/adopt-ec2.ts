/**
 * The EC2 calls of `cluster adopt`, made with the operator's credentials: look-ups through
 * the gateway (batched DescribeVolumes, 500 IDs a call, unknown IDs simply absent; the
 * cluster's disks and snapshots by its tag), and CreateTags — which the function's own role
 * may only do inside CreateVolume, so it is not a gateway verb but lives here, with the one
 * command that needs it.
 */
import { CreateTagsCommand, type EC2Client } from '@aws-sdk/client-ec2';
import { classifyEc2Error, type Disk, type Ec2Gateway } from '../ec2/index.js';

/**
 * Volumes (or snapshots) per CreateTags. EC2 takes up to 1,000 resource IDs and recommends smaller batches;
 * with 100 a refused batch costs at most 100 single retries.
 */
export const VOLUMES_PER_CREATE_TAGS = 100;

/** EC2's answer for every ID; undefined where it has no such volume. */
export async function describeDisks(gateway: Ec2Gateway, volumeIds: readonly string[]): Promise<Map<string, Disk | undefined>> {
  const disks = await Promise.all(volumeIds.map((id) => gateway.getDisk(id)));
  return new Map(volumeIds.map((id, n) => [id, disks[n]]));
}

export interface TagRequest {
  /** A volume or snapshot ID. */
  id: string;
  tags: Record<string, string>;
}

/**
 * Adds each request's tags to its volume or snapshot. Resources needing the same tags share a
 * CreateTags (`VOLUMES_PER_CREATE_TAGS` at most) — CSI-made disks mostly lack only the cluster
 * tags, volhook's own older ones only `volhook.io/cluster` — and a batch EC2 refuses is retried
 * one resource at a time, so one bad one (deleted since the look-up, at the 50-tag limit) fails
 * alone. Resolves to the error message of each resource that could not be tagged; `sent` hears
 * of each CreateTags made, with how many resources it tagged (0 when refused).
 */
export async function tagResources(client: EC2Client, requests: readonly TagRequest[], sent: (tagged: number) => void = () => {}): Promise<Map<string, string>> {
  const groups = new Map<string, TagRequest[]>();
  for (const request of requests) {
    const key = JSON.stringify(Object.entries(request.tags).sort(([a], [b]) => a.localeCompare(b)));
    groups.set(key, [...(groups.get(key) ?? []), request]);
  }
  const failures = new Map<string, string>();
  const send = async (ids: string[], tags: Record<string, string>) => {
    try {
      await client.send(new CreateTagsCommand({ Resources: ids, Tags: Object.entries(tags).map(([Key, Value]) => ({ Key, Value })) }));
      sent(ids.length);
    } catch (err) {
      sent(0);
      throw err;
    }
  };

  for (const group of groups.values()) {
    const tags = group[0]!.tags;
    for (let start = 0; start < group.length; start += VOLUMES_PER_CREATE_TAGS) {
      const ids = group.slice(start, start + VOLUMES_PER_CREATE_TAGS).map((r) => r.id);
      try {
        await send(ids, tags);
      } catch (batchError) {
        for (const id of ids) {
          try {
            if (ids.length > 1) await send([id], tags);
            else throw batchError;
          } catch (err) {
            const classified = classifyEc2Error(err, 'CreateTags');
            failures.set(id, `${classified.code}: ${classified.message}`);
          }
        }
      }
    }
  }
  return failures;
}
