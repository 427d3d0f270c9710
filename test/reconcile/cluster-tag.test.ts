/**
 * A disk or snapshot volhook made before its tags carried `volhook.io/cluster=<id>` — owned by
 * every other tag (`kubernetes.io/cluster/<id>=owned`, `ebs.csi.aws.com/cluster=true`) — is one
 * the cluster's IAM session may not change. Every path that would change it refuses it before
 * any EC2 mutation, with a message naming `npm run cluster -- adopt <id> --apply`; the same item
 * over the same resource with the tag goes through (the control of each row). A look-up by name
 * still finds such a disk or snapshot, so a retry refuses instead of making a second one.
 */
import { describe, expect, it } from 'vitest';
import type { ItemInput, Result } from '../../lib/contract/index.js';
import { TagKeys } from '../../lib/contract/tags.js';
import { SourceFinalizers } from '../../lib/contract/source-protection.js';
import type { Disk, Snapshot } from '../../lib/ec2/types.js';
import type { FakeGateway, Verb } from './fake-gateway.js';
import {
  ATTACHER_FINALIZER,
  CLAIM_UID,
  CLUSTER,
  INSTANCE_ID,
  PV_NAME,
  claim,
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
import { BEING_CREATED, BEING_DELETED, CONTENT_NAME, SOURCE_VOLUME, contentItem, readyContent, volumeSnapshot } from './snapshot-fixtures.js';

const VOL = 'vol-0123456789abcdef0';
const SOURCE_VOL = 'vol-0aaaaaaaaaaaaaaa9';
const SNAP = 'snap-0123456789abcdef0';
const { [TagKeys.volhookCluster]: _clusterTag, ...preChange } = ownedTags();
const snapshotTags = { CSIVolumeSnapshotName: CONTENT_NAME, 'ebs.csi.aws.com/cluster': 'true', [`kubernetes.io/cluster/${CLUSTER}`]: 'owned', 'volhook.io/cluster': CLUSTER };
const { 'volhook.io/cluster': _snapshotClusterTag, ...preChangeSnapshot } = snapshotTags;

const ADOPT = `run \`npm run cluster -- adopt ${CLUSTER} --apply\` to tag it (nothing was done`;
const madeBefore = (kind: 'volume' | 'snapshot', id: string) => `${kind} ${id} was made by volhook before ${kind} tags carried volhook.io/cluster; ${ADOPT}`;

const messageOf = (result: Result) => (result.outcome === 'failed' ? result.message : '');
const events = (result: Result) => result.writes.flatMap((w) => (w.op === 'createEvent' ? [{ kind: w.involvedObject.kind, type: w.type, reason: w.reason, message: w.message }] : []));

interface Row {
  item: ItemInput;
  /** The resource as EC2 has it, its tags given by the row: the disk (or the snapshot) the item acts on. */
  arrange: (ec2: FakeGateway, tags: 'current' | 'pre-change') => void;
  /** The mutation the tagged resource gets. */
  mutation: Verb;
  /** The refusal's reason (NotAdopted, but for a clone, whose source is refused as SourceNotOwned), and when it is looked at again. */
  reason: string;
  requeueAfterSeconds: number;
  /** What the control answers, when not simply no failure. */
  control?: object;
  /** Which resource the message names. */
  names: [kind: 'volume' | 'snapshot', id: string];
  /** The Warning the refusal records, on which object. */
  warning?: { kind: string; reason: string };
}

const disk = (over: Partial<Disk> = {}) => (ec2: FakeGateway, tags: 'current' | 'pre-change') => {
  // A copy each time: the control's run changes the disk it is given.
  ec2.addVolume({ volumeId: VOL, sizeGiB: 20, tags: tags === 'current' ? ownedTags() : preChange, ...structuredClone(over) });
  ec2.addInstance({ instanceId: INSTANCE_ID, devicesInUse: ['/dev/xvda', '/dev/xvdaa'] });
};
const snapshot = (over: Partial<Snapshot> = {}) => (ec2: FakeGateway, tags: 'current' | 'pre-change') => {
  ec2.createdState = 'available';
  ec2.addSnapshot({ snapshotId: SNAP, sizeGiB: 10, tags: tags === 'current' ? snapshotTags : preChangeSnapshot, ...over });
};

const boundClaim = (override: object) =>
  claimItem({
    pvc: { metadata: { finalizers: ['kubernetes.io/pvc-protection'] }, spec: { volumeName: PV_NAME }, status: { phase: 'Bound', capacity: { storage: '20Gi' } }, ...override },
    storageClass: storageClass({ allowVolumeExpansion: true }),
    pvExists: true,
    pv: persistentVolume(),
  });

const rows: Record<string, Row> = {
  'attach (a VolumeAttachment)': {
    item: vaItem({
      volumeAttachment: volumeAttachment({ metadata: { finalizers: [ATTACHER_FINALIZER] } }),
      pv: persistentVolume({ metadata: { finalizers: ['kubernetes.io/pv-protection', ATTACHER_FINALIZER] } }),
    }),
    arrange: disk(),
    mutation: 'attachDisk',
    reason: 'NotAdopted',
    requeueAfterSeconds: 300,
    names: ['volume', VOL],
    warning: { kind: 'PersistentVolume', reason: 'FailedAttachVolume' },
  },
  'detach (a VolumeAttachment being deleted)': {
    item: vaItem({ volumeAttachment: volumeAttachment({ metadata: { deletionTimestamp: '2025-03-01T11:59:00Z', finalizers: [ATTACHER_FINALIZER] }, status: { attached: true } }) }),
    arrange: disk({ state: 'in-use', attachments: [{ instanceId: INSTANCE_ID, device: '/dev/xvdaa', state: 'attached' }] }),
    mutation: 'detachDisk',
    reason: 'NotAdopted',
    requeueAfterSeconds: 300,
    names: ['volume', VOL],
    warning: { kind: 'PersistentVolume', reason: 'FailedDetachVolume' },
  },
  'delete (a Released PV, Delete)': {
    item: pvItem({ pv: { status: { phase: 'Released' } } }),
    arrange: disk(),
    mutation: 'deleteDisk',
    reason: 'NotAdopted',
    requeueAfterSeconds: 300,
    names: ['volume', VOL],
    warning: { kind: 'PersistentVolume', reason: 'VolumeFailedDelete' },
  },
  'delete (a claim deleted before its PV)': {
    item: { kind: 'PersistentVolumeClaimDeleted', uid: CLAIM_UID, namespace: 'shop', name: 'data', pvExists: false, pvCheckedLive: true },
    arrange: disk(),
    mutation: 'deleteDisk',
    reason: 'NotAdopted',
    requeueAfterSeconds: 300,
    names: ['volume', VOL],
  },
  'delete (the claim\'s disk found by name in state error)': {
    item: claimItem(),
    arrange: disk({ state: 'error' }),
    mutation: 'deleteDisk',
    // Deleted; its replacement waits for the next reconcile.
    control: { outcome: 'failed', reason: 'VolumeCreationFailed' },
    reason: 'NotAdopted',
    requeueAfterSeconds: 300,
    names: ['volume', VOL],
    warning: { kind: 'PersistentVolumeClaim', reason: 'ProvisioningFailed' },
  },
  'resize (a bound claim asking for more)': {
    item: boundClaim({ spec: { volumeName: PV_NAME, resources: { requests: { storage: '30Gi' } } } }),
    arrange: disk(),
    mutation: 'modifyDisk',
    reason: 'NotAdopted',
    requeueAfterSeconds: 300,
    names: ['volume', VOL],
    warning: { kind: 'PersistentVolumeClaim', reason: 'VolumeResizeFailed' },
  },
  'retag (a VolumeAttributesClass with tags)': {
    item: {
      ...boundClaim({ spec: { volumeName: PV_NAME, volumeAttributesClassName: 'tagged' } }),
      volumeAttributesClass: { metadata: { name: 'tagged' }, driverName: 'ebs.csi.aws.com', parameters: { tagSpecification_1: 'team={{ .PVCNamespace }}' } },
    } as ItemInput,
    arrange: disk(),
    mutation: 'tagDisk',
    reason: 'NotAdopted',
    requeueAfterSeconds: 300,
    names: ['volume', VOL],
    warning: { kind: 'PersistentVolumeClaim', reason: 'VolumeModifyFailed' },
  },
  'snapshot (a VolumeSnapshotContent of the disk)': {
    item: contentItem(),
    arrange: (ec2, tags) => void ec2.addVolume({ volumeId: SOURCE_VOLUME, sizeGiB: 10, tags: tags === 'current' ? ownedTags() : preChange }),
    mutation: 'createSnapshot',
    reason: 'NotAdopted',
    requeueAfterSeconds: 300,
    names: ['volume', SOURCE_VOLUME],
    warning: { kind: 'VolumeSnapshotContent', reason: 'SnapshotCreationFailed' },
  },
  'clone (a claim whose source disk was made before the tag)': {
    item: claimItem({
      pvc: { spec: { dataSource: { kind: 'PersistentVolumeClaim', name: 'data-src', apiGroup: null } } },
      source: {
        kind: 'PersistentVolumeClaim',
        // Protected already (a restore or clone goes on to EC2 only once its source is).
        claim: claim({ metadata: { name: 'data-src', uid: '11111111-2222-4333-8444-555555555555', finalizers: [SourceFinalizers.claim] }, spec: { volumeName: 'pvc-src' }, status: { phase: 'Bound' } }),
        pv: persistentVolume({
          metadata: { name: 'pvc-src' },
          spec: {
            csi: { volumeHandle: SOURCE_VOL },
            nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: ['us-east-1b'] }] }] } },
          },
        }),
      },
      clusterZones: ['us-east-1a', 'us-east-1b'],
    }),
    arrange: (ec2, tags) => {
      ec2.createdState = 'available';
      ec2.addVolume({ volumeId: SOURCE_VOL, zone: 'us-east-1b', sizeGiB: 20, tags: { ...(tags === 'current' ? ownedTags() : preChange), CSIVolumeName: 'pvc-src' } });
    },
    mutation: 'copyDisk',
    reason: 'SourceNotOwned',
    requeueAfterSeconds: 60,
    names: ['volume', SOURCE_VOL],
    warning: { kind: 'PersistentVolumeClaim', reason: 'ProvisioningFailed' },
  },
  'restore (a claim from a snapshot taken before the tag)': {
    item: claimItem({
      pvc: { spec: { dataSource: { kind: 'VolumeSnapshot', name: 'nightly', apiGroup: 'snapshot.storage.k8s.io' } } },
      source: { kind: 'VolumeSnapshot', snapshot: volumeSnapshot({ metadata: { finalizers: [SourceFinalizers.snapshot] } }), content: readyContent(SNAP) },
    }),
    arrange: snapshot(),
    mutation: 'createDisk',
    reason: 'NotAdopted',
    requeueAfterSeconds: 60,
    names: ['snapshot', SNAP],
    warning: { kind: 'PersistentVolumeClaim', reason: 'ProvisioningFailed' },
  },
  'snapshot delete (a content of the Delete policy being deleted)': {
    item: contentItem({
      content: { metadata: { deletionTimestamp: '2025-03-01T11:59:00Z', annotations: { [BEING_CREATED]: undefined, [BEING_DELETED]: 'yes' } }, status: { snapshotHandle: SNAP, readyToUse: true } },
    }),
    arrange: snapshot(),
    mutation: 'deleteSnapshot',
    reason: 'NotAdopted',
    requeueAfterSeconds: 300,
    names: ['snapshot', SNAP],
    warning: { kind: 'VolumeSnapshotContent', reason: 'SnapshotDeleteError' },
  },
};

