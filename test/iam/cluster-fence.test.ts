/**
 * The cluster fence, by IAM alone (issue 23, first acceptance point): cluster c1's session of
 * the EC2 role (session tag volhook-cluster=c1) is asked every mutating call on c2's disks and
 * snapshots, on the EBS CSI driver's (ebs.csi.aws.com/cluster=true and nothing of volhook's)
 * and on untagged ones, and creations tagged for c2; IAM must deny each. The same calls on
 * c1's own disks and snapshots — its whole lifecycle — are the control: allowed.
 *
 * Each call is mapped to its authorization requests by lib/local/ec2/authorization.ts, the
 * mapping the EC2 simulator uses, against a small account, and decided by the evaluator
 * (lib/iam/evaluate.ts) under the session principal the simulator's STS would make.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { identityTags, snapshotIdentityTags, TagKeys } from '../../lib/contract/tags.js';
import { authorizer, type IamDecision, type IamPrincipal } from '../../lib/iam/evaluate.js';
import { authorizationRequests } from '../../lib/local/ec2/authorization.js';
import { runInstances } from '../../lib/local/ec2/instances.js';
import { QueryParams } from '../../lib/local/ec2/query.js';
import { seedSnapshots, seedVolumes } from '../../lib/local/ec2/seed.js';
import type { World } from '../../lib/local/ec2/world.js';
import { ACCOUNT_ID, clusterSession, emptyWorld, REGION, ZONE } from './fixtures.js';

const CSI = { 'ebs.csi.aws.com/cluster': 'true' };
const OWNED_BY = (cluster: string) => ({ ...CSI, [`kubernetes.io/cluster/${cluster}`]: 'owned', 'volhook.io/cluster': cluster });
/** The disks and snapshots of the account, by whose they are. */
const OWNERS = {
  c1: OWNED_BY('c1'),
  c2: OWNED_BY('c2'),
  // The EBS CSI driver's (or a volhook disk from before the fence, not adopted again).
  'csi-only': { ...CSI, 'kubernetes.io/cluster/c1': 'owned', CSIVolumeName: 'pvc-csi' },
  untagged: {},
} as const;
type Owner = keyof typeof OWNERS;
const FOREIGN: readonly Owner[] = ['c2', 'csi-only', 'untagged'];

/** The node tag (the deployment's NodeTagKey, default eks:cluster-name) of each cluster's nodes. */
const NODE_TAG_KEY = 'eks:cluster-name';

let world: World;
const volumes = {} as Record<Owner, string>;
const snapshots = {} as Record<Owner, string>;
const nodes = {} as Record<'c1' | 'c2' | 'untagged', string>;

beforeAll(() => {
  world = emptyWorld();
  for (const owner of Object.keys(OWNERS) as Owner[]) {
    volumes[owner] = seedVolumes(world, { zone: ZONE, tags: OWNERS[owner] })[0]!.id;
    snapshots[owner] = seedSnapshots(world, { volumeId: volumes[owner], tags: { ...OWNERS[owner], ...(owner === 'untagged' ? {} : { CSIVolumeSnapshotName: `snapshot-${owner}` }) } })[0]!.id;
  }
  const node = (tags: Record<string, string>) => runInstances(world, { imageId: 'ami-00000000000000000', zone: ZONE, count: 1, running: true, instanceTags: Object.entries(tags).map(([key, value]) => ({ key, value })) })[0]!.id;
  nodes.c1 = node({ [NODE_TAG_KEY]: 'c1-eks', 'kubernetes.io/cluster/c1-eks': 'owned' });
  nodes.c2 = node({ [NODE_TAG_KEY]: 'c2-eks' });
  nodes.untagged = node({});
});

const sessions = new Map<string, ReturnType<typeof authorizer>>();
/** c1's session (`c1`), c1's session naming its nodes' tag value (`c1+nodes`), c2's (`c2`). */
function session(name: 'c1' | 'c1+nodes' | 'c2'): ReturnType<typeof authorizer> {
  let found = sessions.get(name);
  if (!found) {
    const principal: IamPrincipal = name === 'c1+nodes' ? clusterSession('c1', 'c1-eks') : clusterSession(name);
    found = authorizer(principal);
    sessions.set(name, found);
  }
  return found;
}

