/**
 * Volume tags from the claim's `tag.volhook.io/<key>` annotations (lib/reconcile/claim-tags.ts):
 * at CreateVolume and, for a bound claim whose annotations change, with CreateTags; only the
 * registration's `claimTagKeys`, everything else named in a Warning Event.
 */
import { describe, expect, it } from 'vitest';
import * as z from 'zod/mini';
import { claimTagsUnrecorded, type ItemInput, type Result } from '../../lib/contract/index.js';
import { TagKeys } from '../../lib/contract/tags.js';
import { isVolhookKey } from '../../lib/cli/release-marks.js';
import { isOurClaim } from '../../lib/forwarder/filter.js';
import { ClusterRegistrationSchema } from '../../lib/registry/registration.js';
import type { CreateDiskRequest } from '../../lib/ec2/types.js';
import { CLAIM_UID, CLUSTER, claimItem, DRIVER, merge, PV_NAME, reconcileOne, setup, storageClass } from './fixtures.js';
import { ec2Error } from './fake-gateway.js';

const VOLUME = 'vol-0000000000000000a';
const RECORD = 'volhook.io/claim-tags';
const allowed = { claimTagKeys: ['team', 'cost-center'] };

function boundClaim(annotations: Record<string, string>, classOverride: unknown = {}): ItemInput {
  return {
    kind: 'PersistentVolumeClaim',
    pvc: {
      metadata: { name: 'data', namespace: 'shop', uid: CLAIM_UID, resourceVersion: '42', annotations: { 'volume.kubernetes.io/storage-provisioner': DRIVER, ...annotations } },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '4Gi' } }, storageClassName: 'gp3', volumeName: PV_NAME },
      status: { phase: 'Bound', capacity: { storage: '4Gi' } },
    },
    storageClass: storageClass(classOverride),
    pvExists: true,
    pv: {
      metadata: { name: PV_NAME, uid: 'pv-uid-1', resourceVersion: '7', annotations: { 'pv.kubernetes.io/provisioned-by': DRIVER } },
      spec: {
        capacity: { storage: '4Gi' },
        accessModes: ['ReadWriteOnce'],
        volumeMode: 'Filesystem',
        persistentVolumeReclaimPolicy: 'Delete',
        storageClassName: 'gp3',
        claimRef: { kind: 'PersistentVolumeClaim', namespace: 'shop', name: 'data', uid: CLAIM_UID },
        csi: { driver: DRIVER, volumeHandle: VOLUME, fsType: 'ext4' },
      },
      status: { phase: 'Bound' },
    },
  } as ItemInput;
}

const events = (result: Result) => result.writes.flatMap((w) => (w.op === 'createEvent' ? [{ type: w.type, reason: w.reason, message: w.message }] : []));
const recordWrite = (result: Result) => result.writes.find((w) => w.op === 'setAnnotation' && w.key === RECORD);

function withVolume(ec2: ReturnType<typeof setup>['ec2'], tags: Record<string, string> = {}) {
  return ec2.addVolume({
    volumeId: VOLUME,
    sizeGiB: 4,
    tags: { [TagKeys.cluster(CLUSTER)]: 'owned', [TagKeys.ebsCluster]: 'true', [TagKeys.volhookCluster]: CLUSTER, [TagKeys.csiVolumeName]: PV_NAME, ...tags },
  });
}

describe('claim tags at CreateVolume', () => {
  it('allowed key -> tag on the new volume; a key off the list and a reserved key are not', async () => {
    const { ec2, ctx } = setup(allowed);
    const item = claimItem({
      pvc: { metadata: { annotations: { 'tag.volhook.io/team': 'storage', 'tag.volhook.io/owner': 'bob', 'tag.volhook.io/kubernetes.io-x': 'y' } } },
    });
    await reconcileOne(ctx, item);
    const [call] = ec2.callsOf('createDisk');
    const tags = (call!.args[0] as CreateDiskRequest).tags;
    expect(tags.team).toBe('storage');
    expect(tags).not.toHaveProperty('owner');
    expect(tags).not.toHaveProperty('kubernetes.io-x');
  });

  it('the class sets the same key -> the class wins', async () => {
    const { ec2, ctx } = setup(allowed);
    const item = claimItem({
      pvc: { metadata: { annotations: { 'tag.volhook.io/team': 'storage' } } },
      storageClass: storageClass({ parameters: { type: 'gp3', tagSpecification_1: 'team=platform' } }),
    });
    await reconcileOne(ctx, item);
    expect((ec2.callsOf('createDisk')[0]!.args[0] as CreateDiskRequest).tags.team).toBe('platform');
  });

  it('no claimTagKeys in the registration -> no claim tag applied (control: the same claim with the key allowed is tagged above)', async () => {
    const { ec2, ctx } = setup();
    await reconcileOne(ctx, claimItem({ pvc: { metadata: { annotations: { 'tag.volhook.io/team': 'storage' } } } }));
    expect((ec2.callsOf('createDisk')[0]!.args[0] as CreateDiskRequest).tags).not.toHaveProperty('team');
  });
});

