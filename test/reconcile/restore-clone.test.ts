import { describe, expect, it } from 'vitest';
import { SourceFinalizers, type PersistentVolumeClaimItem, type Result } from '../../lib/contract/index.js';
import { Ec2Error, type CopyDiskRequest, type Disk } from '../../lib/ec2/types.js';
import { FakeGateway } from './fake-gateway.js';
import { CLUSTER, PV_NAME, claim, claimItem, merge, node, persistentVolume, reconcileOne, setup, storageClass } from './fixtures.js';
import { CONTENT_NAME, readyContent, volumeSnapshot } from './snapshot-fixtures.js';

const SNAP = 'snap-0123456789abcdef0';
const SOURCE_VOL = 'vol-0aaaaaaaaaaaaaaa9';
const events = (result: Result) => result.writes.flatMap((w) => (w.op === 'createEvent' ? [`${w.type} ${w.reason}: ${w.message}`] : []));
/** external-provisioner's Event before each Provision call, the failed ones too. */
const STARTED = 'Normal Provisioning: External provisioner is provisioning volume for claim "shop/data"';
const createdPv = (result: Result) => result.writes.find((w) => w.op === 'createPersistentVolume');

const restoreItem = (override: unknown = {}): PersistentVolumeClaimItem =>
  claimItem(
    merge(
      {
        pvc: { spec: { dataSource: { kind: 'VolumeSnapshot', name: 'nightly', apiGroup: 'snapshot.storage.k8s.io' } } },
        // Its protection on already: the restore goes on to EC2 (./source-protection.test.ts: before that).
        source: { kind: 'VolumeSnapshot', snapshot: volumeSnapshot({ metadata: { finalizers: [SourceFinalizers.snapshot] } }), content: readyContent(SNAP) },
      },
      override,
    ),
  );

/** The source claim `data-src`, bound to its PV of ours in us-east-1b, its cloning protection on already. */
const sourceClaim = (override: unknown = {}) =>
  claim(
    merge(
      { metadata: { name: 'data-src', uid: '11111111-2222-4333-8444-555555555555', finalizers: ['kubernetes.io/pvc-protection', SourceFinalizers.claim] }, spec: { volumeName: 'pvc-src' }, status: { phase: 'Bound' } },
      override,
    ),
  );
const sourcePv = (override: unknown = {}) =>
  persistentVolume(
    merge(
      {
        metadata: { name: 'pvc-src' },
        spec: {
          csi: { volumeHandle: SOURCE_VOL },
          nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: ['us-east-1b'] }] }] } },
        },
      },
      override,
    ),
  );
const cloneItem = (override: unknown = {}): PersistentVolumeClaimItem =>
  claimItem(
    merge(
      {
        pvc: { spec: { dataSource: { kind: 'PersistentVolumeClaim', name: 'data-src', apiGroup: null } } },
        source: { kind: 'PersistentVolumeClaim', claim: sourceClaim(), pv: sourcePv() },
        clusterZones: ['us-east-1a', 'us-east-1b', 'us-east-1c'],
      },
      override,
    ),
  );

