/**
 * A disk of the cluster that is not adopted — tagged `kubernetes.io/cluster/<id>=owned` but
 * not `ebs.csi.aws.com/cluster=true`, as a static PV's disk made by hand or by another tool —
 * is one the function's IAM role may not change. Every path that would change it refuses it
 * before any EC2 mutation, with a message that names `npm run cluster -- adopt`; the same item
 * over the same disk adopted goes through (the control of each row).
 */
import { describe, expect, it } from 'vitest';
import type { ItemInput, Result } from '../../lib/contract/index.js';
import { TagKeys } from '../../lib/contract/tags.js';
import type { Disk } from '../../lib/ec2/types.js';
import { isAdoptedDisk } from '../../lib/reconcile/tags.js';
import type { FakeGateway, Verb } from './fake-gateway.js';
import {
  ATTACHER_FINALIZER,
  CLAIM_UID,
  CLUSTER,
  INSTANCE_ID,
  claimItem,
  ownedTags,
  persistentVolume,
  pvItem,
  reconcileOne,
  setup,
  storageClass,
  vaItem,
  volumeAttachment,
} from './fixtures.js';
import { contentItem, SOURCE_VOLUME } from './snapshot-fixtures.js';

const VOL = 'vol-0123456789abcdef0';
const { [TagKeys.ebsCluster]: _adoption, ...notAdopted } = ownedTags();

const events = (result: Result) => result.writes.flatMap((w) => (w.op === 'createEvent' ? [{ kind: w.involvedObject.kind, type: w.type, reason: w.reason, message: w.message }] : []));

interface Row {
  /** What the item asks of the disk. */
  item: ItemInput;
  /** The disk as EC2 has it, its tags given by the row. */
  disk: (tags: Record<string, string>) => Partial<Disk> & Pick<Disk, 'volumeId'>;
  /** The mutation the adopted disk gets. */
  mutation: Verb;
  /** The Warning the refusal records, on which object (none where no object is left to hold one). */
  warning?: { kind: string; reason: string };
}

const rows: Record<string, Row> = {
  'attach (a VolumeAttachment)': {
    item: vaItem({
      volumeAttachment: volumeAttachment({ metadata: { finalizers: [ATTACHER_FINALIZER] } }),
      pv: persistentVolume({ metadata: { finalizers: ['kubernetes.io/pv-protection', ATTACHER_FINALIZER] } }),
    }),
    disk: (tags) => ({ volumeId: VOL, tags }),
    mutation: 'attachDisk',
    warning: { kind: 'PersistentVolume', reason: 'FailedAttachVolume' },
  },
  'detach (a VolumeAttachment being deleted)': {
    item: vaItem({ volumeAttachment: volumeAttachment({ metadata: { deletionTimestamp: '2025-03-01T11:59:00Z', finalizers: [ATTACHER_FINALIZER] }, status: { attached: true } }) }),
    disk: (tags) => ({ volumeId: VOL, state: 'in-use', tags, attachments: [{ instanceId: INSTANCE_ID, device: '/dev/xvdaa', state: 'attached' }] }),
    mutation: 'detachDisk',
    warning: { kind: 'PersistentVolume', reason: 'FailedDetachVolume' },
  },
  'delete (a Released PV, Delete)': {
    item: pvItem({ pv: { status: { phase: 'Released' } } }),
    disk: (tags) => ({ volumeId: VOL, tags }),
    mutation: 'deleteDisk',
    warning: { kind: 'PersistentVolume', reason: 'VolumeFailedDelete' },
  },
  'delete (a claim deleted before its PV)': {
    item: { kind: 'PersistentVolumeClaimDeleted', uid: CLAIM_UID, namespace: 'shop', name: 'data', pvExists: false, pvCheckedLive: true },
    disk: (tags) => ({ volumeId: VOL, tags }),
    mutation: 'deleteDisk',
  },
  'resize (a bound claim asking for more)': {
    item: claimItem({
      pvc: { metadata: { finalizers: ['kubernetes.io/pvc-protection'] }, spec: { volumeName: persistentVolume().metadata.name, resources: { requests: { storage: '30Gi' } } }, status: { phase: 'Bound', capacity: { storage: '20Gi' } } },
      storageClass: storageClass({ allowVolumeExpansion: true }),
      pvExists: true,
      pv: persistentVolume(),
    }),
    disk: (tags) => ({ volumeId: VOL, sizeGiB: 20, tags }),
    mutation: 'modifyDisk',
    warning: { kind: 'PersistentVolumeClaim', reason: 'VolumeResizeFailed' },
  },
  'snapshot (a VolumeSnapshotContent of the disk)': {
    item: contentItem(),
    disk: (tags) => ({ volumeId: SOURCE_VOLUME, sizeGiB: 10, tags }),
    mutation: 'createSnapshot',
    warning: { kind: 'VolumeSnapshotContent', reason: 'SnapshotCreationFailed' },
  },
};

