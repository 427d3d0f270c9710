/**
 * CreateSnapshots under the EC2 role (infra/iam/ec2-role-statements.yml): a cluster's session
 * may snapshot its own volumes attached to its own node, tagged for it; a set that takes in
 * another cluster's volume, an untagged request, or another cluster's node is denied.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { authorizer, type IamDecision } from '../../lib/iam/evaluate.js';
import { authorizationRequests } from '../../lib/local/ec2/authorization.js';
import { runInstances } from '../../lib/local/ec2/instances.js';
import { QueryParams } from '../../lib/local/ec2/query.js';
import { seedVolumes } from '../../lib/local/ec2/seed.js';
import type { World } from '../../lib/local/ec2/world.js';
import { ACCOUNT_ID, clusterSession, emptyWorld, REGION, ZONE } from './fixtures.js';

const OWNED_BY = (c: string) => ({ 'ebs.csi.aws.com/cluster': 'true', [`kubernetes.io/cluster/${c}`]: 'owned', 'volhook.io/cluster': c });
const NODE_TAG_KEY = 'eks:cluster-name';

let world: World;
const nodes = {} as Record<'c1' | 'c2', string>;
const volumes = {} as Record<'c1a' | 'c1b' | 'c2', string>;

function attach(volumeId: string, instanceId: string, device: string): void {
  world.volumes.get(volumeId)!.attachments.push({ instanceId, device, state: 'attached', attachTime: 0, deleteOnTermination: false, epoch: 1 });
  world.volumes.get(volumeId)!.state = 'in-use';
}

beforeAll(() => {
  world = emptyWorld();
  const node = (tag: string) =>
    runInstances(world, { imageId: 'ami-00000000000000000', zone: ZONE, count: 1, running: true, instanceTags: [{ key: NODE_TAG_KEY, value: tag }] })[0]!.id;
  nodes.c1 = node('c1-eks');
  nodes.c2 = node('c2-eks');
  volumes.c1a = seedVolumes(world, { zone: ZONE, tags: OWNED_BY('c1') })[0]!.id;
  volumes.c1b = seedVolumes(world, { zone: ZONE, tags: OWNED_BY('c1') })[0]!.id;
  volumes.c2 = seedVolumes(world, { zone: ZONE, tags: OWNED_BY('c2') })[0]!.id;
  attach(volumes.c1a, nodes.c1, '/dev/xvdba');
  attach(volumes.c1b, nodes.c1, '/dev/xvdbb');
  attach(volumes.c2, nodes.c2, '/dev/xvdba');
});

const SNAPSHOT_TAGS = (c: string) =>
  Object.fromEntries(
    Object.entries({ ...OWNED_BY(c), CSIVolumeSnapshotName: 'groupsnapshot-1' }).flatMap(([k, v], n) => [
      [`TagSpecification.1.Tag.${n + 1}.Key`, k],
      [`TagSpecification.1.Tag.${n + 1}.Value`, v],
    ]),
  );
const request = (instanceId: string, extra: Record<string, string> = {}) => ({
  'InstanceSpecification.InstanceId': instanceId,
  'InstanceSpecification.ExcludeBootVolume': 'true',
  'TagSpecification.1.ResourceType': 'snapshot',
  ...extra,
});

async function decide(session: 'c1' | 'c1+nodes', params: Record<string, string>): Promise<IamDecision> {
  const requests = authorizationRequests('CreateSnapshots', QueryParams.from(params), world);
  expect(requests.map((r) => r.resource)).toContain(`arn:aws:ec2:${REGION}:${ACCOUNT_ID}:instance/${params['InstanceSpecification.InstanceId']}`);
  return authorizer(session === 'c1+nodes' ? clusterSession('c1', 'c1-eks') : clusterSession('c1'))(requests);
}

describe('CreateSnapshots under the EC2 role', () => {
  it("c1's volumes on c1's node, tagged for c1 -> allowed, with and without the node fence", async () => {
    expect(await decide('c1', request(nodes.c1, SNAPSHOT_TAGS('c1')))).toEqual({ allowed: true });
    expect(await decide('c1+nodes', request(nodes.c1, SNAPSHOT_TAGS('c1')))).toEqual({ allowed: true });
  });

  it('the snapshots not tagged for c1 -> denied', async () => {
    expect((await decide('c1', request(nodes.c1, SNAPSHOT_TAGS('c2')))).allowed).toBe(false);
    expect((await decide('c1', { 'InstanceSpecification.InstanceId': nodes.c1, 'InstanceSpecification.ExcludeBootVolume': 'true' })).allowed).toBe(false);
  });

  it("the root volume (not c1's) in the set -> denied, on that volume", async () => {
    const decision = await decide('c1', { ...request(nodes.c1, SNAPSHOT_TAGS('c1')), 'InstanceSpecification.ExcludeBootVolume': 'false' });
    expect(decision.allowed).toBe(false);
    if (!decision.allowed) expect(decision.request.resource).toMatch(/:volume\//);
  });

  it("c2's node (with c2's volume) -> denied for c1's session", async () => {
    const decision = await decide('c1+nodes', request(nodes.c2, SNAPSHOT_TAGS('c1')));
    expect(decision.allowed).toBe(false);
  });
});
