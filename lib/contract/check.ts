/**
 * The check: a signed request that asks only whether the backend accepts this forwarder — its
 * contract, its cluster's registration, its secret — and does nothing. A replica makes it
 * before it says it is ready, so that a rollout of forwarders the backend refuses (a wrong
 * Secret, say) stops at the first new pod, leader or standby. Since 0.2.0 (contract 2, an
 * addition). A backend without the route answers 404: the app's own `not_found`, or, deployed,
 * API Gateway's `{"message":"Not Found"}`; the forwarder reads any 404 without the app's error
 * shape as "no such route" (lib/forwarder/backend-client.ts).
 */
import * as z from 'zod/mini';
import { deferred } from './deferred.js';

export const CHECK_ROUTE = '/v1/clusters/:clusterId/check';

export function checkUrl(apiUrl: string, clusterId: string): string {
  return `${apiUrl.replace(/\/+$/, '')}/v1/clusters/${encodeURIComponent(clusterId)}/check`;
}

/**
 * The body, signed: the cluster it is for (the backend refuses another path's) and, since
 * 0.2.x, the provisioner name the forwarder serves, which the backend refuses when the cluster's
 * registration names another (a backend before it ignores the field and accepts).
 */
export const CheckRequestSchema = deferred(() => z.object({ clusterId: z.string().check(z.minLength(1)), provisioner: z.optional(z.string().check(z.minLength(1))) }));

/** The error code of a check refused because the forwarder serves another provisioner than the registration names. */
export const PROVISIONER_MISMATCH_CODE = 'provisioner_mismatch';

/**
 * What a backend serves beyond the contract's items, named in its check answer (`serves`): a
 * forwarder sends the items of a feature only to a backend that names it, since a backend
 * without it refuses a whole request with an item kind it does not know. A backend before
 * `serves` answers without it — it serves none of them; a forwarder before it ignores it.
 */
export const BackendFeatures = {
  /** VolumeGroupSnapshotContent items, and their writes. */
  groupSnapshots: 'groupSnapshots',
} as const;
export type BackendFeature = (typeof BackendFeatures)[keyof typeof BackendFeatures];

/** The features a backend of this build serves. */
export const SERVED_FEATURES: readonly BackendFeature[] = [BackendFeatures.groupSnapshots];

export const CheckResponseSchema = deferred(() => z.object({
  clusterId: z.string(),
  accepted: z.literal(true),
  /** Unknown names are kept: a newer backend may name features this forwarder does not have. */
  serves: z.optional(z.array(z.string())),
}));
export type CheckResponse = z.infer<typeof CheckResponseSchema>;

/** The error code of a backend's 404 for a route it does not have (a backend older than the check). */
export const NO_ROUTE_CODE = 'not_found';