function tags(prefix: string, given: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  Object.entries(given).forEach(([k, v], n) => {
    out[`${prefix}Tag.${n + 1}.Key`] = k;
    out[`${prefix}Tag.${n + 1}.Value`] = v;
  });
  return out;
}
const spec = (type: 'volume' | 'snapshot', given: Record<string, string>) => ({ 'TagSpecification.1.ResourceType': type, ...tags('TagSpecification.1.', given) });
/** What volhook tags a new disk or snapshot of cluster `c` with (the hand-back tag included). */
const NEW_VOLUME = (c: string) => spec('volume', identityTags(c, 'pvc-new'));
const NEW_SNAPSHOT = (c: string) => spec('snapshot', snapshotIdentityTags(c, 'snapshot-new'));

const volumeArn = (id: string) => `arn:aws:ec2:${REGION}:${ACCOUNT_ID}:volume/${id}`;
const snapshotArn = (id: string) => `arn:aws:ec2:${REGION}::snapshot/${id}`;
const instanceArn = (id: string) => `arn:aws:ec2:${REGION}:${ACCOUNT_ID}:instance/${id}`;

async function decide(who: Parameters<typeof session>[0], action: string, params: Record<string, string>): Promise<IamDecision> {
  const requests = authorizationRequests(action, QueryParams.from(params), world);
  expect(requests.length, `${action} maps to authorization requests`).toBeGreaterThan(0);
  const decision = await session(who)(requests);
  // An evaluator error is no refusal by the policy.
  if (!decision.allowed) expect(decision.result, decision.detail).not.toBe('Error');
  return decision;
}

async function expectDenied(who: Parameters<typeof session>[0], action: string, params: Record<string, string>, on?: string): Promise<void> {
  const decision = await decide(who, action, params);
  expect(decision.allowed, `${action} ${JSON.stringify(params)}`).toBe(false);
  if (on !== undefined && !decision.allowed) expect(decision.request.resource).toBe(on);
}

async function expectAllowed(who: Parameters<typeof session>[0], action: string, params: Record<string, string>): Promise<void> {
  const decision = await decide(who, action, params);
  expect(decision, `${action} ${JSON.stringify(params)}`).toEqual({ allowed: true });
}

/** Each mutating call on a disk, and the resource IAM must refuse it on when the disk is not c1's. */
const ON_VOLUME: Record<string, { action: string; params: (v: string) => Record<string, string> }> = {
  DeleteVolume: { action: 'DeleteVolume', params: (v) => ({ VolumeId: v }) },
  DetachVolume: { action: 'DetachVolume', params: (v) => ({ VolumeId: v, InstanceId: nodes.c1 }) },
  AttachVolume: { action: 'AttachVolume', params: (v) => ({ VolumeId: v, InstanceId: nodes.c1, Device: '/dev/xvdba' }) },
  'ModifyVolume (resize)': { action: 'ModifyVolume', params: (v) => ({ VolumeId: v, Size: '8' }) },
  'CreateTags (a VolumeAttributesClass tag)': { action: 'CreateTags', params: (v) => ({ 'ResourceId.1': v, ...tags('', { team: 'blue' }) }) },
  'DeleteTags (a VolumeAttributesClass tag)': { action: 'DeleteTags', params: (v) => ({ 'ResourceId.1': v, 'Tag.1.Key': 'team' }) },
  'CreateSnapshot (tagged for c1)': { action: 'CreateSnapshot', params: (v) => ({ VolumeId: v, ...NEW_SNAPSHOT('c1') }) },
  'CopyVolumes (a clone tagged for c1, of the disk)': { action: 'CopyVolumes', params: (v) => ({ SourceVolumeId: v, ClientToken: `clone-${v}`, ...NEW_VOLUME('c1') }) },
};

/** Each mutating call on a snapshot. */
const ON_SNAPSHOT: Record<string, { action: string; params: (s: string) => Record<string, string> }> = {
  DeleteSnapshot: { action: 'DeleteSnapshot', params: (s) => ({ SnapshotId: s }) },
  EnableFastSnapshotRestores: { action: 'EnableFastSnapshotRestores', params: (s) => ({ 'SourceSnapshotId.1': s, 'AvailabilityZone.1': ZONE }) },
  'CreateVolume (a restore tagged for c1, from the snapshot)': { action: 'CreateVolume', params: (s) => ({ SnapshotId: s, AvailabilityZone: ZONE, VolumeType: 'gp3', ClientToken: `restore-${s}`, ...NEW_VOLUME('c1') }) },
};