describe('a disk or snapshot made before volhook.io/cluster', () => {
  for (const [name, row] of Object.entries(rows)) {
    it(`${name}: with volhook.io/cluster -> ${row.mutation}; without -> failed ${row.reason} naming \`npm run cluster -- adopt ${CLUSTER} --apply\`, no EC2 mutation`, async () => {
      const tagged = setup();
      row.arrange(tagged.ec2, 'current');
      const passed = await reconcileOne(tagged.ctx, row.item);
      expect(tagged.ec2.mutations.map((c) => c.verb)).toEqual([row.mutation]);
      if (row.control) expect(passed).toMatchObject(row.control);
      else expect(passed).not.toMatchObject({ outcome: 'failed' });

      const { ec2, ctx } = setup();
      row.arrange(ec2, 'pre-change');
      const refused = await reconcileOne(ctx, row.item);
      expect(refused).toMatchObject({ outcome: 'failed', reason: row.reason, requeueAfterSeconds: row.requeueAfterSeconds });
      expect(messageOf(refused)).toContain(madeBefore(...row.names));
      expect(ec2.mutations).toEqual([]);
      if (row.warning) expect(events(refused)).toContainEqual({ ...row.warning, type: 'Warning', message: expect.stringContaining(ADOPT) });
    });
  }
});

