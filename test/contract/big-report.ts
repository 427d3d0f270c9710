/** A large volume report for the tests of reports in parts. */
import { createHash } from 'node:crypto';
import type { VolumeReport } from '../../lib/contract/index.js';

const hex = (n: number, width: number) => n.toString(16).padStart(width, '0');
export const uid = (n: number) => `${hex(n, 8)}-0000-4000-8000-${hex(n, 12)}`;

/** A cluster of `n` bound PVs, each with its claim and an attachment, and `n / 10` snapshot contents. */
export function bigReport(n: number, withSnapshots = true): VolumeReport {
  return {
    volumes: Array.from({ length: n }, (_, i) => ({
      pv: `pvc-${uid(i)}`,
      pvUid: uid(i + 1_000_000),
      volumeId: `vol-${hex(i, 17)}`,
      reclaimPolicy: 'Delete',
      phase: 'Bound',
      claim: { namespace: `team-${i % 40}`, name: `data-${i}`, uid: uid(i) },
    })),
    attachments: Array.from({ length: n }, (_, i) => ({ name: `csi-${hex(i, 64)}`, volumeId: `vol-${hex(i, 17)}`, instanceId: `i-${hex(i % 500, 17)}`, attached: true })),
    claims: Array.from({ length: n }, (_, i) => uid(i)),
    ...(withSnapshots && {
      snapshots: Array.from({ length: n / 10 }, (_, i) => ({
        content: `snapcontent-${uid(i)}`,
        snapshotHandle: `snap-${hex(i, 17)}`,
        deletionPolicy: 'Delete',
        readyToUse: true,
        beingCreated: false,
        deleting: false,
      })),
    }),
  };
}


/**
 * `length` characters that gzip cannot shrink below three quarters (base64 of hashes): an
 * entry this large is too large for a part however the body travels.
 */
export function incompressible(length: number): string {
  const blocks = Array.from({ length: Math.ceil((length * 3) / 4 / 32) + 1 }, (_, i) => createHash('sha256').update(String(i)).digest());
  return Buffer.concat(blocks).toString('base64').slice(0, length);
}
