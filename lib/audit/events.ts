/** The Warning Events an audit leaves on the PV and the claim of a lost volume. */
import type { Write } from '../contract/index.js';
import type { LostFinding } from './findings.js';

export const LOST_REASON = 'VolumeLost';

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
