/** The Warning Events an audit leaves on the PV and the claim of a lost volume. */
import { SNAPSHOT_API_GROUP, SNAPSHOT_API_VERSION, type Write } from '../contract/index.js';
import type { LostFinding } from './findings.js';
import type { LostSnapshotFinding } from './snapshot-findings.js';

export const LOST_REASON = 'VolumeLost';
export const LOST_SNAPSHOT_REASON = 'SnapshotLost';

/** The Warning Event an audit leaves on a VolumeSnapshotContent whose EBS snapshot is gone. */
export function lostSnapshotEvents(lost: readonly LostSnapshotFinding[], at: string): Write[] {
  return lost.map((finding) => ({
    op: 'createEvent',
    involvedObject: {
      kind: 'VolumeSnapshotContent',
      apiVersion: `${SNAPSHOT_API_GROUP}/${SNAPSHOT_API_VERSION}`,
      name: finding.content,
      ...(finding.contentUid && { uid: finding.contentUid }),
    },
    type: 'Warning',
    reason: LOST_SNAPSHOT_REASON,
    message: `the EBS snapshot ${finding.snapshotId} of VolumeSnapshotContent ${finding.content} no longer exists in EC2 (volhook audit at ${at}); nothing can be restored from it`,
  }));
}

export function lostEvents(lost: readonly LostFinding[], at: string): Write[] {
  return lost.flatMap((finding) => {
    const message = `the EBS volume ${finding.volumeId} of PersistentVolume ${finding.pv} no longer exists in EC2 (volhook audit at ${at}); the data is gone unless a snapshot holds it`;
    const onPv: Write = {
      op: 'createEvent',
      involvedObject: { kind: 'PersistentVolume', apiVersion: 'v1', name: finding.pv, ...(finding.pvUid && { uid: finding.pvUid }) },
      type: 'Warning',
      reason: LOST_REASON,
      message,
    };
    const claim = finding.claim;
    if (!claim) return [onPv];
    const onClaim: Write = {
      op: 'createEvent',
      involvedObject: { kind: 'PersistentVolumeClaim', apiVersion: 'v1', name: claim.name, namespace: claim.namespace, ...(claim.uid && { uid: claim.uid }) },
      type: 'Warning',
      reason: LOST_REASON,
      message,
    };
    return [onPv, onClaim];
  });
}
