/**
 * A registration's `aws` settings: the EC2 role its cluster's session assumes, the ExternalId
 * that role's trust asks for, and the tag its nodes carry. The rules are plain patterns so the
 * backend can check its own `VOLHOOK_EC2_ROLE_ARN` at start without building a schema.
 */
import * as z from 'zod/mini';
import { deferred } from '../contract/deferred.js';

/**
 * `arn:<partition>:iam::<12-digit account>:role/<path/><name>`. Path segments and the name use
 * IAM's role-name characters; the name is at most 64 of them.
 */
const ROLE_ARN = /^arn:(aws(?:-[a-z]+)*):iam::(\d{12}):role\/((?:[\w+=,.@-]+\/)*)([\w+=,.@-]{1,64})$/;
/** STS's ExternalId: 2–1224 characters of `[\w+=,.@:/-]`. */
const EXTERNAL_ID = /^[\w+=,.@:/-]{2,1224}$/;
/** A session tag value (what `volhook-nodes` carries): STS allows letters, digits, spaces and `_.:/=+-@`, up to 256. */
const SESSION_TAG_VALUE = /^[\p{L}\p{Z}\p{N}_.:/=+\-@]{1,256}$/u;

/**
 * The IAM path EC2 roles live under: the backend's own role may assume exactly the roles on it
 * (`sts:AssumeRole`, `sts:TagSession` on `arn:<partition>:iam::<account>:role/volhook/*`).
 */
export const EC2_ROLE_PATH = '/volhook/';

export const ROLE_ARN_TEXT = 'an IAM role ARN, arn:<partition>:iam::<12-digit account>:role/<path/><name>';

export function isRoleArn(value: string): boolean {
  return ROLE_ARN.test(value);
}

/** What an IAM role ARN names: partition, account, IAM path (`/volhook/` for `…:role/volhook/name`) and name; undefined for anything that is not one. */
export function roleArnParts(roleArn: string): { partition: string; accountId: string; path: string; name: string } | undefined {
  const match = ROLE_ARN.exec(roleArn);
  return match ? { partition: match[1]!, accountId: match[2]!, path: `/${match[3]}`, name: match[4]! } : undefined;
}

/** The account an IAM role ARN names; undefined for anything that is not one. */
export function roleArnAccount(roleArn: string): string | undefined {
  return roleArnParts(roleArn)?.accountId;
}

/** The IAM path of a role ARN (`/volhook/` for `…:role/volhook/name`); undefined for anything that is not one. */
export function roleArnPath(roleArn: string): string | undefined {
  return roleArnParts(roleArn)?.path;
}

export const AwsSettingsSchema = deferred(() =>
  z.strictObject({
    /** The EC2 role this cluster's session assumes; default: the deployment's (`VOLHOOK_EC2_ROLE_ARN`). */
    roleArn: z.optional(z.string().check(z.regex(ROLE_ARN, `aws.roleArn must be ${ROLE_ARN_TEXT}`))),
    /** Sent with AssumeRole when the role's trust requires one (a role in another account). */
    externalId: z.optional(z.string().check(z.regex(EXTERNAL_ID, 'aws.externalId must be 2–1224 characters of letters, digits and _+=,.@:/-'))),
    /**
     * The tag the cluster's instances carry (EKS: `eks:cluster-name=<name>`): its value becomes the
     * session tag `volhook-nodes`, which the EC2 role fences AttachVolume/DetachVolume by. The key
     * must be the deployment's `VOLHOOK_NODE_TAG_KEY`, the one its role's policy compares.
     */
    nodeTag: z.optional(
      z.strictObject({
        key: z.string().check(z.minLength(1, 'aws.nodeTag.key must not be empty'), z.maxLength(128, 'aws.nodeTag.key is at most 128 characters')),
        value: z.string().check(z.regex(SESSION_TAG_VALUE, 'aws.nodeTag.value must be 1–256 letters, digits, spaces or _.:/=+-@ (a session tag value)')),
      }),
    ),
  }),
);
export type AwsSettings = z.infer<typeof AwsSettingsSchema>;

/**
 * Why the deployment cannot serve this registration's `aws.nodeTag`, if it cannot: its EC2 role's
 * policy compares the instances' tag under `nodeTagKey` with the session's `volhook-nodes`, so a
 * registration naming another key would have every attach and detach refused by IAM.
 */
export function nodeTagProblem(registration: { clusterId: string; aws?: { nodeTag?: { key: string } } }, nodeTagKey: string): string | undefined {
  const key = registration.aws?.nodeTag?.key;
  if (key === undefined || key === nodeTagKey) return undefined;
  return (
    `registration of cluster "${registration.clusterId}" names aws.nodeTag.key "${key}", but this deployment's EC2 role fences instances by the tag "${nodeTagKey}" ` +
    '(VOLHOOK_NODE_TAG_KEY): IAM would refuse every attach and detach; register the tag under that key, or deploy with VOLHOOK_NODE_TAG_KEY set to it'
  );
}