describe('a retry that finds, by name, what volhook made before volhook.io/cluster', () => {
  it('a claim whose disk exists (a create whose answer was lost) -> found, refused NotAdopted, no CreateVolume and no PV; with the tag (the control) -> its PV, no CreateVolume', async () => {
    const tagged = setup();
    tagged.ec2.addVolume({ volumeId: VOL, sizeGiB: 20, tags: ownedTags() });
    const passed = await reconcileOne(tagged.ctx, claimItem());
    expect(passed).toMatchObject({ outcome: 'done' });
    expect(passed.writes.map((w) => w.op)).toContain('createPersistentVolume');
    expect(tagged.ec2.callsOf('createDisk')).toEqual([]);

    const { ec2, ctx } = setup();
    ec2.addVolume({ volumeId: VOL, sizeGiB: 20, tags: preChange });
    const refused = await reconcileOne(ctx, claimItem());
    expect(refused).toMatchObject({ outcome: 'failed', reason: 'NotAdopted', message: expect.stringContaining(madeBefore('volume', VOL)) });
    expect(refused.writes.map((w) => w.op)).not.toContain('createPersistentVolume');
    expect(events(refused)).toContainEqual({ kind: 'PersistentVolumeClaim', type: 'Warning', reason: 'ProvisioningFailed', message: expect.stringContaining(ADOPT) });
    expect(ec2.callsOf('findDiskByName')).toHaveLength(1);
    expect(ec2.mutations).toEqual([]);
    expect(ec2.volumes.size).toBe(1);
  });

  it('a content whose snapshot exists (taken before the tag) -> found, refused NotAdopted as no final error (the status untouched, the mark kept), no CreateSnapshot; with the tag -> recorded', async () => {
    const tagged = setup();
    tagged.ec2.addVolume({ volumeId: SOURCE_VOLUME, sizeGiB: 10 });
    tagged.ec2.addSnapshot({ snapshotId: SNAP, volumeId: SOURCE_VOLUME, tags: snapshotTags });
    const passed = await reconcileOne(tagged.ctx, contentItem());
    expect(passed.writes).toContainEqual(expect.objectContaining({ op: 'updateVolumeSnapshotContentStatus', status: expect.objectContaining({ snapshotHandle: SNAP }) }));
    expect(tagged.ec2.mutations).toEqual([]);

    const { ec2, ctx } = setup();
    ec2.addVolume({ volumeId: SOURCE_VOLUME, sizeGiB: 10 });
    ec2.addSnapshot({ snapshotId: SNAP, volumeId: SOURCE_VOLUME, tags: preChangeSnapshot });
    const refused = await reconcileOne(ctx, contentItem());
    expect(refused).toMatchObject({ outcome: 'failed', reason: 'NotAdopted', message: expect.stringContaining(madeBefore('snapshot', SNAP)) });
    expect(refused.writes.map((w) => w.op)).toEqual(['createEvent']);
    expect(ec2.mutations).toEqual([]);
    expect(ec2.snapshots.size).toBe(1);
  });
});

