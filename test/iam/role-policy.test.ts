/**
 * The roles serverless.yml packages, pinned call by call. The EC2 role: the EC2 simulator,
 * holding a key to cluster c1's session of it (the role's policy, session tag
 * volhook-cluster=c1; lib/local/ec2/iam.ts), is asked every mutating call on the cluster's own
 * disks and snapshots and on disks and snapshots that are not in its scope (untagged, another
 * tool's, in-tree, a static PV's disk not adopted, the EBS CSI driver's, another cluster's),
 * plus the tag changes a VolumeAttributesClass makes. Each call IAM denies is made again with
 * the operator's key, with no IAM, and must then succeed: the refusal is IAM's, not the call's.
 * The Lambda role: it assumes EC2 roles and makes no EC2 call (test/iam/cluster-fence.test.ts
 * has the fence between clusters), and reaches its own stage's tables, or a standby's shared ones.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { isReservedTagKey } from '../../lib/contract/tags.js';
import { AUTHORIZED_ACTIONS, ManualClock, Ec2Simulator } from '../../lib/local/ec2/index.js';
import { ACTIONS } from '../../lib/local/ec2/actions.js';
import { authorizer } from '../../lib/iam/evaluate.js';
import { SessionTagKeys } from '../../lib/contract/tags.js';
import { lambdaRolePrincipal } from '../../lib/iam/role-policy.js';
import { ACCOUNT_ID, BACKEND, clusterSession, EC2_ROLE_ARN, REGION, ZONE } from './fixtures.js';

/** c1's session of the EC2 role. */
const ROLE = { accessKeyId: 'ASIA-C1-SESSION' };
const OPERATOR = { accessKeyId: 'operator' };

const SCOPE = { 'ebs.csi.aws.com/cluster': 'true', 'volhook.io/cluster': 'c1' };
const OWN = { ...SCOPE, 'kubernetes.io/cluster/c1': 'owned', CSIVolumeName: 'pvc-1' };
/** Disks the policy keeps out of reach, by what they carry. */
const OUT_OF_SCOPE: Record<string, Record<string, string>> = {
  untagged: {},
  "another tool's": { Name: 'postgres-data', team: 'db' },
  'in-tree (kubernetes.io/aws-ebs)': { KubernetesCluster: 'c1', 'kubernetes.io/created-for/pvc/name': 'data', 'kubernetes.io/created-for/pvc/namespace': 'app' },
  'a static PV, not adopted': { 'kubernetes.io/cluster/c1': 'owned' },
  'tagged false': { 'ebs.csi.aws.com/cluster': 'false', 'kubernetes.io/cluster/c1': 'owned', 'volhook.io/cluster': 'c1' },
  "the EBS CSI driver's (no volhook.io/cluster)": { 'ebs.csi.aws.com/cluster': 'true', 'kubernetes.io/cluster/c1': 'owned', CSIVolumeName: 'pvc-1' },
  "another cluster's (volhook.io/cluster=c2)": { ...SCOPE, 'volhook.io/cluster': 'c2', 'kubernetes.io/cluster/c2': 'owned', CSIVolumeName: 'pvc-1' },
  'another cluster’s, its key in another case (VOLHOOK.IO/CLUSTER=c2)': { 'ebs.csi.aws.com/cluster': 'true', 'VOLHOOK.IO/CLUSTER': 'c2', 'kubernetes.io/cluster/c1': 'owned' },
};

let sim: Ec2Simulator;
let clock: ManualClock;
let instanceId: string;

beforeEach(() => {
  clock = new ManualClock();
  sim = new Ec2Simulator({ seed: 7, throttling: false, createFaults: [], iam: { principals: { [ROLE.accessKeyId]: clusterSession('c1') } } }, clock);
  instanceId = sim.runInstance({ zone: ZONE }).id;
});