describe('restore from a VolumeSnapshot', () => {
  it('a ready snapshot of ours -> CreateVolume with its SnapshotId at the requested size, then the PV', async () => {
    const { ec2, ctx } = setup();
    ec2.createdState = 'available';
    ec2.addSnapshot({ snapshotId: SNAP, sizeGiB: 10 });
    const result = await reconcileOne(ctx, restoreItem());
    expect(ec2.callsOf('createDisk')).toHaveLength(1);
    expect(ec2.callsOf('createDisk')[0]!.args[0]).toMatchObject({ name: PV_NAME, snapshotId: SNAP, sizeGiB: 20 });
    expect(ec2.callsOf('copyDisk')).toEqual([]);
    const [disk] = [...ec2.volumes.values()];
    expect(disk).toMatchObject({ snapshotId: SNAP, sizeGiB: 20 });
    expect(createdPv(result)).toBeDefined();
    expect(result).toMatchObject({ outcome: 'done' });
  });

  it("a member of a group snapshot (its content the group's: no class, the group handle annotation) -> CreateVolume from each member's own snapshot", async () => {
    const { ec2, ctx } = setup();
    ec2.createdState = 'available';
    ec2.snapshotState = 'completed';
    ec2.addInstance({ instanceId: 'i-1' });
    const volumes = [SOURCE_VOL, 'vol-0aaaaaaaaaaaaaab0'];
    for (const volumeId of volumes) ec2.addVolume({ volumeId, state: 'in-use', attachments: [{ instanceId: 'i-1', device: '/dev/xvdba', state: 'attached' }] });
    const snapshots = await ec2.createSnapshots({ name: 'groupsnapcontent-1', instanceId: 'i-1', excludeDataVolumeIds: [], tags: {} });
    expect(snapshots).toHaveLength(2);
    for (const [n, s] of snapshots.entries()) {
      const memberContent = readyContent(s.snapshotId, {
        metadata: { name: `snapcontent-m${n}`, annotations: { 'groupsnapshot.storage.k8s.io/volumeGroupSnapshotHandle': 'groupsnapcontent-1' } },
        spec: { source: { volumeHandle: s.volumeId }, volumeSnapshotClassName: undefined },
      });
      const claimUid = `6f1c2b9e-3d4a-4c5b-9e8f-0a1b2c3d4e6${n}`;
      const result = await reconcileOne(
        ctx,
        restoreItem({ pvc: { metadata: { uid: claimUid } }, source: { snapshot: volumeSnapshot({ status: { boundVolumeSnapshotContentName: `snapcontent-m${n}` } }), content: memberContent } }),
      );
      expect(result).toMatchObject({ outcome: 'done' });
      expect(ec2.callsOf('createDisk')[n]!.args[0]).toMatchObject({ name: `pvc-${claimUid}`, snapshotId: s.snapshotId });
    }
    expect(new Set([...ec2.volumes.values()].flatMap((v) => (v.snapshotId ? [v.snapshotId] : [])))).toEqual(new Set(snapshots.map((s) => s.snapshotId)));
  });

  it('volumeInitializationRate -> passed to CreateVolume for a restore', async () => {
    const { ec2, ctx } = setup();
    ec2.addSnapshot({ snapshotId: SNAP, sizeGiB: 10 });
    await reconcileOne(ctx, restoreItem({ storageClass: storageClass({ parameters: { volumeInitializationRate: '200' } }) }));
    expect(ec2.callsOf('createDisk')[0]!.args[0]).toMatchObject({ snapshotId: SNAP, initializationRate: 200 });
  });

  it('the snapshot not ready yet -> requeue with a Warning, zero EC2 calls', async () => {
    const { ec2, ctx } = setup();
    const result = await reconcileOne(ctx, restoreItem({ source: { snapshot: volumeSnapshot({ status: { readyToUse: false } }), content: readyContent(SNAP, { status: { readyToUse: false } }) } }));
    expect(result).toMatchObject({ outcome: 'requeue', message: expect.stringContaining('not ready to use yet') });
    expect(events(result)).toEqual([STARTED, expect.stringContaining('Warning ProvisioningFailed')]);
    expect(ec2.calls).toEqual([]);
  });

  it('EC2 still copying the snapshot (pending) -> requeue, no CreateVolume', async () => {
    const { ec2, ctx } = setup();
    ec2.addSnapshot({ snapshotId: SNAP, state: 'pending' });
    const result = await reconcileOne(ctx, restoreItem());
    expect(result).toMatchObject({ outcome: 'requeue' });
    expect(ec2.callsOf('createDisk')).toEqual([]);
  });

  it.each([
    ['the snapshot larger than the request', { pvc: { spec: { resources: { requests: { storage: '5Gi' } } } } }, (e: FakeGateway) => e.addSnapshot({ snapshotId: SNAP, sizeGiB: 10 }), 'SnapshotTooLarge'],
    ['the snapshot gone from EC2', {}, () => undefined, 'SnapshotNotFound'],
    ["another cluster's snapshot", {}, (e: FakeGateway) => e.addSnapshot({ snapshotId: SNAP, tags: { 'kubernetes.io/cluster/other': 'owned' } }), 'SnapshotNotOwned'],
    ["the cluster's snapshot without ebs.csi.aws.com/cluster=true (IAM would refuse the restore)", {}, (e: FakeGateway) => e.addSnapshot({ snapshotId: SNAP, tags: { [`kubernetes.io/cluster/${e.clusterId}`]: 'owned' } }), 'NotAdopted'],
    ['a content of another driver', { source: { content: readyContent(SNAP, { spec: { driver: 'other.csi.example.com' } }) } }, (e: FakeGateway) => e.addSnapshot({ snapshotId: SNAP }), 'SnapshotNotOurs'],
    ['a VolumeSnapshot that does not exist', { source: { snapshot: null, content: null } }, () => undefined, 'SnapshotNotFound'],
  ])('%s -> ProvisioningFailed with the reason, no disk', async (_name, override, prepare, reason) => {
    const { ec2, ctx } = setup();
    prepare(ec2);
    const result = await reconcileOne(ctx, restoreItem(override));
    expect(result).toMatchObject({ outcome: 'failed', reason });
    expect(events(result)).toEqual([STARTED, expect.stringContaining('Warning ProvisioningFailed')]);
    expect(ec2.callsOf('createDisk')).toEqual([]);
    expect(ec2.volumes.size).toBe(0);
  });
});