describe("a resource whose volhook.io/cluster names another cluster (in any case)", () => {
  it.each([
    ['volhook.io/cluster=beta', { ...ownedTags(), 'volhook.io/cluster': 'beta' }],
    ['Volhook.IO/Cluster=beta beside volhook.io/cluster=alpha', { ...ownedTags(), 'Volhook.IO/Cluster': 'beta' }],
  ])('%s, though kubernetes.io/cluster/alpha=owned -> NotOwned on attach and delete, no hint to adopt, no mutation', async (_name, tags) => {
    for (const key of ['attach (a VolumeAttachment)', 'delete (a Released PV, Delete)'] as const) {
      const { ec2, ctx } = setup();
      ec2.addVolume({ volumeId: VOL, sizeGiB: 20, tags });
      ec2.addInstance({ instanceId: INSTANCE_ID, devicesInUse: ['/dev/xvda'] });
      const result = await reconcileOne(ctx, rows[key]!.item);
      expect(result).toMatchObject({ outcome: 'failed', reason: 'NotOwned' });
      expect(messageOf(result)).not.toContain('adopt');
      expect(ec2.mutations).toEqual([]);
    }
  });

  it('found by name for a claim -> NotOwned: no PV for it, no second disk', async () => {
    const { ec2, ctx } = setup();
    ec2.addVolume({ volumeId: VOL, sizeGiB: 20, tags: { ...ownedTags(), 'volhook.io/cluster': 'beta' } });
    const result = await reconcileOne(ctx, claimItem());
    expect(result).toMatchObject({ outcome: 'failed', reason: 'NotOwned', message: expect.stringContaining(`not owned by cluster "${CLUSTER}"`) });
    expect(result.writes.map((w) => w.op)).not.toContain('createPersistentVolume');
    expect(ec2.mutations).toEqual([]);
  });
});