describe("the cluster fence: c1's session on disks that are not c1's", () => {
  const cases = Object.keys(ON_VOLUME).flatMap((call) => FOREIGN.map((owner) => [call, owner] as const));
  it.each(cases)('%s on the %s disk: denied, on that disk', async (call, owner) => {
    const { action, params } = ON_VOLUME[call]!;
    await expectDenied('c1', action, params(volumes[owner]), volumeArn(volumes[owner]));
  });

  it.each(Object.keys(ON_VOLUME))("%s on c1's own disk: allowed (the control)", async (call) => {
    const { action, params } = ON_VOLUME[call]!;
    await expectAllowed('c1', action, params(volumes.c1));
  });
});

describe("the cluster fence: c1's session on snapshots that are not c1's", () => {
  const cases = Object.keys(ON_SNAPSHOT).flatMap((call) => FOREIGN.map((owner) => [call, owner] as const));
  it.each(cases)('%s on the %s snapshot: denied, on that snapshot', async (call, owner) => {
    const { action, params } = ON_SNAPSHOT[call]!;
    await expectDenied('c1', action, params(snapshots[owner]), snapshotArn(snapshots[owner]));
  });

  it.each(Object.keys(ON_SNAPSHOT))("%s on c1's own snapshot: allowed (the control)", async (call) => {
    const { action, params } = ON_SNAPSHOT[call]!;
    await expectAllowed('c1', action, params(snapshots.c1));
  });

  it.each(FOREIGN)('CreateTags on the %s snapshot (outside creation): denied', async (owner) => {
    await expectDenied('c1', 'CreateTags', { 'ResourceId.1': snapshots[owner], ...tags('', { team: 'blue' }) });
  });
});

describe("the cluster fence: what c1's session creates", () => {
  const create = (extra: Record<string, string>) => ({ AvailabilityZone: ZONE, Size: '4', VolumeType: 'gp3', ClientToken: 'token', ...extra });
  const ANY_VOLUME = volumeArn('*');
  const ANY_SNAPSHOT = snapshotArn('*');

  it.each([
    ['CreateVolume tagged volhook.io/cluster=c2', 'CreateVolume', () => create(NEW_VOLUME('c2')), ANY_VOLUME],
    ['CreateVolume with the CSI tags only (no volhook.io/cluster)', 'CreateVolume', () => create(spec('volume', { ...CSI, CSIVolumeName: 'pvc-x' })), ANY_VOLUME],
    ['CreateVolume tagged for c1 but not ebs.csi.aws.com/cluster=true', 'CreateVolume', () => create(spec('volume', { 'volhook.io/cluster': 'c1' })), ANY_VOLUME],
    ['CreateVolume untagged', 'CreateVolume', () => create({}), ANY_VOLUME],
    ['CreateVolume from c1’s snapshot, tagged for c2', 'CreateVolume', () => create({ SnapshotId: snapshots.c1, ...NEW_VOLUME('c2') }), ANY_VOLUME],
    ['CreateSnapshot of c1’s disk tagged volhook.io/cluster=c2', 'CreateSnapshot', () => ({ VolumeId: volumes.c1, ...NEW_SNAPSHOT('c2') }), ANY_SNAPSHOT],
    ['CreateSnapshot of c1’s disk, untagged', 'CreateSnapshot', () => ({ VolumeId: volumes.c1 }), ANY_SNAPSHOT],
    ['CopyVolumes of c1’s disk into a copy tagged volhook.io/cluster=c2', 'CopyVolumes', () => ({ SourceVolumeId: volumes.c1, ClientToken: 'c', ...NEW_VOLUME('c2') }), ANY_VOLUME],
  ] as const)('%s: denied', async (_name, action, params, on) => {
    await expectDenied('c1', action, params(), on);
  });

  it('the control: CreateVolume, a restore of c1’s snapshot, CreateSnapshot and CopyVolumes of c1’s disk, tagged for c1: allowed', async () => {
    await expectAllowed('c1', 'CreateVolume', create(NEW_VOLUME('c1')));
    await expectAllowed('c1', 'CreateVolume', create({ SnapshotId: snapshots.c1, ...NEW_VOLUME('c1') }));
    await expectAllowed('c1', 'CreateSnapshot', { VolumeId: volumes.c1, ...NEW_SNAPSHOT('c1') });
    await expectAllowed('c1', 'CopyVolumes', { SourceVolumeId: volumes.c1, ClientToken: 'c', ...NEW_VOLUME('c1') });
  });
});