/** A gateway whose CopyVolumes acts and loses its answer, once. */
class LostCopy extends FakeGateway {
  lost = 1;
  override async copyDisk(request: CopyDiskRequest): Promise<Disk> {
    const made = await super.copyDisk(request);
    if (this.lost-- > 0) throw new Ec2Error('transient', 'ECONNRESET', 'EC2 CopyVolumes: ECONNRESET', 'CopyVolumes');
    return made;
  }
}

describe('clone of a claim', () => {
  it('a bound source claim of ours -> CopyVolumes once in its zone; the PV has the source zone affinity', async () => {
    const { ec2, ctx } = setup();
    ec2.createdState = 'available';
    ec2.addVolume({ volumeId: SOURCE_VOL, zone: 'us-east-1b', sizeGiB: 20 });
    const result = await reconcileOne(ctx, cloneItem());
    expect(ec2.callsOf('copyDisk')).toHaveLength(1);
    expect(ec2.callsOf('copyDisk')[0]!.args[0]).toMatchObject({ name: PV_NAME, sourceVolumeId: SOURCE_VOL, sizeGiB: 20 });
    expect(ec2.callsOf('createDisk')).toEqual([]);
    const pv = createdPv(result);
    expect(pv && pv.op === 'createPersistentVolume' && pv.pv.spec.nodeAffinity?.required.nodeSelectorTerms[0]?.matchExpressions?.[0]?.values).toEqual(['us-east-1b']);
  });

  // A static PV can name any volume of the account: the source is described and must be the
  // cluster's own, adopted disk before CopyVolumes copies it into a disk the cluster owns.
  const staticSource = { source: { pv: sourcePv({ metadata: { annotations: undefined, finalizers: ['kubernetes.io/pv-protection'] } }) } };
  it.each<[string, Record<string, string>, string | undefined]>([
    ["the cluster's own disk (the control)", { [`kubernetes.io/cluster/${CLUSTER}`]: 'owned', 'ebs.csi.aws.com/cluster': 'true', 'volhook.io/cluster': CLUSTER }, undefined],
    ["another cluster's disk", { 'kubernetes.io/cluster/beta': 'owned', 'ebs.csi.aws.com/cluster': 'true', CSIVolumeName: 'pvc-theirs' }, `is not owned by cluster "${CLUSTER}"`],
    ['a disk of no cluster (any volume of the account)', {}, `is not owned by cluster "${CLUSTER}"`],
    ["a disk of this cluster's, not adopted", { [`kubernetes.io/cluster/${CLUSTER}`]: 'owned' }, `npm run cluster -- adopt ${CLUSTER}`],
  ])('a static source PV naming %s -> described first; CopyVolumes only of an owned, adopted disk, else failed SourceNotOwned with a Warning naming it', async (_name, tags, refusal) => {
    const { ec2, ctx } = setup();
    ec2.createdState = 'available';
    ec2.addVolume({ volumeId: SOURCE_VOL, zone: 'us-east-1b', sizeGiB: 20, tags });
    const result = await reconcileOne(ctx, cloneItem(staticSource));
    const verbs = ec2.calls.map((c) => c.verb);
    expect(ec2.callsOf('getDisk').map((c) => c.args[0])).toEqual([SOURCE_VOL]);
    if (!refusal) {
      expect(verbs.indexOf('getDisk')).toBeLessThan(verbs.indexOf('copyDisk'));
      expect(ec2.callsOf('copyDisk')).toHaveLength(1);
      expect(result).toMatchObject({ outcome: 'done' });
      return;
    }
    expect(result).toMatchObject({ outcome: 'failed', reason: 'SourceNotOwned', message: expect.stringContaining(SOURCE_VOL) });
    expect(result).toMatchObject({ message: expect.stringContaining(refusal) });
    expect(events(result)).toEqual([STARTED, expect.stringMatching(/^Warning ProvisioningFailed: /)]);
    expect(events(result)[1]).toContain(SOURCE_VOL);
    expect(events(result)[1]).toContain('PersistentVolumeClaim "data-src"');
    expect(ec2.mutations).toEqual([]);
    expect(ec2.volumes.size).toBe(1);
  });

  it('a source disk gone from EC2 (or being deleted) -> failed SourceNotFound, no CopyVolumes', async () => {
    for (const state of [undefined, 'deleting'] as const) {
      const { ec2, ctx } = setup();
      if (state) ec2.addVolume({ volumeId: SOURCE_VOL, zone: 'us-east-1b', state });
      const result = await reconcileOne(ctx, cloneItem());
      expect(result).toMatchObject({ outcome: 'failed', reason: 'SourceNotFound', message: expect.stringContaining(SOURCE_VOL) });
      expect(ec2.mutations).toEqual([]);
    }
  });

  it('the copy failed and is gone, the source now a foreign disk -> the next copy is refused too (the source is described again)', async () => {
    const { ec2, ctx } = setup();
    ec2.addVolume({ volumeId: 'vol-0000000000000c0de', zone: 'us-east-1b', state: 'deleted', tags: { CSIVolumeName: PV_NAME, [`kubernetes.io/cluster/${CLUSTER}`]: 'owned', 'ebs.csi.aws.com/cluster': 'true' } });
    ec2.addVolume({ volumeId: SOURCE_VOL, zone: 'us-east-1b', sizeGiB: 20, tags: { 'kubernetes.io/cluster/beta': 'owned' } });
    const result = await reconcileOne(ctx, cloneItem());
    expect(result).toMatchObject({ outcome: 'failed', reason: 'SourceNotOwned' });
    expect(ec2.mutations).toEqual([]);
  });

  it('lost answer after CopyVolumes -> the replay finds the copy by its name tag: exactly one', async () => {
    const { ctx } = setup();
    const ec2 = new LostCopy(CLUSTER);
    ec2.addVolume({ volumeId: SOURCE_VOL, zone: 'us-east-1b', sizeGiB: 20 });
    expect(await reconcileOne({ ...ctx, ec2 }, cloneItem())).toMatchObject({ outcome: 'requeue' });
    ec2.settle();
    const replay = await reconcileOne({ ...ctx, ec2 }, cloneItem());
    expect(ec2.volumes.size).toBe(2); // the source and one copy
    expect(replay).toMatchObject({ outcome: 'done' });
  });

  it('WaitForFirstConsumer, the selected node in another zone than the source -> ProvisioningFailed naming both zones, no copy', async () => {
    const { ec2, ctx } = setup();
    const item = cloneItem({
      storageClass: storageClass({ volumeBindingMode: 'WaitForFirstConsumer' }),
      pvc: { metadata: { annotations: { 'volume.kubernetes.io/selected-node': 'ip-10-0-1-23.ec2.internal' } } },
      selectedNode: node(),
    });
    const result = await reconcileOne(ctx, item);
    expect(result).toMatchObject({ outcome: 'failed', message: expect.stringContaining('us-east-1b') });
    expect(result).toMatchObject({ message: expect.stringContaining('us-east-1a') });
    expect(ec2.mutations).toEqual([]);
  });

  it('the registration does not allow the source zone -> ProvisioningFailed, no copy', async () => {
    const { ec2, ctx } = setup({ allowedZones: ['us-east-1a'] });
    const result = await reconcileOne(ctx, cloneItem());
    expect(result).toMatchObject({ outcome: 'failed', message: expect.stringContaining('source volume is in zone us-east-1b') });
    expect(ec2.mutations).toEqual([]);
  });

  it.each([
    ['the source not bound yet', { source: { claim: sourceClaim({ spec: { volumeName: null }, status: { phase: 'Pending' } }), pv: null } }, 'requeue', undefined],
    ['the source of another class', { source: { claim: sourceClaim({ spec: { storageClassName: 'other' } }) } }, 'failed', 'StorageClassMismatch'],
    ['the source larger than the request', { source: { pv: sourcePv({ spec: { capacity: { storage: '50Gi' } } }) } }, 'failed', 'SourceTooLarge'],
    ['the source PV of another driver', { source: { pv: sourcePv({ spec: { csi: { driver: 'other.csi.example.com' } } }) } }, 'failed', 'SourceNotOurs'],
  ])('%s -> %s, no EC2 call', async (_name, override, outcome, reason) => {
    const { ec2, ctx } = setup();
    const result = await reconcileOne(ctx, cloneItem(override));
    expect(result).toMatchObject({ outcome, ...(reason && { reason }) });
    expect(ec2.calls).toEqual([]);
  });
});

