/**
 * A cluster's registration: everything the backend knows about one cluster. Stored as JSON
 * in a local file or in SSM Parameter Store (one SecureString per cluster).
 */
import * as z from 'zod/mini';
import { ClusterIdSchema } from '../contract/cluster-id.js';
import { deferred } from '../contract/deferred.js';
import { isReservedTagKey, MAX_TAG_KEY_LENGTH, RESERVED_TAG_KEYS_TEXT } from '../contract/tags.js';
import { WebhookSecretSchema } from '../contract/signing.js';
import { VOLUME_TYPES } from '../storageclass/volume-types.js';
import { AwsSettingsSchema } from './aws.js';

export { ClusterIdSchema };

export const ClusterRegistrationSchema = deferred(() => z.object({
  clusterId: ClusterIdSchema,
  /** Webhook secrets accepted for this cluster; more than one during rotation. Each key 24–64 bytes. */
  secrets: z.array(WebhookSecretSchema).check(z.minLength(1)),
  region: z.string().check(z.minLength(1)),
  /** Zones volumes may be created in; empty = any zone of the region. */
  allowedZones: z._default(z.array(z.string()), []),
  /** Volume types the cluster may ask for. */
  allowedVolumeTypes: z._default(z.array(z.enum(VOLUME_TYPES)), [...VOLUME_TYPES]),
  /** Largest volume, GiB. */
  maxSizeGiB: z._default(z.int().check(z.positive()), 16_384),
  /** Tags added to every volume of this cluster. */
  extraTags: z._default(z.record(z.string(), z.string()), {}),
  /**
   * Tag keys a claim may set on its volume with an annotation `tag.volhook.io/<key>`; any other
   * such annotation is not applied (an Event says so). A reserved key is refused here.
   */
  claimTagKeys: z._default(
    z.array(
      z.string().check(
        z.minLength(1),
        z.maxLength(MAX_TAG_KEY_LENGTH),
        z.refine((key) => !isReservedTagKey(key), { message: `is a reserved tag key (${RESERVED_TAG_KEYS_TEXT})` }),
      ),
    ),
    [],
  ),
  /** `forwarder` (default): the forwarder applies the writes; `direct`: the backend does. */
  writeBack: z._default(z.enum(['forwarder', 'direct']), 'forwarder'),
  /**
   * The scheduled audit (lib/audit): `deleteOrphans` lets it delete provably orphaned disks
   * (default: report only); `deleteOrphanedSnapshots` the same for snapshots, on its own because
   * a Retain content deleted on purpose leaves one (default: report only); `graceSeconds`, how
   * old a disk or snapshot must be to count as an orphan (default 3600). Unset: the defaults.
   */
  audit: z.optional(
    z.strictObject({
      deleteOrphans: z.optional(z.boolean()),
      deleteOrphanedSnapshots: z.optional(z.boolean()),
      graceSeconds: z.optional(z.int().check(z.nonnegative())),
    }),
  ),
  /**
   * The cluster's EC2 session: the role the backend assumes for it (default: the deployment's
   * `VOLHOOK_EC2_ROLE_ARN`), the ExternalId that role's trust requires, the tag its nodes carry.
   */
  aws: z.optional(AwsSettingsSchema),
  /** For `writeBack: direct`: how the backend reaches the cluster's API. */
  kubernetes: z.optional(
    z.object({
      server: z.url(),
      token: z.optional(z.string()),
      caData: z.optional(z.string()),
      skipTLSVerify: z._default(z.boolean(), false),
    }),
  ),
}).check(
  // Reconcile cannot apply a direct cluster's writes without its API server: every write would
  // be requeued for ever. Refused here, the one schema the CLI, the backend and the check read.
  z.refine((r) => r.writeBack !== 'direct' || r.kubernetes?.server !== undefined, {
    message: 'is required with writeBack: direct (the API server the backend applies the writes to)',
    path: ['kubernetes', 'server'],
  }),
));
export type ClusterRegistration = z.infer<typeof ClusterRegistrationSchema>;
export type ClusterRegistrationInput = z.input<typeof ClusterRegistrationSchema>;

/** A registration that exists but cannot be used; the message says what is wrong. */
export class RegistrationError extends Error {
  override readonly name = 'RegistrationError';
}

/** Where registrations come from: a local file now, SSM Parameter Store when deployed. */
export interface ClusterRegistry {
  /** undefined when no such cluster is registered; throws RegistrationError when malformed. */
  get(clusterId: string): Promise<ClusterRegistration | undefined>;
}
