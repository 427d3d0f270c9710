/**
 * A restore's VolumeSnapshot and a clone's source claim carry external-provisioner's
 * source-protection finalizer while the new volume may still be made from them: written before
 * CreateVolume / CopyVolumes, removed with the PV (or once the claim is deleted first, the
 * #1507 case), and kept while another claim of the namespace may still need it.
 */
import { describe, expect, it } from 'vitest';
import { claimMayMakeVolume, SourceFinalizers, sourceReleasable, type PersistentVolumeClaimItem, type Result, type Write } from '../../lib/contract/index.js';
import { CLAIM_PROTECTION, claim, claimItem, merge, ownedTags, persistentVolume, PV_NAME, reconcileOne, setup } from './fixtures.js';
import { readyContent, SNAPSHOT_UID, volumeSnapshot } from './snapshot-fixtures.js';

const SNAP = 'snap-0123456789abcdef0';
const SOURCE_VOL = 'vol-0aaaaaaaaaaaaaaa9';
const SOURCE_UID = '11111111-2222-4333-8444-555555555555';
const snapshotRef = { kind: 'VolumeSnapshot', name: 'nightly', namespace: 'shop', uid: SNAPSHOT_UID };
const sourceClaimRef = { kind: 'PersistentVolumeClaim', name: 'data-src', namespace: 'shop', uid: SOURCE_UID };

const restoreItem = (snapshotFinalizers: string[], override: unknown = {}): PersistentVolumeClaimItem =>
  claimItem(
    merge(
      {
        pvc: { spec: { dataSource: { kind: 'VolumeSnapshot', name: 'nightly', apiGroup: 'snapshot.storage.k8s.io' } } },
        source: { kind: 'VolumeSnapshot', snapshot: volumeSnapshot({ metadata: { finalizers: snapshotFinalizers } }), content: readyContent(SNAP) },
      },
      override,
    ),
  );

const cloneItem = (sourceFinalizers: string[], override: unknown = {}): PersistentVolumeClaimItem =>
  claimItem(
    merge(
      {
        pvc: { spec: { dataSource: { kind: 'PersistentVolumeClaim', name: 'data-src', apiGroup: null } } },
        source: {
          kind: 'PersistentVolumeClaim',
          claim: claim({ metadata: { name: 'data-src', uid: SOURCE_UID, finalizers: ['kubernetes.io/pvc-protection', ...sourceFinalizers] }, spec: { volumeName: 'pvc-src' }, status: { phase: 'Bound' } }),
          pv: persistentVolume({
            metadata: { name: 'pvc-src' },
            spec: {
              csi: { volumeHandle: SOURCE_VOL },
              nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: ['us-east-1b'] }] }] } },
            },
          }),
        },
        clusterZones: ['us-east-1a', 'us-east-1b'],
      },
      override,
    ),
  );

/** The finalizer writes of a result, in order, as `op kind/name finalizer`. */
const finalizerWrites = (result: Result) =>
  result.writes.flatMap((w: Write) => (w.op === 'addFinalizer' || w.op === 'removeFinalizer' ? [`${w.op} ${w.target.kind}/${w.target.name} ${w.finalizer}`] : []));
const ops = (result: Result) => result.writes.filter((w) => w.op !== 'createEvent').map((w) => ('target' in w ? `${w.op} ${w.target.kind}` : w.op));