function volume(tags: Record<string, string>): string {
  const [v] = sim.seedVolumes({ zone: ZONE, tags });
  return (v as { id: string }).id;
}
function snapshot(tags: Record<string, string>): string {
  const [s] = sim.seedSnapshots({ volumeId: volume(OWN), tags });
  return (s as { id: string }).id;
}
function tagParams(prefix: string, tags: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  Object.entries(tags).forEach(([k, v], n) => {
    out[`${prefix}Tag.${n + 1}.Key`] = k;
    out[`${prefix}Tag.${n + 1}.Value`] = v;
  });
  return out;
}
const spec = (type: string, tags: Record<string, string>) => ({ 'TagSpecification.1.ResourceType': type, ...tagParams('TagSpecification.1.', tags) });

async function attached(volumeId: string): Promise<void> {
  expect((await sim.call({ Action: 'AttachVolume', VolumeId: volumeId, InstanceId: instanceId, Device: '/dev/xvdba' }, OPERATOR)).status).toBe(200);
  clock.advance(10_000);
}

/** A call on a disk: what it needs first, then its parameters. */
const VOLUME_CALLS: Record<string, { before?: (id: string) => Promise<void>; params: (id: string) => Record<string, string> }> = {
  AttachVolume: { params: (id) => ({ VolumeId: id, InstanceId: instanceId, Device: '/dev/xvdba' }) },
  DetachVolume: { before: attached, params: (id) => ({ VolumeId: id, InstanceId: instanceId }) },
  DeleteVolume: { params: (id) => ({ VolumeId: id }) },
  ModifyVolume: { params: (id) => ({ VolumeId: id, Size: '8' }) },
  CreateSnapshot: { params: (id) => ({ VolumeId: id, ...spec('snapshot', { ...SCOPE, CSIVolumeSnapshotName: 'snapshot-1' }) }) },
  CopyVolumes: { params: (id) => ({ SourceVolumeId: id, ClientToken: `copy-${id}`, ...spec('volume', OWN) }) },
  'CreateTags (a class tag)': { params: (id) => ({ 'ResourceId.1': id, ...tagParams('', { team: 'blue' }) }) },
  'DeleteTags (a class tag)': { params: (id) => ({ 'ResourceId.1': id, 'Tag.1.Key': 'team' }) },
};
const actionOf = (name: string) => name.split(' ')[0] as string;

async function expectDenied(action: string, params: Record<string, string>): Promise<void> {
  const denied = await sim.call({ Action: action, ...params }, ROLE);
  expect(denied.code, denied.body).toBe('UnauthorizedOperation');
  expect(denied.status).toBe(403);
  expect(denied.body).toContain(`is not authorized to perform: ec2:`);
  expect(denied.body).toContain('Encoded authorization failure message');
  const control = await sim.call({ Action: action, ...params }, OPERATOR);
  expect(control.status, control.body).toBe(200);
}

async function expectAllowed(action: string, params: Record<string, string>): Promise<void> {
  const answer = await sim.call({ Action: action, ...params }, ROLE);
  expect(answer.status, answer.body).toBe(200);
}

describe('the EC2 role, c1’s session: the cluster’s own disks', () => {
  it.each(Object.keys(VOLUME_CALLS))('%s on a disk tagged ebs.csi.aws.com/cluster=true and volhook.io/cluster=c1: allowed', async (name) => {
    const call = VOLUME_CALLS[name] as (typeof VOLUME_CALLS)[string];
    const id = volume(OWN);
    await call.before?.(id);
    await expectAllowed(actionOf(name), call.params(id));
  });
});

describe('the EC2 role, c1’s session: disks out of its scope', () => {
  const cases = Object.keys(OUT_OF_SCOPE).flatMap((disk) => Object.keys(VOLUME_CALLS).map((call) => [call, disk] as const));
  it.each(cases)('%s on %s disk: denied', async (name, disk) => {
    const call = VOLUME_CALLS[name] as (typeof VOLUME_CALLS)[string];
    const id = volume(OUT_OF_SCOPE[disk] as Record<string, string>);
    await call.before?.(id);
    await expectDenied(actionOf(name), call.params(id));
  });
});