describe('the cluster fence: nobody changes volhook.io/cluster outside creation', () => {
  it.each([
    ['CreateTags', 'volhook.io/cluster', 'c2'],
    ['CreateTags', 'volhook.io/cluster', 'c1'],
    ['CreateTags', 'VOLHOOK.IO/CLUSTER', 'c2'],
    ['CreateTags', 'Volhook.io/Cluster', 'c1'],
    ['CreateTags', 'volhook.io/other', 'x'],
    ['DeleteTags', 'volhook.io/cluster', undefined],
    ['DeleteTags', 'VolHook.IO/cluster', undefined],
  ] as const)("%s of %s (=%s) on c1's own disk: denied", async (action, key, value) => {
    await expectDenied('c1', action, { 'ResourceId.1': volumes.c1, 'Tag.1.Key': key, ...(value === undefined ? {} : { 'Tag.1.Value': value }) });
  });

  it.each(FOREIGN)('CreateTags volhook.io/cluster=c1 on the %s disk (pulling it into c1): denied', async (owner) => {
    await expectDenied('c1', 'CreateTags', { 'ResourceId.1': volumes[owner], 'Tag.1.Key': 'volhook.io/cluster', 'Tag.1.Value': 'c1' });
  });

  it("DeleteTags naming no key (EC2 then removes every tag, volhook.io/cluster too) on c1's disk: denied; naming a class tag: allowed", async () => {
    await expectDenied('c1', 'DeleteTags', { 'ResourceId.1': volumes.c1 });
    await expectAllowed('c1', 'DeleteTags', { 'ResourceId.1': volumes.c1, 'Tag.1.Key': 'team' });
  });
});

describe("the cluster fence: c1's lifecycle and audit", () => {
  it.each([
    ['provision: CreateVolume tagged for c1', 'CreateVolume', () => ({ AvailabilityZone: ZONE, Size: '4', VolumeType: 'gp3', ClientToken: 't', ...NEW_VOLUME('c1') })],
    ['attach to c1’s node', 'AttachVolume', () => ({ VolumeId: volumes.c1, InstanceId: nodes.c1, Device: '/dev/xvdba' })],
    ['resize: ModifyVolume', 'ModifyVolume', () => ({ VolumeId: volumes.c1, Size: '16' })],
    ['VolumeAttributesClass: ModifyVolume of type and IOPS', 'ModifyVolume', () => ({ VolumeId: volumes.c1, VolumeType: 'gp3', Iops: '4000' })],
    ['VolumeAttributesClass: CreateTags of a user key', 'CreateTags', () => ({ 'ResourceId.1': volumes.c1, ...tags('', { 'cost-center': '42' }) })],
    ['VolumeAttributesClass: DeleteTags of a user key', 'DeleteTags', () => ({ 'ResourceId.1': volumes.c1, 'Tag.1.Key': 'cost-center' })],
    ['snapshot: CreateSnapshot tagged for c1', 'CreateSnapshot', () => ({ VolumeId: volumes.c1, ...NEW_SNAPSHOT('c1') })],
    ['snapshot: fast snapshot restore', 'EnableFastSnapshotRestores', () => ({ 'SourceSnapshotId.1': snapshots.c1, 'AvailabilityZone.1': ZONE })],
    ['restore: CreateVolume from c1’s snapshot', 'CreateVolume', () => ({ SnapshotId: snapshots.c1, AvailabilityZone: ZONE, VolumeType: 'gp3', ClientToken: 'r', ...NEW_VOLUME('c1') })],
    ['clone: CopyVolumes of c1’s disk', 'CopyVolumes', () => ({ SourceVolumeId: volumes.c1, ClientToken: 'k', ...NEW_VOLUME('c1') })],
    ['detach from c1’s node', 'DetachVolume', () => ({ VolumeId: volumes.c1, InstanceId: nodes.c1 })],
    ['delete: DeleteVolume', 'DeleteVolume', () => ({ VolumeId: volumes.c1 })],
    ['delete: DeleteSnapshot', 'DeleteSnapshot', () => ({ SnapshotId: snapshots.c1 })],
    ['audit: DescribeVolumes', 'DescribeVolumes', () => ({})],
    ['audit: DescribeSnapshots', 'DescribeSnapshots', () => ({})],
    ['audit: DescribeInstances', 'DescribeInstances', () => ({})],
    ['audit: DescribeVolumesModifications', 'DescribeVolumesModifications', () => ({})],
    ['zones: DescribeAvailabilityZones', 'DescribeAvailabilityZones', () => ({})],
    ['audit: DeleteVolume of an orphan of c1', 'DeleteVolume', () => ({ VolumeId: volumes.c1 })],
    ['audit: DeleteSnapshot of an orphan of c1', 'DeleteSnapshot', () => ({ SnapshotId: snapshots.c1 })],
  ] as const)('%s: allowed', async (_name, action, params) => {
    await expectAllowed('c1', action, params());
  });

  it("the fence is symmetric: c2's session on c1's disk and snapshot is denied, on its own allowed", async () => {
    await expectDenied('c2', 'DeleteVolume', { VolumeId: volumes.c1 }, volumeArn(volumes.c1));
    await expectDenied('c2', 'DeleteSnapshot', { SnapshotId: snapshots.c1 }, snapshotArn(snapshots.c1));
    await expectAllowed('c2', 'DeleteVolume', { VolumeId: volumes.c2 });
    await expectAllowed('c2', 'DeleteSnapshot', { SnapshotId: snapshots.c2 });
  });

  it('the policy grants nothing else: RunInstances and TerminateInstances are denied', async () => {
    await expectDenied('c1', 'TerminateInstances', { 'InstanceId.1': nodes.c1 });
    await expectDenied('c1', 'RunInstances', { ImageId: 'ami-12345678', MinCount: '1', MaxCount: '1' });
  });
});

