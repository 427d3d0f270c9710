/** Plain VolumeSnapshot objects for the reconciler tests: a class, a content, a snapshot. */
import { ItemSchema, type VolumeSnapshotContentItem } from '../../lib/contract/index.js';
import { DRIVER, merge } from './fixtures.js';

export const SNAPSHOT_UID = '0b7d2c1e-5a4f-4e3d-8c2b-1a0f9e8d7c6b';
export const CONTENT_NAME = `snapcontent-${SNAPSHOT_UID}`;
export const SOURCE_VOLUME = 'vol-0123456789abcdef0';
export const BEING_CREATED = 'snapshot.storage.kubernetes.io/volumesnapshot-being-created';
export const BEING_DELETED = 'snapshot.storage.kubernetes.io/volumesnapshot-being-deleted';
export const BOUND_FINALIZER = 'snapshot.storage.kubernetes.io/volumesnapshotcontent-bound-protection';

export const snapshotClass = (override: unknown = {}) =>
  merge({ metadata: { name: 'ebs-snapshots' }, driver: DRIVER, deletionPolicy: 'Delete', parameters: {} }, override);

/** A dynamic content as the common controller makes it, bound, with the being-created mark already applied. */
export const content = (override: unknown = {}) =>
  merge(
    {
      metadata: {
        name: CONTENT_NAME,
        uid: 'content-uid-1',
        annotations: { [BEING_CREATED]: 'yes' },
        finalizers: [BOUND_FINALIZER],
      },
      spec: {
        driver: DRIVER,
        deletionPolicy: 'Delete',
        source: { volumeHandle: SOURCE_VOLUME },
        volumeSnapshotClassName: 'ebs-snapshots',
        volumeSnapshotRef: { namespace: 'shop', name: 'nightly', uid: SNAPSHOT_UID },
      },
    },
    override,
  );

export const contentItem = (override: unknown = {}): VolumeSnapshotContentItem =>
  ItemSchema.parse(merge({ kind: 'VolumeSnapshotContent', content: content(), snapshotClass: snapshotClass() }, override)) as VolumeSnapshotContentItem;

/** A VolumeSnapshot bound to `CONTENT_NAME`, ready. */
export const volumeSnapshot = (override: unknown = {}) =>
  merge(
    {
      metadata: { name: 'nightly', namespace: 'shop', uid: SNAPSHOT_UID },
      spec: { source: { persistentVolumeClaimName: 'data' }, volumeSnapshotClassName: 'ebs-snapshots' },
      status: { boundVolumeSnapshotContentName: CONTENT_NAME, readyToUse: true, restoreSize: '10Gi' },
    },
    override,
  );

/** The content of a ready snapshot `snapshotId` of 10 GiB. */
export const readyContent = (snapshotId: string, override: unknown = {}) =>
  content(merge({ metadata: { annotations: { [BEING_CREATED]: undefined } }, status: { snapshotHandle: snapshotId, readyToUse: true, restoreSize: 10 * 2 ** 30, creationTime: 1_767_225_600_000_000_000 } }, override));
