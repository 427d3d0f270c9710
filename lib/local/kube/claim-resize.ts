/**
 * What kube-apiserver refuses of a claim's new size, as v1.36 does (found by running the e2e
 * scenarios on the real plane, docs/divergences.md):
 * - validation (422 Invalid): with RecoverVolumeExpansionFailure (GA), a bound claim's request
 *   may go down, but never below `status.capacity`;
 * - the PersistentVolumeClaimResize admission plugin (403 Forbidden): a claim grows only if its
 *   StorageClass (unchanged) sets `allowVolumeExpansion: true`. (A claim not bound is refused
 *   before, by validation: validation.ts.)
 * Pure.
 */
import { parseQuantity } from '../controllers/quantity.js';
import type { FieldError } from './errors.js';
import { isObject, type JsonObject } from './json.js';
import type { KubeObject } from './types.js';

const obj = (value: unknown): JsonObject => (isObject(value) ? value : {});

function requested(claim: KubeObject): string | undefined {
  const storage = obj(obj(obj(claim.spec).resources).requests).storage;
  return typeof storage === 'string' || typeof storage === 'number' ? String(storage) : undefined;
}

/** The request, when it is below the claim's `status.capacity`: the field error the API server returns. */
export function requestBelowCapacity(next: KubeObject, previous: KubeObject): FieldError[] {
  const capacity = obj(obj(previous.status).capacity).storage;
  const request = requested(next);
  if ((typeof capacity !== 'string' && typeof capacity !== 'number') || request === undefined) return [];
  if (requested(previous) === request) return [];
  return parseQuantity(request) < parseQuantity(capacity)
    ? [{ field: 'spec.resources.requests.storage', type: 'Forbidden', detail: 'field can not be less than status.capacity' }]
    : [];
}

/**
 * Why the resize admission refuses this update, or undefined: the request grows and the
 * claim's class (looked up by `classOf`) does not allow expansion.
 */
export function resizeRefusal(next: KubeObject, previous: KubeObject, classOf: (name: string) => KubeObject | undefined): string | undefined {
  const before = requested(previous);
  const after = requested(next);
  if (before === undefined || after === undefined || parseQuantity(after) <= parseQuantity(before)) return undefined;
  const className = obj(next.spec).storageClassName;
  const allowed =
    typeof className === 'string' && className !== '' && className === obj(previous.spec).storageClassName && (classOf(className) as { allowVolumeExpansion?: unknown } | undefined)?.allowVolumeExpansion === true;
  return allowed ? undefined : 'only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize';
}