function arrange(ec2: FakeGateway, row: Row, tags: Record<string, string>): void {
  ec2.addVolume(row.disk(tags));
  ec2.addInstance({ instanceId: INSTANCE_ID, devicesInUse: ['/dev/xvda', '/dev/xvdaa'] });
}

describe('a disk of the cluster that is not adopted', () => {
  it('the rule: owned and tagged ebs.csi.aws.com/cluster=true, nothing less', () => {
    const disk = (tags: Record<string, string>): Disk => ({ volumeId: VOL, zone: 'us-east-1a', sizeGiB: 1, state: 'available', type: 'gp3', encrypted: false, multiAttach: false, tags, attachments: [] });
    expect(isAdoptedDisk(disk(ownedTags()), CLUSTER)).toBe(true);
    expect(isAdoptedDisk(disk(notAdopted), CLUSTER)).toBe(false);
    expect(isAdoptedDisk(disk({ ...ownedTags(), [TagKeys.ebsCluster]: 'false' }), CLUSTER)).toBe(false);
    expect(isAdoptedDisk(disk({ ...ownedTags(), [TagKeys.cluster(CLUSTER)]: 'shared' }), CLUSTER)).toBe(false);
    expect(isAdoptedDisk(disk({ [TagKeys.ebsCluster]: 'true', [TagKeys.cluster('beta')]: 'owned' }), CLUSTER)).toBe(false);
  });

  for (const [name, row] of Object.entries(rows)) {
    it(`${name}: adopted -> ${row.mutation}; not adopted -> failed NotAdopted naming \`npm run cluster -- adopt\`, no EC2 mutation`, async () => {
      const adopted = setup();
      arrange(adopted.ec2, row, ownedTags());
      const passed = await reconcileOne(adopted.ctx, row.item);
      expect(adopted.ec2.mutations.map((c) => c.verb)).toEqual([row.mutation]);
      expect(passed).not.toMatchObject({ outcome: 'failed' });

      const { ec2, ctx } = setup();
      arrange(ec2, row, notAdopted);
      const refused = await reconcileOne(ctx, row.item);
      expect(refused).toMatchObject({ outcome: 'failed', reason: 'NotAdopted', requeueAfterSeconds: 300 });
      const message = refused.outcome === 'failed' ? refused.message : '';
      expect(message).toContain(`npm run cluster -- adopt ${CLUSTER}`);
      expect(message).toContain(`${TagKeys.ebsCluster}=true`);
      expect(ec2.mutations).toEqual([]);
      if (row.warning) {
        expect(events(refused)).toContainEqual({ ...row.warning, type: 'Warning', message: expect.stringContaining(`npm run cluster -- adopt ${CLUSTER}`) });
      }
    });
  }

  it('another cluster\'s disk stays NotOwned (not a matter of adoption): no hint to adopt it', async () => {
    const { ec2, ctx } = setup();
    arrange(ec2, rows['attach (a VolumeAttachment)']!, { [TagKeys.ebsCluster]: 'true', [TagKeys.cluster('beta')]: 'owned' });
    const result = await reconcileOne(ctx, rows['attach (a VolumeAttachment)']!.item);
    expect(result).toMatchObject({ outcome: 'failed', reason: 'NotOwned' });
    expect(result.outcome === 'failed' && result.message).not.toContain('adopt');
    expect(ec2.mutations).toEqual([]);
  });
});
