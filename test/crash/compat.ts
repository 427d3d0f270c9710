/**
 * Forwarder parts that issue 8 adds (the signed body with the cluster id, the live read that
 * confirms a PV's absence before an item that may delete a disk). The explorer uses the real
 * ones when the tree has them and an equivalent otherwise, so that it runs — and finds what
 * it finds — on the tree before the fix as well as after.
 */
import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';
import * as contract from '../../lib/contract/index.js';
import type { ItemInput } from '../../lib/contract/index.js';
import * as backendClient from '../../lib/forwarder/backend-client.js';
import * as forwarderItems from '../../lib/forwarder/items.js';

type ClaimItems = Extract<ItemInput, { kind: 'PersistentVolumeClaim' | 'PersistentVolumeClaimDeleted' }>;
export type LivePvRead = (name: string) => Promise<boolean | undefined>;

/** The request body the forwarder signs: `{ clusterId, items }`. */
export const reconcileBody: (clusterId: string, items: readonly unknown[]) => string =
  (backendClient as { reconcileBody?: (clusterId: string, items: readonly unknown[]) => string }).reconcileBody ??
  ((clusterId, items) => JSON.stringify({ clusterId, items }));

/** The item with `pvExists` confirmed live when it says the PV is absent. */
export const withLivePvCheck: <T extends ClaimItems>(item: T, pvName: string, readPv: LivePvRead) => Promise<T> =
  (forwarderItems as { withLivePvCheck?: <T extends ClaimItems>(item: T, pvName: string, readPv: LivePvRead) => Promise<T> }).withLivePvCheck ??
  (async (item, pvName, readPv) => {
    if (item.pvExists) return item;
    const exists = await readPv(pvName);
    return exists === undefined ? item : { ...item, pvExists: exists, pvCheckedLive: true };
  });

/** A protected claim that will not get its PV from volhook any more (none before issue 8). */
export const claimReleasesDisk: (pvc: V1PersistentVolumeClaim) => boolean =
  (contract as { claimReleasesDisk?: (pvc: V1PersistentVolumeClaim) => boolean }).claimReleasesDisk ?? (() => false);

/** The provisioner the PV controller assigned to a claim (either annotation key). */
export function claimProvisioner(pvc: V1PersistentVolumeClaim): string | undefined {
  const annotations = pvc.metadata?.annotations ?? {};
  return annotations[contract.Annotations.storageProvisioner] ?? annotations[contract.Annotations.betaStorageProvisioner];
}
