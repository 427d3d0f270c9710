/**
 * Launches one EC2 instance per local node, through the EC2 API (the simulator or any other
 * endpoint, e.g. moto), tagged as this cluster's so volhook's ownership checks accept it, and
 * learns each zone's ID for the node's `topology.k8s.aws/zone-id` label; then waits for them to
 * be `running`, as a node joins a cluster only once its instance runs: an attach to a `pending`
 * instance is `IncorrectState`.
 */
import { DescribeAvailabilityZonesCommand, DescribeImagesCommand, DescribeInstancesCommand, RunInstancesCommand, type EC2Client } from '@aws-sdk/client-ec2';
import { DEFAULT_NODE_TAG_KEY, TagKeys } from '../../contract/tags.js';
import type { LocalNode } from './cluster-objects.js';

const DEFAULT_IMAGE = 'ami-0abcdef1234567890';

/** Zone name to zone ID, as this EC2 maps them; empty if it cannot say. */
async function zoneIds(ec2: EC2Client): Promise<Map<string, string>> {
  try {
    const { AvailabilityZones } = await ec2.send(new DescribeAvailabilityZonesCommand({}));
    return new Map((AvailabilityZones ?? []).flatMap((z) => (z.ZoneName && z.ZoneId ? [[z.ZoneName, z.ZoneId] as const] : [])));
  } catch {
    return new Map();
  }
}

async function imageId(ec2: EC2Client): Promise<string> {
  // moto only launches images it knows; the simulator accepts any ID.
  try {
    const { Images } = await ec2.send(new DescribeImagesCommand({ Owners: ['amazon'], MaxResults: 5 }));
    return Images?.[0]?.ImageId ?? DEFAULT_IMAGE;
  } catch {
    return DEFAULT_IMAGE;
  }
}

export async function launchNodeInstances(
  ec2: EC2Client,
  clusterId: string,
  zones: string[],
  nodesPerZone = 1,
): Promise<LocalNode[]> {
  const [image, ids] = await Promise.all([imageId(ec2), zoneIds(ec2)]);
  const slots = zones.flatMap((zone, z) => Array.from({ length: nodesPerZone }, (_, k) => ({ zone, z, k })));
  return Promise.all(
    slots.map(async ({ zone, z, k }) => {
      const name = `ip-10-0-${z + 1}-${10 + k}.ec2.internal`;
      const { Instances } = await ec2.send(
        new RunInstancesCommand({
          ImageId: image,
          InstanceType: 'm6i.large',
          MinCount: 1,
          MaxCount: 1,
          Placement: { AvailabilityZone: zone },
          TagSpecifications: [
            {
              ResourceType: 'instance',
              Tags: [
                { Key: 'Name', Value: name },
                { Key: TagKeys.cluster(clusterId), Value: 'owned' },
                { Key: DEFAULT_NODE_TAG_KEY, Value: clusterId },
              ],
            },
          ],
        }),
      );
      const instanceId = Instances?.[0]?.InstanceId;
      if (!instanceId) throw new Error(`RunInstances in ${zone} returned no instance`);
      const zoneId = ids.get(zone);
      return { name, zone, ...(zoneId !== undefined && { zoneId }), instanceId };
    }),
  );
}

/** What waiting for the nodes' instances decides from their states: done, wait, or give up. */
export type InstancesVerdict = { kind: 'running' } | { kind: 'wait'; waitingFor: string[] } | { kind: 'failed'; message: string };

/**
 * `states` maps each instance ID to its EC2 state (absent: not yet described). Running when
 * all run; failed when one went a way that never leads to `running`.
 */
export function instancesVerdict(ids: readonly string[], states: ReadonlyMap<string, string>): InstancesVerdict {
  const gone = ids.filter((id) => ['shutting-down', 'terminated', 'stopping', 'stopped'].includes(states.get(id) ?? ''));
  if (gone.length > 0) return { kind: 'failed', message: `node instances will not run: ${gone.map((id) => `${id} is ${states.get(id)}`).join(', ')}` };
  const waitingFor = ids.filter((id) => states.get(id) !== 'running');
  return waitingFor.length === 0 ? { kind: 'running' } : { kind: 'wait', waitingFor };
}

/** Polls DescribeInstances until every one of `ids` is `running`; rejects past `timeoutMs`. */
export async function waitForInstancesRunning(
  ec2: EC2Client,
  ids: readonly string[],
  options: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<void> {
  const timeoutMs = options.timeoutMs ?? 120_000;
  const intervalMs = options.intervalMs ?? 200;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { Reservations } = await ec2.send(new DescribeInstancesCommand({ InstanceIds: [...ids] }));
    const states = new Map(
      (Reservations ?? []).flatMap((r) => r.Instances ?? []).flatMap((i) => (i.InstanceId && i.State?.Name ? [[i.InstanceId, i.State.Name] as const] : [])),
    );
    const verdict = instancesVerdict(ids, states);
    if (verdict.kind === 'running') return;
    if (verdict.kind === 'failed') throw new Error(verdict.message);
    if (Date.now() >= deadline) throw new Error(`node instances not running after ${timeoutMs / 1000} s: ${verdict.waitingFor.join(', ')}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