describe('the EC2 role, c1’s session: creating', () => {
  let token = 0;
  const create = (tags: Record<string, string>, extra: Record<string, string> = {}) => ({ AvailabilityZone: ZONE, Size: '4', VolumeType: 'gp3', ClientToken: `token-${++token}`, ...spec('volume', tags), ...extra });

  it('CreateVolume tagged ebs.csi.aws.com/cluster=true and volhook.io/cluster=c1: allowed; without either tag, with one false or another cluster’s: denied', async () => {
    await expectAllowed('CreateVolume', create(OWN));
    await expectDenied('CreateVolume', create({ CSIVolumeName: 'pvc-2' }));
    await expectDenied('CreateVolume', create({ ...OWN, 'ebs.csi.aws.com/cluster': 'false' }));
    await expectDenied('CreateVolume', create({ ...OWN, 'volhook.io/cluster': 'c2' }));
    const { 'volhook.io/cluster': _fence, ...unfenced } = OWN;
    await expectDenied('CreateVolume', create(unfenced));
    await expectDenied('CreateVolume', { AvailabilityZone: ZONE, Size: '4', VolumeType: 'gp3' });
  });

  it('CreateVolume from a snapshot (a restore): allowed from a snapshot of the cluster, denied from one that is not (untagged, another tool’s, the EBS CSI driver’s, another cluster’s)', async () => {
    await expectAllowed('CreateVolume', create(OWN, { SnapshotId: snapshot(SCOPE) }));
    await expectDenied('CreateVolume', create(OWN, { SnapshotId: snapshot({}) }));
    await expectDenied('CreateVolume', create(OWN, { SnapshotId: snapshot({ Name: 'nightly-backup' }) }));
    await expectDenied('CreateVolume', create(OWN, { SnapshotId: snapshot({ 'ebs.csi.aws.com/cluster': 'true' }) }));
    await expectDenied('CreateVolume', create(OWN, { SnapshotId: snapshot({ ...SCOPE, 'volhook.io/cluster': 'c2' }) }));
  });

  it('CreateSnapshot tagged for the cluster of an own disk: allowed; an untagged snapshot, or one tagged for another cluster: denied', async () => {
    await expectAllowed('CreateSnapshot', { VolumeId: volume(OWN), ...spec('snapshot', SCOPE) });
    await expectDenied('CreateSnapshot', { VolumeId: volume(OWN) });
    await expectDenied('CreateSnapshot', { VolumeId: volume(OWN), ...spec('snapshot', { Name: 'mine' }) });
    await expectDenied('CreateSnapshot', { VolumeId: volume(OWN), ...spec('snapshot', { 'ebs.csi.aws.com/cluster': 'true' }) });
    await expectDenied('CreateSnapshot', { VolumeId: volume(OWN), ...spec('snapshot', { ...SCOPE, 'volhook.io/cluster': 'c2' }) });
  });

  it('CopyVolumes of an own disk into an untagged copy: denied', async () => {
    await expectDenied('CopyVolumes', { SourceVolumeId: volume(OWN), ClientToken: 'c', ...spec('volume', { Name: 'copy' }) });
  });
});

describe('the EC2 role, c1’s session: snapshots', () => {
  it.each([
    ['DeleteSnapshot', (id: string) => ({ SnapshotId: id })],
    ['EnableFastSnapshotRestores', (id: string) => ({ 'SourceSnapshotId.1': id, 'AvailabilityZone.1': ZONE })],
  ] as const)('%s: allowed on a snapshot of the cluster, denied on an untagged one, another tool’s, the EBS CSI driver’s and another cluster’s', async (action, params) => {
    await expectAllowed(action, params(snapshot({ ...SCOPE, CSIVolumeSnapshotName: 'snapshot-1' })));
    await expectDenied(action, params(snapshot({})));
    await expectDenied(action, params(snapshot({ Name: 'nightly-backup' })));
    await expectDenied(action, params(snapshot({ 'ebs.csi.aws.com/cluster': 'true', CSIVolumeSnapshotName: 'snapshot-1' })));
    await expectDenied(action, params(snapshot({ ...SCOPE, 'volhook.io/cluster': 'c2', CSIVolumeSnapshotName: 'snapshot-1' })));
  });
});

