/** The content's status as the common controller copies it onto its VolumeSnapshot. */
import { binaryQuantity, isReady, nanosToTime } from './snapshot-objects.js';
import type { VolumeSnapshot, VolumeSnapshotContent } from './snapshot-objects.js';
import { key, type Step } from './snapshot-step.js';

/**
 * `updateSnapshotStatus`: the content's status copied to the snapshot — bound name,
 * creation time, readiness, restore size, error — with the Normal SnapshotCreated and
 * SnapshotReady events when those first hold.
 */
export function copyStatus(snapshot: VolumeSnapshot, content: VolumeSnapshotContent, step: Step): void {
  const cs = content.status;
  const createdAt = cs?.creationTime !== undefined ? nanosToTime(cs.creationTime) : undefined;
  const size = cs?.restoreSize;
  const ready = cs?.readyToUse ?? false;
  const error = cs?.error ? structuredClone(cs.error) : undefined;
  const status = structuredClone(snapshot.status ?? {});
  if (snapshot.status === undefined) {
    status.boundVolumeSnapshotContentName = content.metadata.name;
    status.readyToUse = ready;
    if (createdAt) status.creationTime = createdAt;
    if (size !== undefined) status.restoreSize = binaryQuantity(size);
    if (error) status.error = error;
  } else {
    status.boundVolumeSnapshotContentName ||= content.metadata.name;
    if (status.creationTime === undefined && createdAt) status.creationTime = createdAt;
    if (status.readyToUse !== ready) {
      status.readyToUse = ready;
      if (ready) delete status.error;
    }
    const zero = status.restoreSize !== undefined && /^0([a-zA-Z]*)$/.test(status.restoreSize);
    if (size !== undefined && (status.restoreSize === undefined || (zero && size > 0))) status.restoreSize = binaryQuantity(size);
    if (error) status.error = error;
    else delete status.error;
  }
  const desired = { ...structuredClone(snapshot), status };
  if (JSON.stringify(desired.status) === JSON.stringify(snapshot.status)) return;
  step.writes.push({ op: 'update', resource: 'volumesnapshots', current: snapshot, desired });
  if (!snapshot.status?.creationTime && status.creationTime) {
    step.event(snapshot, 'Normal', 'SnapshotCreated', `Snapshot ${key(snapshot)} was successfully created by the CSI driver.`);
  }
  if (!isReady(snapshot) && status.readyToUse === true) {
    step.event(snapshot, 'Normal', 'SnapshotReady', `Snapshot ${key(snapshot)} is ready to use.`);
  }
}