describe('the instance fence (a registration naming its nodes’ tag: session tag volhook-nodes)', () => {
  const attach = (instance: string) => ({ VolumeId: volumes.c1, InstanceId: instance, Device: '/dev/xvdba' });
  const detach = (instance: string) => ({ VolumeId: volumes.c1, InstanceId: instance });

  it(`with volhook-nodes=c1-eks: attach and detach only at instances tagged ${NODE_TAG_KEY}=c1-eks; another cluster's node and an untagged instance are denied, on the instance`, async () => {
    await expectAllowed('c1+nodes', 'AttachVolume', attach(nodes.c1));
    await expectAllowed('c1+nodes', 'DetachVolume', detach(nodes.c1));
    for (const other of [nodes.c2, nodes.untagged]) {
      await expectDenied('c1+nodes', 'AttachVolume', attach(other), instanceArn(other));
      await expectDenied('c1+nodes', 'DetachVolume', detach(other), instanceArn(other));
    }
  });

  it('with volhook-nodes: the disk is still fenced (c2’s disk at c1’s node is denied, on the disk)', async () => {
    await expectDenied('c1+nodes', 'AttachVolume', { VolumeId: volumes.c2, InstanceId: nodes.c1, Device: '/dev/xvdba' }, volumeArn(volumes.c2));
  });

  it('without volhook-nodes (no node tag registered): any instance of the account, as the backend checks the node itself', async () => {
    for (const instance of [nodes.c1, nodes.c2, nodes.untagged]) {
      await expectAllowed('c1', 'AttachVolume', attach(instance));
      await expectAllowed('c1', 'DetachVolume', detach(instance));
    }
  });
});

describe('the hand-back tag ebs.csi.aws.com/cluster-name: written at creation, never by the role afterwards', () => {
  it('what volhook creates carries it, and creating with it is allowed (the controls above create with exactly these tags)', async () => {
    expect(NEW_VOLUME('c1')).toMatchObject({ 'TagSpecification.1.ResourceType': 'volume' });
    expect(Object.values(NEW_VOLUME('c1'))).toContain(TagKeys.ebsClusterName);
    expect(Object.values(NEW_SNAPSHOT('c1'))).toContain(TagKeys.ebsClusterName);
    await expectAllowed('c1', 'CreateVolume', { AvailabilityZone: ZONE, Size: '4', VolumeType: 'gp3', ClientToken: 'hand-back', ...NEW_VOLUME('c1') });
    await expectAllowed('c1', 'CreateSnapshot', { VolumeId: volumes.c1, ...NEW_SNAPSHOT('c1') });
  });

  // cluster adopt adds it to older disks with the operator's credentials: the function's role
  // could otherwise pull a disk into the scope the driver's cluster-scoped policy fences by.
  it.each(['c1', 'csi-only', 'c2'] as const)("CreateTags ebs.csi.aws.com/cluster-name=c1 on the %s disk, outside creation: denied; a class tag on c1's own: allowed", async (owner) => {
    await expectDenied('c1', 'CreateTags', { 'ResourceId.1': volumes[owner], 'Tag.1.Key': TagKeys.ebsClusterName, 'Tag.1.Value': 'c1' });
    await expectDenied('c1', 'CreateTags', { 'ResourceId.1': snapshots[owner], 'Tag.1.Key': TagKeys.ebsClusterName, 'Tag.1.Value': 'c1' });
    await expectAllowed('c1', 'CreateTags', { 'ResourceId.1': volumes.c1, 'Tag.1.Key': 'team', 'Tag.1.Value': 'blue' });
  });
});