describe('the EC2 role, c1’s session: tags', () => {
  it.each(['kubernetes.io/cluster/c2', 'kubernetes.io/created-for/pvc/name', 'ebs.csi.aws.com/cluster', 'ebs.csi.aws.com/other', 'CSIVolumeName', 'CSIVolumeSnapshotName', 'EBS.CSI.AWS.COM/cluster', 'csivolumename', 'CsiVolumeSnapshotName', 'volhook.io/cluster', 'volhook.io/other', 'VOLHOOK.IO/cluster', 'Volhook.io/Cluster'])(
    'CreateTags and DeleteTags of the reserved key %s on an own disk: denied',
    async (key) => {
      await expectDenied('CreateTags', { 'ResourceId.1': volume(OWN), 'Tag.1.Key': key, 'Tag.1.Value': 'x' });
      await expectDenied('DeleteTags', { 'ResourceId.1': volume(OWN), 'Tag.1.Key': key });
    },
  );

  it('a reserved prefix in another case (Kubernetes.IO/…, Volhook.IO/other) passes IAM, whose StringNotLike knows no case: the backend refuses it', async () => {
    await expectAllowed('CreateTags', { 'ResourceId.1': volume(OWN), 'Tag.1.Key': 'Kubernetes.IO/cluster/c2', 'Tag.1.Value': 'owned' });
    expect(isReservedTagKey('Kubernetes.IO/cluster/c2')).toBe(true);
    await expectAllowed('CreateTags', { 'ResourceId.1': volume(OWN), 'Tag.1.Key': 'Volhook.IO/other', 'Tag.1.Value': 'x' });
    expect(isReservedTagKey('Volhook.IO/other')).toBe(true);
  });

  it('DeleteTags naming no key (EC2 then removes every tag): denied; naming a class tag: allowed', async () => {
    await expectDenied('DeleteTags', { 'ResourceId.1': volume(OWN) });
    await expectAllowed('DeleteTags', { 'ResourceId.1': volume(OWN), 'Tag.1.Key': 'team' });
  });

  it('CreateTags of a snapshot outside creation: denied, whatever its tags', async () => {
    await expectDenied('CreateTags', { 'ResourceId.1': snapshot(SCOPE), 'Tag.1.Key': 'team', 'Tag.1.Value': 'blue' });
  });
});

describe('the EC2 role, c1’s session: reads and what it does not grant', () => {
  it.each(['DescribeVolumes', 'DescribeInstances', 'DescribeSnapshots', 'DescribeVolumesModifications', 'DescribeAvailabilityZones'])('%s: allowed', async (action) => {
    await expectAllowed(action, {});
  });

  it('RunInstances and TerminateInstances: denied (the backend never starts or stops nodes)', async () => {
    await expectDenied('TerminateInstances', { 'InstanceId.1': instanceId });
    await expectDenied('RunInstances', { ImageId: 'ami-12345678', MinCount: '1', MaxCount: '1', 'Placement.AvailabilityZone': ZONE });
  });

  it('a DryRun of a denied call is UnauthorizedOperation, of an allowed one DryRunOperation', async () => {
    expect((await sim.call({ Action: 'DeleteVolume', VolumeId: volume({}), DryRun: 'true' }, ROLE)).code).toBe('UnauthorizedOperation');
    expect((await sim.call({ Action: 'DeleteVolume', VolumeId: volume(OWN), DryRun: 'true' }, ROLE)).code).toBe('DryRunOperation');
  });

  it('a volume that does not exist is EC2’s NotFound, not IAM’s refusal (DeleteVolume of a gone disk is success to the backend)', async () => {
    expect((await sim.call({ Action: 'DeleteVolume', VolumeId: 'vol-0123456789abcdef0' }, ROLE)).code).toBe('InvalidVolume.NotFound');
  });

  it('every action the simulator serves has its IAM mapping', () => {
    expect([...AUTHORIZED_ACTIONS].sort()).toEqual(Object.keys(ACTIONS).sort());
  });
});

