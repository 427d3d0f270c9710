/**
 * The group-snapshot rule (lib/reconcile/group-snapshot.ts): one CreateSnapshots of the volumes
 * attached to one of the cluster's nodes, or a refusal that says why, before any EC2 call.
 */
import { describe, expect, it } from 'vitest';
import { TagKeys } from '../../lib/contract/tags.js';
import type { Disk, Instance } from '../../lib/ec2/types.js';
import { groupInstance, groupRequest, MAX_EXCLUDED_DATA_VOLUMES, type GroupMember } from '../../lib/reconcile/group-snapshot.js';
import { CLUSTER } from './fixtures.js';

const OWNED = { [TagKeys.cluster(CLUSTER)]: 'owned', [TagKeys.ebsCluster]: 'true', [TagKeys.volhookCluster]: CLUSTER };

function disk(volumeId: string, instanceIds: string[], tags: Record<string, string> = OWNED): Disk {
  return {
    volumeId,
    zone: 'us-east-1a',
    sizeGiB: 4,
    state: instanceIds.length > 0 ? 'in-use' : 'available',
    type: 'gp3',
    encrypted: false,
    multiAttach: instanceIds.length > 1,
    tags,
    attachments: instanceIds.map((instanceId, n) => ({ instanceId, device: `/dev/xvdb${'abc'[n]}`, state: 'attached' as const })),
  };
}
const node = (instanceId: string, tags: Record<string, string> = { [TagKeys.cluster(CLUSTER)]: 'owned' }): Instance => ({ instanceId, zone: 'us-east-1a', state: 'running', tags, devicesInUse: [] });

const members: GroupMember[] = [
  { claim: 'shop/a', volumeId: 'vol-a' },
  { claim: 'shop/b', volumeId: 'vol-b' },
  { claim: 'shop/c', volumeId: 'vol-c' },
];
const disks = (entries: Disk[]) => new Map(entries.map((d) => [d.volumeId, d]));

describe('groupInstance', () => {
  it('three claims on one node -> that instance', () => {
    expect(groupInstance(members, disks([disk('vol-a', ['i-1']), disk('vol-b', ['i-1']), disk('vol-c', ['i-1'])]), CLUSTER)).toEqual({ kind: 'instance', instanceId: 'i-1' });
  });

  it('claims on two nodes -> refused, the message names each node and its claims and says no snapshot was taken', () => {
    const plan = groupInstance(members, disks([disk('vol-a', ['i-1']), disk('vol-b', ['i-2']), disk('vol-c', ['i-1'])]), CLUSTER);
    expect(plan).toMatchObject({ kind: 'refuse', reason: 'NotOneNode' });
    if (plan.kind !== 'refuse') return;
    expect(plan.message).toContain('i-1 (claim shop/a and claim shop/c)');
    expect(plan.message).toContain('i-2 (claim shop/b)');
    expect(plan.message).toContain('no snapshot was taken');
  });

  it('a multi-attach volume on both nodes counts for the node the others share', () => {
    expect(groupInstance(members, disks([disk('vol-a', ['i-2', 'i-1']), disk('vol-b', ['i-1']), disk('vol-c', ['i-1'])]), CLUSTER)).toEqual({ kind: 'instance', instanceId: 'i-1' });
  });

  it('a claim not in use on any node -> refused NotAttached, naming it', () => {
    const plan = groupInstance(members, disks([disk('vol-a', ['i-1']), disk('vol-b', []), disk('vol-c', ['i-1'])]), CLUSTER);
    expect(plan).toMatchObject({ kind: 'refuse', reason: 'NotAttached' });
    if (plan.kind === 'refuse') expect(plan.message).toContain('claim shop/b');
  });

  it("a volume gone, another cluster's, or an empty group -> refused", () => {
    expect(groupInstance(members, disks([disk('vol-a', ['i-1']), disk('vol-c', ['i-1'])]), CLUSTER)).toMatchObject({ reason: 'VolumeNotFound' });
    const foreign = { [TagKeys.cluster('other')]: 'owned', [TagKeys.ebsCluster]: 'true', [TagKeys.volhookCluster]: 'other' };
    expect(groupInstance(members, disks([disk('vol-a', ['i-1']), disk('vol-b', ['i-1'], foreign), disk('vol-c', ['i-1'])]), CLUSTER)).toMatchObject({ reason: 'NotOwned' });
    expect(groupInstance([], new Map(), CLUSTER)).toMatchObject({ reason: 'EmptyGroup' });
  });
});

describe('groupRequest', () => {
  it('the other data volumes on the node are excluded, the root left to ExcludeBootVolume', () => {
    const attached = [disk('vol-a', ['i-1']), disk('vol-b', ['i-1']), disk('vol-c', ['i-1']), disk('vol-other', ['i-1']), disk('vol-root', ['i-1'])];
    expect(groupRequest(members, node('i-1'), attached, 'vol-root', CLUSTER)).toEqual({ kind: 'create', instanceId: 'i-1', excludeDataVolumeIds: ['vol-other'] });
  });

  it("an instance not the cluster's node -> refused (control: the cluster's node above is accepted)", () => {
    expect(groupRequest(members, node('i-9', {}), [], undefined, CLUSTER)).toMatchObject({ kind: 'refuse', reason: 'NotClusterNode' });
    expect(groupRequest(members, undefined, [], undefined, CLUSTER)).toMatchObject({ kind: 'refuse', reason: 'NodeGone' });
  });

  it(`more than ${MAX_EXCLUDED_DATA_VOLUMES} other volumes on the node -> refused; exactly ${MAX_EXCLUDED_DATA_VOLUMES} -> the request`, () => {
    const others = (n: number) => Array.from({ length: n }, (_, i) => disk(`vol-x${String(i).padStart(2, '0')}`, ['i-1']));
    expect(groupRequest(members, node('i-1'), others(MAX_EXCLUDED_DATA_VOLUMES), undefined, CLUSTER)).toMatchObject({ kind: 'create' });
    expect(groupRequest(members, node('i-1'), others(MAX_EXCLUDED_DATA_VOLUMES + 1), undefined, CLUSTER)).toMatchObject({ kind: 'refuse', reason: 'TooManyOtherVolumes' });
  });
});