describe('restore: the VolumeSnapshot protected while its volume is made', () => {
  it('claim protected, snapshot without the finalizer -> the finalizer on the snapshot first (uid-guarded), requeue, no EC2 call', async () => {
    const { ec2, ctx } = setup();
    ec2.addSnapshot({ snapshotId: SNAP, sizeGiB: 10 });
    const result = await reconcileOne(ctx, restoreItem([]));
    expect(result).toMatchObject({ outcome: 'requeue', requeueAfterSeconds: 0 });
    expect(result.writes).toEqual([{ op: 'addFinalizer', target: snapshotRef, finalizer: SourceFinalizers.snapshot }]);
    expect(ec2.mutations).toEqual([]);
  });

  it('claim not protected yet -> its own protection first, nothing on the snapshot yet (the claim must stay visible to let it go)', async () => {
    const { ec2, ctx } = setup();
    const result = await reconcileOne(ctx, restoreItem([], { pvc: { metadata: { finalizers: ['kubernetes.io/pvc-protection'] } } }));
    expect(finalizerWrites(result)).toEqual([`addFinalizer PersistentVolumeClaim/data ${CLAIM_PROTECTION}`]);
    expect(ec2.mutations).toEqual([]);
  });

  it('the snapshot protected (the control) -> CreateVolume; the PV written, then the snapshot let go, then the claim', async () => {
    const { ec2, ctx } = setup();
    ec2.createdState = 'available';
    ec2.addSnapshot({ snapshotId: SNAP, sizeGiB: 10 });
    const result = await reconcileOne(ctx, restoreItem([SourceFinalizers.snapshot]));
    expect(ec2.callsOf('createDisk')).toHaveLength(1);
    expect(result.outcome).toBe('done');
    expect(ops(result)).toEqual(['createPersistentVolume', 'removeFinalizer VolumeSnapshot', 'removeFinalizer PersistentVolumeClaim']);
    expect(result.writes).toContainEqual({ op: 'removeFinalizer', target: snapshotRef, finalizer: SourceFinalizers.snapshot });
  });

  it('another claim may still restore from it -> the PV written, the snapshot keeps its protection', async () => {
    const { ec2, ctx } = setup();
    ec2.createdState = 'available';
    ec2.addSnapshot({ snapshotId: SNAP, sizeGiB: 10 });
    const result = await reconcileOne(ctx, restoreItem([SourceFinalizers.snapshot], { source: { holders: ['data-2'] } }));
    expect(ops(result)).toEqual(['createPersistentVolume', 'removeFinalizer PersistentVolumeClaim']);
  });

  it('volume still creating -> requeue, the snapshot keeps its protection', async () => {
    const { ec2, ctx } = setup();
    ec2.addSnapshot({ snapshotId: SNAP, sizeGiB: 10 });
    const result = await reconcileOne(ctx, restoreItem([SourceFinalizers.snapshot]));
    expect(ec2.callsOf('createDisk')).toHaveLength(1);
    expect(result.outcome).toBe('requeue');
    expect(finalizerWrites(result)).toEqual([]);
  });

  it('the snapshot being deleted: without the protection -> refused SnapshotBeingDeleted, no EC2 call; with it (a restore begun before) -> CreateVolume', async () => {
    const deleting = { source: { snapshot: { metadata: { deletionTimestamp: '2026-12-01T00:00:00Z' } } } };
    const refused = setup();
    refused.ec2.addSnapshot({ snapshotId: SNAP, sizeGiB: 10 });
    const result = await reconcileOne(refused.ctx, restoreItem([], deleting));
    expect(result).toMatchObject({ outcome: 'failed', reason: 'SnapshotBeingDeleted' });
    expect(refused.ec2.calls).toEqual([]);

    const control = setup();
    control.ec2.addSnapshot({ snapshotId: SNAP, sizeGiB: 10 });
    await reconcileOne(control.ctx, restoreItem([SourceFinalizers.snapshot], deleting));
    expect(control.ec2.callsOf('createDisk')).toHaveLength(1);
  });

  it('PV exists already (its creation answered, the rest lost) -> the snapshot let go before the claim\'s protection', async () => {
    const { ec2, ctx } = setup();
    const result = await reconcileOne(ctx, restoreItem([SourceFinalizers.snapshot], { pvExists: true }));
    expect(finalizerWrites(result)).toEqual([`removeFinalizer VolumeSnapshot/nightly ${SourceFinalizers.snapshot}`, `removeFinalizer PersistentVolumeClaim/data ${CLAIM_PROTECTION}`]);
    expect(ec2.calls).toEqual([]);
  });

  it('bound, protection dropped, the snapshot still protected and no other claim holds it -> let go (a sibling finished in the same batch)', async () => {
    const { ec2, ctx } = setup();
    const bound = { pvc: { metadata: { finalizers: ['kubernetes.io/pvc-protection'] }, spec: { volumeName: PV_NAME }, status: { phase: 'Bound', capacity: { storage: '20Gi' } } }, pvExists: true };
    const result = await reconcileOne(ctx, restoreItem([SourceFinalizers.snapshot], bound));
    expect(result.outcome).toBe('done');
    expect(finalizerWrites(result)).toEqual([`removeFinalizer VolumeSnapshot/nightly ${SourceFinalizers.snapshot}`]);
    // The control: another claim still restoring from it -> nothing.
    const held = await reconcileOne(ctx, restoreItem([SourceFinalizers.snapshot], { ...bound, source: { holders: ['data-2'] } }));
    expect(finalizerWrites(held)).toEqual([]);
    expect(ec2.mutations).toEqual([]);
  });
});