describe('claim tags of a bound claim', () => {
  it('first look after provisioning: the volume has the tag -> no CreateTags, the record, a Warning naming the key off the list and the reserved key', async () => {
    const { ec2, ctx } = setup(allowed);
    withVolume(ec2, { team: 'storage' });
    const result = await reconcileOne(ctx, boundClaim({ 'tag.volhook.io/team': 'storage', 'tag.volhook.io/owner': 'bob', 'tag.volhook.io/kubernetes.io-x': 'y' }));
    expect(result.outcome).toBe('done');
    expect(ec2.callsOf('tagDisk')).toHaveLength(0);
    expect(recordWrite(result)).toMatchObject({ value: JSON.stringify({ 'kubernetes.io-x': 'y', owner: 'bob', team: 'storage' }), target: { kind: 'PersistentVolumeClaim', uid: CLAIM_UID } });
    const [warning] = events(result);
    expect(warning).toMatchObject({ type: 'Warning', reason: 'ClaimTagsIgnored' });
    expect(warning!.message).toContain(`"owner" (not on the cluster's claimTagKeys)`);
    expect(warning!.message).toMatch(/"kubernetes\.io-x" \(reserved/);
    expect(warning!.message).not.toContain('"team"');
  });

  it('annotation changed later -> one CreateTags with the new value, a Normal Event, the new record', async () => {
    const { ec2, ctx } = setup(allowed);
    withVolume(ec2, { team: 'storage' });
    const result = await reconcileOne(
      ctx,
      boundClaim({ 'tag.volhook.io/team': 'platform', 'tag.volhook.io/cost-center': '42', [RECORD]: JSON.stringify({ team: 'storage' }) }),
    );
    expect(result.outcome).toBe('done');
    expect(ec2.mutations).toEqual([{ verb: 'tagDisk', args: [VOLUME, { 'cost-center': '42', team: 'platform' }] }]);
    expect(ec2.volumes.get(VOLUME)!.tags).toMatchObject({ team: 'platform', 'cost-center': '42' });
    expect(events(result)).toEqual([{ type: 'Normal', reason: 'ClaimTagsApplied', message: `tagged volume ${VOLUME} with cost-center=42, team=platform` }]);
    expect(recordWrite(result)).toMatchObject({ value: JSON.stringify({ 'cost-center': '42', team: 'platform' }) });
  });

  it('a key off the list added later -> no CreateTags, a Warning, the record', async () => {
    const { ec2, ctx } = setup(allowed);
    withVolume(ec2, { team: 'storage' });
    const result = await reconcileOne(ctx, boundClaim({ 'tag.volhook.io/team': 'storage', 'tag.volhook.io/owner': 'bob', [RECORD]: JSON.stringify({ team: 'storage' }) }));
    expect(ec2.callsOf('tagDisk')).toHaveLength(0);
    expect(ec2.volumes.get(VOLUME)!.tags).not.toHaveProperty('owner');
    expect(events(result).map((e) => e.reason)).toEqual(['ClaimTagsIgnored']);
    expect(recordWrite(result)).toBeDefined();
  });

  it('CreateTags denied (IAM) -> a Warning on the claim, no record, so it is tried again', async () => {
    const { ec2, ctx } = setup(allowed);
    withVolume(ec2);
    ec2.fail('tagDisk', ec2Error('unauthorized', 'UnauthorizedOperation', 'You are not authorized to perform this operation.'));
    const result = await reconcileOne(ctx, boundClaim({ 'tag.volhook.io/team': 'storage' }));
    expect(result.outcome).toBe('failed');
    expect(events(result)).toEqual([expect.objectContaining({ type: 'Warning', reason: 'ClaimTagsFailed' })]);
    expect(events(result)[0]!.message).toContain(`CreateTags of ${VOLUME} refused`);
    expect(recordWrite(result)).toBeUndefined();
  });

  it('a volume of another cluster -> refused, no CreateTags', async () => {
    const { ec2, ctx } = setup(allowed);
    ec2.addVolume({ volumeId: VOLUME, tags: { [TagKeys.cluster('other')]: 'owned', [TagKeys.ebsCluster]: 'true', [TagKeys.volhookCluster]: 'other' } });
    const result = await reconcileOne(ctx, boundClaim({ 'tag.volhook.io/team': 'storage' }));
    expect(result.outcome).toBe('failed');
    expect(ec2.callsOf('tagDisk')).toHaveLength(0);
    expect(events(result)[0]).toMatchObject({ type: 'Warning', reason: 'ClaimTagsFailed' });
  });

  it('the record matches the annotations -> nothing is done (the forwarder does not send it either)', async () => {
    const { ec2, ctx } = setup(allowed);
    withVolume(ec2);
    const item = boundClaim({ 'tag.volhook.io/team': 'storage', [RECORD]: JSON.stringify({ team: 'storage' }) });
    const result = await reconcileOne(ctx, item);
    expect(result).toMatchObject({ outcome: 'done', writes: [] });
    expect(ec2.callsOf('getDisk')).toHaveLength(0);
  });
});

describe('the rule both sides use', () => {
  const pvc = (annotations: Record<string, string>) => ({ metadata: { annotations } });
  it('claimTagsUnrecorded: a request without record, or one that differs from it; not a claim asking none', () => {
    expect(claimTagsUnrecorded(pvc({}))).toBe(false);
    expect(claimTagsUnrecorded(pvc({ 'tag.volhook.io/team': 'a' }))).toBe(true);
    expect(claimTagsUnrecorded(pvc({ 'tag.volhook.io/team': 'a', [RECORD]: '{"team":"a"}' }))).toBe(false);
    expect(claimTagsUnrecorded(pvc({ 'tag.volhook.io/team': 'b', [RECORD]: '{"team":"a"}' }))).toBe(true);
    // An annotation removed: the record is brought up to date (the tag itself stays).
    expect(claimTagsUnrecorded(pvc({ [RECORD]: '{"team":"a"}' }))).toBe(true);
  });

  it('the forwarder sends a bound claim whose tag annotations changed, and not once recorded', () => {
    const item = boundClaim({ 'tag.volhook.io/team': 'b', [RECORD]: '{"team":"a"}' }) as Extract<ItemInput, { kind: 'PersistentVolumeClaim' }>;
    const ownership = { provisioner: DRIVER, driver: DRIVER };
    const pvOf = () => item.pv as never;
    expect(isOurClaim(item.pvc as never, ownership, pvOf)).toBe(true);
    const recorded = merge(item.pvc, { metadata: { annotations: { [RECORD]: '{"team":"b"}' } } });
    expect(isOurClaim(recorded as never, ownership, pvOf)).toBe(false);
  });

  it('the registration refuses a reserved key in claimTagKeys (control: an ordinary key is accepted)', () => {
    const base = { clusterId: CLUSTER, secrets: ['a-secret-of-at-least-24-bytes'], region: 'us-east-1' };
    expect(ClusterRegistrationSchema.parse({ ...base, claimTagKeys: ['team'] }).claimTagKeys).toEqual(['team']);
    const refused = ClusterRegistrationSchema.safeParse({ ...base, claimTagKeys: ['team', 'Kubernetes.io/cluster/x'] });
    expect(refused.success).toBe(false);
    expect(z.prettifyError(refused.error!)).toContain('is a reserved tag key');
  });

  it('cluster release removes the record but not the claim owner\'s tag annotations', () => {
    expect(isVolhookKey(RECORD)).toBe(true);
    expect(isVolhookKey('tag.volhook.io/team')).toBe(false);
    expect(isVolhookKey('other.volhook.io/x')).toBe(true);
  });
});