describe('never a blank disk where data was asked for', () => {
  const sources: [string, unknown][] = [
    ['VolumeSnapshot', { kind: 'VolumeSnapshot', name: 'nightly', apiGroup: 'snapshot.storage.k8s.io' }],
    ['PersistentVolumeClaim', { kind: 'PersistentVolumeClaim', name: 'data-src' }],
    ['a populator', { kind: 'VolumePopulator', name: 'seed', apiGroup: 'populator.example.com' }],
    ['an unknown core kind', { kind: 'ConfigMap', name: 'seed' }],
    ['a VolumeSnapshot in another namespace', { kind: 'VolumeSnapshot', name: 'nightly', apiGroup: 'snapshot.storage.k8s.io', namespace: 'other' }],
  ];
  const contexts = [
    undefined,
    { kind: 'VolumeSnapshot', snapshot: volumeSnapshot(), content: readyContent(SNAP) },
    { kind: 'PersistentVolumeClaim', claim: sourceClaim(), pv: sourcePv() },
  ];
  for (const [name, source] of sources) {
    for (const field of ['dataSource', 'dataSourceRef']) {
      it(`${field} ${name} -> no CreateVolume without a SnapshotId; CopyVolumes only for a claim; a Warning naming anything else`, async () => {
        for (const context of contexts) {
          const { ec2, ctx } = setup();
          ec2.createdState = 'available';
          ec2.addSnapshot({ snapshotId: SNAP, sizeGiB: 10 });
          ec2.addVolume({ volumeId: SOURCE_VOL, zone: 'us-east-1b', sizeGiB: 20 });
          const item = cloneItem({ pvc: { spec: { dataSource: null, [field]: source } }, source: context ?? undefined });
          const result = await reconcileOne(ctx, item);
          for (const call of ec2.callsOf('createDisk')) expect((call.args[0] as { snapshotId?: string }).snapshotId).toBe(SNAP);
          if (name !== 'PersistentVolumeClaim') expect(ec2.callsOf('copyDisk')).toEqual([]);
          if (name !== 'VolumeSnapshot') expect(ec2.callsOf('createDisk')).toEqual([]);
          if (!['VolumeSnapshot', 'PersistentVolumeClaim'].includes(name)) {
            expect(result).toMatchObject({ outcome: 'failed', reason: 'DataSourceNotSupported' });
            expect(events(result)).toEqual([STARTED, expect.stringContaining((source as { kind: string }).kind)]);
            expect(ec2.calls).toEqual([]);
          }
        }
      });
    }
  }
});