describe('the claim deleted before its volume was made (external-provisioner #1507)', () => {
  const deletedClaim = { pvc: { metadata: { deletionTimestamp: '2026-12-01T00:00:00Z' } }, pvCheckedLive: true };

  it('no disk made -> the snapshot let go at once, first; the claim keeps its own protection until no create can land', async () => {
    const { ec2, ctx } = setup();
    const result = await reconcileOne(ctx, restoreItem([SourceFinalizers.snapshot], deletedClaim));
    expect(finalizerWrites(result)[0]).toBe(`removeFinalizer VolumeSnapshot/nightly ${SourceFinalizers.snapshot}`);
    expect(ec2.mutations).toEqual([]);
  });

  it('its disk made and being deleted -> the snapshot let go in the same answer as the DeleteVolume', async () => {
    const { ec2, ctx } = setup();
    ec2.addVolume({ volumeId: 'vol-0000000000000000a', state: 'available', tags: ownedTags() });
    const result = await reconcileOne(ctx, restoreItem([SourceFinalizers.snapshot], deletedClaim));
    expect(ec2.mutations.map((m) => m.verb)).toEqual(['deleteDisk']);
    expect(finalizerWrites(result)[0]).toBe(`removeFinalizer VolumeSnapshot/nightly ${SourceFinalizers.snapshot}`);
  });

  it('another claim still restoring from the snapshot -> kept', async () => {
    const { ctx } = setup();
    const result = await reconcileOne(ctx, restoreItem([SourceFinalizers.snapshot], { ...deletedClaim, source: { holders: ['data-2'] } }));
    expect(finalizerWrites(result).filter((w) => w.includes('VolumeSnapshot'))).toEqual([]);
  });

  it('a deleted claim that never protected itself (never acted) -> lets go only a protection nobody holds', async () => {
    const { ctx } = setup();
    const unprotected = merge(deletedClaim, { pvc: { metadata: { finalizers: ['kubernetes.io/pvc-protection'] } } });
    expect(finalizerWrites(await reconcileOne(ctx, restoreItem([SourceFinalizers.snapshot], unprotected)))).toEqual([`removeFinalizer VolumeSnapshot/nightly ${SourceFinalizers.snapshot}`]);
    expect(finalizerWrites(await reconcileOne(ctx, restoreItem([], unprotected)))).toEqual([]);
  });
});

describe('clone: the source claim protected while its copy is made', () => {
  it('source claim without cloning-protection -> the finalizer on it first, requeue, no CopyVolumes', async () => {
    const { ec2, ctx } = setup();
    ec2.addVolume({ volumeId: SOURCE_VOL, zone: 'us-east-1b', sizeGiB: 20 });
    const result = await reconcileOne(ctx, cloneItem([]));
    expect(result.writes).toEqual([{ op: 'addFinalizer', target: sourceClaimRef, finalizer: SourceFinalizers.claim }]);
    expect(ec2.mutations).toEqual([]);
  });

  it('protected, and being deleted (a clone begun before) -> CopyVolumes goes on; the PV written, then the source let go', async () => {
    const { ec2, ctx } = setup();
    ec2.createdState = 'available';
    ec2.addVolume({ volumeId: SOURCE_VOL, zone: 'us-east-1b', sizeGiB: 20 });
    const result = await reconcileOne(ctx, cloneItem([SourceFinalizers.claim], { source: { claim: { metadata: { deletionTimestamp: '2026-12-01T00:00:00Z' } } } }));
    expect(ec2.callsOf('copyDisk')).toHaveLength(1);
    expect(ops(result)).toEqual(['createPersistentVolume', 'removeFinalizer PersistentVolumeClaim', 'removeFinalizer PersistentVolumeClaim']);
    expect(finalizerWrites(result)).toEqual([`removeFinalizer PersistentVolumeClaim/data-src ${SourceFinalizers.claim}`, `removeFinalizer PersistentVolumeClaim/data ${CLAIM_PROTECTION}`]);
  });

  it('the source claim being deleted without the protection (nothing under way) -> refused SourceBeingDeleted, no EC2 call', async () => {
    const { ec2, ctx } = setup();
    const result = await reconcileOne(ctx, cloneItem([], { source: { claim: { metadata: { deletionTimestamp: '2026-12-01T00:00:00Z' } } } }));
    expect(result).toMatchObject({ outcome: 'failed', reason: 'SourceBeingDeleted' });
    expect(ec2.calls).toEqual([]);
  });
});

describe('the rules both sides apply (lib/contract/source-protection.ts)', () => {
  const pvc = (meta: object, spec: object = {}) => ({ metadata: { finalizers: [CLAIM_PROTECTION], ...meta }, spec });
  it('claimMayMakeVolume: live, unnamed volume, no PV -> true, begun (protected) or not; being deleted, a volume named or its PV there -> false', () => {
    expect(claimMayMakeVolume(pvc({}), false)).toBe(true);
    expect(claimMayMakeVolume(pvc({ finalizers: [] }), false)).toBe(true);
    expect(claimMayMakeVolume(pvc({ deletionTimestamp: '2026-12-01T00:00:00Z' }), false)).toBe(false);
    expect(claimMayMakeVolume(pvc({}, { volumeName: 'pvc-x' }), false)).toBe(false);
    expect(claimMayMakeVolume(pvc({}), true)).toBe(false);
  });
  it('sourceReleasable: only a source carrying the finalizer of its kind, nobody holding it', () => {
    const snapshot = { metadata: { finalizers: [SourceFinalizers.snapshot] } };
    expect(sourceReleasable(snapshot, 'VolumeSnapshot', [], false)).toBe(true);
    expect(sourceReleasable(snapshot, 'VolumeSnapshot', ['other'], false)).toBe(false);
    expect(sourceReleasable(snapshot, 'VolumeSnapshot', [], true)).toBe(false);
    expect(sourceReleasable(snapshot, 'PersistentVolumeClaim', [], false)).toBe(false);
    expect(sourceReleasable(null, 'VolumeSnapshot', [], false)).toBe(false);
  });
});