describe('the Lambda role: it assumes EC2 roles, and makes no EC2 call', () => {
  const authorize = authorizer(BACKEND);
  const MEMBER_ROLE = 'arn:aws:iam::210987654321:role/volhook/volhook-ec2';
  const tagSession = (role: string, tags: Record<string, string>) => ({
    action: 'sts:TagSession',
    resource: role,
    context: { 'aws:TagKeys': Object.keys(tags), ...Object.fromEntries(Object.entries(tags).map(([k, v]) => [`aws:RequestTag/${k}`, v])) },
  });

  it('sts:AssumeRole of an EC2 role under /volhook/ in its own account: allowed; in an account the deployment does not list (memberAccounts unset): denied', async () => {
    expect(await authorize([{ action: 'sts:AssumeRole', resource: EC2_ROLE_ARN, context: {} }])).toEqual({ allowed: true });
    expect(await authorize([{ action: 'sts:AssumeRole', resource: MEMBER_ROLE, context: {} }])).toMatchObject({ allowed: false, result: 'ImplicitlyDenied' });
    expect(await authorize([{ action: 'sts:AssumeRole', resource: `arn:aws:iam::${ACCOUNT_ID}:role/admin`, context: {} }])).toMatchObject({ allowed: false, result: 'ImplicitlyDenied' });
  });

  it('memberAccounts=210987654321,444455556666: a listed account\'s role under /volhook/ allowed (assume and tag); an unlisted account\'s, or a role elsewhere in a listed one: denied', async () => {
    const listed = authorizer(lambdaRolePrincipal({ region: REGION, accountId: ACCOUNT_ID, params: { memberAccounts: '210987654321,444455556666' } }));
    expect(await listed([{ action: 'sts:AssumeRole', resource: MEMBER_ROLE, context: {} }])).toEqual({ allowed: true });
    expect(await listed([{ action: 'sts:AssumeRole', resource: 'arn:aws:iam::444455556666:role/volhook/volhook-ec2', context: {} }])).toEqual({ allowed: true });
    expect(await listed([{ action: 'sts:AssumeRole', resource: EC2_ROLE_ARN, context: {} }])).toEqual({ allowed: true });
    expect(await listed([tagSession(MEMBER_ROLE, { [SessionTagKeys.cluster]: 'c1' })])).toEqual({ allowed: true });
    for (const refused of ['arn:aws:iam::999988887777:role/volhook/volhook-ec2', 'arn:aws:iam::210987654321:role/admin', 'arn:aws:iam::210987654321:role/team/volhook-ec2']) {
      expect(await listed([{ action: 'sts:AssumeRole', resource: refused, context: {} }]), refused).toMatchObject({ allowed: false, result: 'ImplicitlyDenied' });
    }
    expect(await listed([tagSession('arn:aws:iam::999988887777:role/volhook/volhook-ec2', { [SessionTagKeys.cluster]: 'c1' })])).toMatchObject({ allowed: false });
  });

  it('sts:TagSession with the cluster tag (and the nodes tag): allowed; without the cluster tag, or with any other tag: denied', async () => {
    const cluster = { [SessionTagKeys.cluster]: 'c1' };
    expect(await authorize([tagSession(EC2_ROLE_ARN, cluster)])).toEqual({ allowed: true });
    expect(await authorize([tagSession(EC2_ROLE_ARN, { ...cluster, [SessionTagKeys.nodes]: 'c1-eks' })])).toEqual({ allowed: true });
    expect(await authorize([tagSession(EC2_ROLE_ARN, { [SessionTagKeys.nodes]: 'c1-eks' })])).toMatchObject({ allowed: false });
    expect(await authorize([tagSession(EC2_ROLE_ARN, { ...cluster, team: 'blue' })])).toMatchObject({ allowed: false });
    expect(await authorize([tagSession('arn:aws:iam::210987654321:role/admin', cluster)])).toMatchObject({ allowed: false });
  });

  it('no EC2 action, not even a Describe, on its own role: the EC2 role’s session makes them (the control: that session may)', async () => {
    const backendKey = 'lambda-role';
    const both = new Ec2Simulator({ seed: 8, throttling: false, createFaults: [], iam: { principals: { [backendKey]: BACKEND, [ROLE.accessKeyId]: clusterSession('c1') } } }, clock);
    const [own] = both.seedVolumes({ zone: ZONE, tags: OWN });
    for (const [action, params] of [['DescribeVolumes', {}], ['DeleteVolume', { VolumeId: own!.id }]] as const) {
      expect((await both.call({ Action: action, ...params }, { accessKeyId: backendKey })).code).toBe('UnauthorizedOperation');
    }
    expect((await both.call({ Action: 'DeleteVolume', VolumeId: own!.id }, ROLE)).status).toBe(200);
  });
});

