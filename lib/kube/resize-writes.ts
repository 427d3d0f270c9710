/**
 * The writes of resizing and VolumeAttributesClass changes, as external-resizer makes them:
 * the PV's capacity and class, and the claim's status through its `/status` subresource.
 */
import type { V1PersistentVolume, V1PersistentVolumeClaim } from '@kubernetes/client-node';
import type { Write } from '../contract/index.js';
import { parseQuantity } from '../storageclass/quantity.js';
import type { KubeClients } from './clients.js';
import { isApiError } from './errors.js';
import type { JsonPatchOp } from './json-patch.js';

type VolumePatch = Extract<Write, { op: 'patchPersistentVolume' }>;
type ClaimStatusPatch = Extract<Write, { op: 'patchPersistentVolumeClaimStatus' }>;

/**
 * Grows the PV's capacity (never shrinks it) and sets its class, on this incarnation (uid) of
 * the PV, by a patch that tests the resourceVersion it was computed from; a lost race (409/422)
 * reads again and recomputes, as the finalizer patches do.
 */
export async function patchVolume(clients: KubeClients, write: VolumePatch, retries: number): Promise<void> {
  const { core } = clients;
  for (let attempt = 1; ; attempt++) {
    let pv: V1PersistentVolume;
    try {
      pv = await core.readPersistentVolume({ name: write.name });
    } catch (err) {
      if (isApiError(err, 404)) return;
      throw err;
    }
    if (pv.metadata?.uid !== write.uid) return; // a namesake: not ours to change
    const ops = volumeOps(pv, write);
    if (ops.length === 0) return;
    try {
      await core.patchPersistentVolume({
        name: write.name,
        body: [
          { op: 'test', path: '/metadata/uid', value: write.uid },
          { op: 'test', path: '/metadata/resourceVersion', value: pv.metadata?.resourceVersion ?? '' },
          ...ops,
        ],
      });
      return;
    } catch (err) {
      if (isApiError(err, 404)) return;
      const lostRace = isApiError(err, 409) || isApiError(err, 422);
      if (!lostRace || attempt >= retries) throw err;
    }
  }
}

function volumeOps(pv: V1PersistentVolume, write: VolumePatch): JsonPatchOp[] {
  const ops: JsonPatchOp[] = [];
  if (write.capacity !== undefined) {
    const current = pv.spec?.capacity?.storage;
    if (current === undefined || parseQuantity(String(current)) < parseQuantity(write.capacity)) {
      ops.push(
        pv.spec?.capacity
          ? { op: 'add', path: '/spec/capacity/storage', value: write.capacity }
          : { op: 'add', path: '/spec/capacity', value: { storage: write.capacity } },
      );
    }
  }
  if (write.volumeAttributesClassName !== undefined && pv.spec?.volumeAttributesClassName !== write.volumeAttributesClassName) {
    ops.push({ op: 'add', path: '/spec/volumeAttributesClassName', value: write.volumeAttributesClassName });
  }
  return ops;
}

/**
 * Patches the claim's status, only if the claim is still the version the write was computed
 * from (uid and resourceVersion, tested in the patch itself). A claim that changed since is
 * left alone: the write was decided from a view that no longer holds, and the change itself is
 * news that brings the claim back to the backend. external-resizer patches with the same check.
 */
export async function patchClaimStatus(clients: KubeClients, write: ClaimStatusPatch): Promise<void> {
  const { core } = clients;
  const { name, namespace } = write;
  let pvc: V1PersistentVolumeClaim;
  try {
    pvc = await core.readNamespacedPersistentVolumeClaim({ name, namespace });
  } catch (err) {
    if (isApiError(err, 404)) return;
    throw err;
  }
  if (pvc.metadata?.uid !== write.uid || pvc.metadata?.resourceVersion !== write.resourceVersion) return;
  const ops = claimStatusOps(pvc, write.status);
  if (ops.length === 0) return;
  try {
    await core.patchNamespacedPersistentVolumeClaimStatus({
      name,
      namespace,
      body: [
        { op: 'test', path: '/metadata/uid', value: write.uid },
        { op: 'test', path: '/metadata/resourceVersion', value: write.resourceVersion },
        ...ops,
      ],
    });
  } catch (err) {
    // Gone, or changed since the read: not this write's claim any more.
    if (isApiError(err, 404) || isApiError(err, 409) || isApiError(err, 422)) return;
    throw err;
  }
}

/** JSON Patch ops setting each given status field (`null`: removing it when present). */
export function claimStatusOps(pvc: { status?: object }, status: ClaimStatusPatch['status']): JsonPatchOp[] {
  const current = (pvc.status ?? {}) as Record<string, unknown>;
  const ops: JsonPatchOp[] = [];
  if (!pvc.status) ops.push({ op: 'add', path: '/status', value: {} });
  for (const [field, value] of Object.entries(status)) {
    if (value === undefined) continue;
    const path = `/status/${field}`;
    if (value === null) {
      if (current[field] !== undefined && current[field] !== null) ops.push({ op: 'remove', path });
    } else {
      ops.push({ op: 'add', path, value });
    }
  }
  return ops.length === 1 && !pvc.status ? [] : ops;
}