describe("the Lambda role's tables: its own stage's, or a standby's shared ones (sharedReplayTable, sharedBudgetTable)", () => {
  const table = (name: string, region = REGION) => `arn:aws:dynamodb:${region}:${ACCOUNT_ID}:table/${name}`;
  const putItem = (resource: string) => ({ action: 'dynamodb:PutItem', resource, context: {} });
  const budgetCalls = (resource: string) => ['dynamodb:GetItem', 'dynamodb:UpdateItem'].map((action) => ({ action, resource, context: {} }));
  /** The default deployment (stage dev): its own tables. */
  const authorize = (...requests: { action: string; resource: string; context: Record<string, never> }[]) => authorizer(BACKEND)(requests);
  /** A standby in another Region whose primary's tables are global tables (their replicas in this Region). */
  const standby = authorizer(
    lambdaRolePrincipal({
      stage: 'prod-standby',
      region: 'us-west-2',
      accountId: ACCOUNT_ID,
      params: { sharedReplayTable: 'volhook-prod-webhook-ids', sharedBudgetTable: 'volhook-prod-rate-budget' },
    }),
  );

  it('the default (control): PutItem on its own replay table, GetItem and UpdateItem on its own budget table allowed; another stage\'s denied', async () => {
    expect(await authorize(putItem(table('volhook-dev-webhook-ids')))).toEqual({ allowed: true });
    expect(await authorize(...budgetCalls(table('volhook-dev-rate-budget')))).toEqual({ allowed: true });
    expect(await authorize(putItem(table('volhook-prod-webhook-ids')))).toMatchObject({ allowed: false, result: 'ImplicitlyDenied' });
    expect(await authorize(...budgetCalls(table('volhook-prod-rate-budget')))).toMatchObject({ allowed: false, result: 'ImplicitlyDenied' });
  });

  it('a standby sharing the primary\'s: those calls on the shared tables\' replicas in its own Region allowed; on its own stage\'s tables, the primary Region\'s copies, or any other table denied', async () => {
    expect(await standby([putItem(table('volhook-prod-webhook-ids', 'us-west-2'))])).toEqual({ allowed: true });
    expect(await standby(budgetCalls(table('volhook-prod-rate-budget', 'us-west-2')))).toEqual({ allowed: true });
    for (const refused of [table('volhook-prod-standby-webhook-ids', 'us-west-2'), table('volhook-prod-webhook-ids', 'us-east-1'), table('volhook-prod-rate-budget', 'us-west-2'), table('volhook-prod-webhook-ids-2', 'us-west-2')]) {
      expect(await standby([putItem(refused)]), refused).toMatchObject({ allowed: false, result: 'ImplicitlyDenied' });
    }
    for (const refused of [table('volhook-prod-standby-rate-budget', 'us-west-2'), table('volhook-prod-rate-budget', 'us-east-1'), table('volhook-prod-webhook-ids', 'us-west-2')]) {
      expect(await standby(budgetCalls(refused)), refused).toMatchObject({ allowed: false, result: 'ImplicitlyDenied' });
    }
  });

  it('the reports table stays the standby\'s own: reads and writes there, not on the primary\'s', async () => {
    const reports = (resource: string) => ['dynamodb:GetItem', 'dynamodb:UpdateItem', 'dynamodb:Scan'].map((action) => ({ action, resource, context: {} }));
    expect(await standby(reports(table('volhook-prod-standby-reports', 'us-west-2')))).toEqual({ allowed: true });
    expect(await standby(reports(table('volhook-prod-reports', 'us-west-2')))).toMatchObject({ allowed: false });
  });
});
