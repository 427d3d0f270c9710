/**
 * A session per cluster: the EC2 calls of a cluster are signed with credentials of an STS
 * session of its EC2 role, tagged `volhook-cluster=<cluster id>` (and `volhook-nodes=<value>`
 * where the registration names its nodes' tag), so the role's policy can fence each cluster to
 * its own disks by `aws:PrincipalTag`. Credentials are cached per (role, cluster, external id,
 * nodes) until {@link REFRESH_BEFORE_EXPIRY_MS} before they expire; callers waiting at the same
 * time share one AssumeRole; a failed AssumeRole is not remembered.
 */
import type { STSClient } from '@aws-sdk/client-sts';
import type { AwsCredentialIdentity, AwsCredentialIdentityProvider } from '@smithy/types';
import { SessionTagKeys } from '../contract/tags.js';
import { classifyEc2Error } from './errors.js';
import { accountOfRole } from './role-arn.js';
import { Ec2Error } from './types.js';

/** Credentials are renewed this long before STS says they expire. */
export const REFRESH_BEFORE_EXPIRY_MS = 5 * 60_000;
/** IAM's default MaxSessionDuration; a role may allow more, never less. */
export const SESSION_SECONDS = 3600;

/** Which session a cluster's calls run in. */
export interface SessionKey {
  roleArn: string;
  clusterId: string;
  externalId?: string;
  /** The value the cluster's instances carry under the deployment's node tag key. */
  nodes?: string;
}

/** The AssumeRole a session key asks for: session name, tags, ExternalId, duration. */
export function assumeRoleInput(key: SessionKey) {
  return {
    RoleArn: key.roleArn,
    // 2–64 characters of [\w+=,.@-]; a cluster id is 1–63 of [a-z0-9-].
    RoleSessionName: `volhook-${key.clusterId}`.slice(0, 64),
    DurationSeconds: SESSION_SECONDS,
    Tags: [
      { Key: SessionTagKeys.cluster, Value: key.clusterId },
      ...(key.nodes === undefined ? [] : [{ Key: SessionTagKeys.nodes, Value: key.nodes }]),
    ],
    ...(key.externalId === undefined ? {} : { ExternalId: key.externalId }),
  };
}

/** Whether credentials expiring at `expiresAt` may still be handed out at `now`. */
export function stillGood(expiresAt: number, now: number): boolean {
  return now < expiresAt - REFRESH_BEFORE_EXPIRY_MS;
}

export interface SessionCacheOptions {
  /** Sends AssumeRole; default an STSClient of `region` (with `endpoint` and `credentials`). */
  sts?: Pick<STSClient, 'send'>;
  region?: string;
  endpoint?: string;
  /** The backend's own credentials; default the SDK's provider chain (the Lambda role). */
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  now?: () => number;
}

export interface SessionCache {
  /** The credentials provider of the cluster's session, for an EC2 client. */
  provider(key: SessionKey): AwsCredentialIdentityProvider;
  /** AssumeRole calls made so far (answered or not). */
  stats(): { assumeRoleCalls: number; sessions: number };
}

/** What tells two sessions apart: everything AssumeRole is asked with. */
export const sessionKeyId = (k: SessionKey) => JSON.stringify([k.roleArn, k.clusterId, k.externalId ?? null, k.nodes ?? null]);

/** Why AssumeRole failed, as the gateway's errors say it: AccessDenied is permanent, the rest as EC2's. */
function assumeRoleError(err: unknown, key: SessionKey): Ec2Error {
  const classified = classifyEc2Error(err, 'AssumeRole');
  const code = classified.code;
  if (code === 'AccessDenied' || code === 'AccessDeniedException') {
    const error = new Ec2Error(
      'unauthorized',
      code,
      `STS AssumeRole of ${key.roleArn} for cluster "${key.clusterId}" was refused (${code}): check that the role's trust names the backend's role for sts:AssumeRole and sts:TagSession, and that its sts:ExternalId condition is the registration's aws.externalId (${key.externalId === undefined ? 'which names none' : 'given'}): ${classified.message}`,
      'AssumeRole',
    );
    error.cause = err;
    return error;
  }
  return classified;
}

export function createSessionCache(options: SessionCacheOptions = {}): SessionCache {
  const now = options.now ?? Date.now;
  // Loaded on first use: a backend whose clusters name no role never pays for it at cold start.
  let loaded: Promise<{ sts: Pick<STSClient, 'send'>; AssumeRoleCommand: typeof import('@aws-sdk/client-sts').AssumeRoleCommand }> | undefined;
  const load = () =>
    (loaded ??= import('@aws-sdk/client-sts').then(({ STSClient, AssumeRoleCommand }) => ({
      AssumeRoleCommand,
      sts:
        options.sts ??
        new STSClient({
          region: options.region ?? process.env.AWS_REGION ?? 'us-east-1',
          ...(options.endpoint !== undefined ? { endpoint: options.endpoint } : {}),
          ...(options.credentials !== undefined ? { credentials: options.credentials } : {}),
          maxAttempts: 2,
        }),
    })));
  const cached = new Map<string, { credentials: AwsCredentialIdentity; expiresAt: number }>();
  const inFlight = new Map<string, Promise<AwsCredentialIdentity>>();
  let calls = 0;

  async function assume(key: SessionKey, id: string): Promise<AwsCredentialIdentity> {
    calls++;
    let answer;
    try {
      const { sts, AssumeRoleCommand } = await load();
      answer = await sts.send(new AssumeRoleCommand(assumeRoleInput(key)));
    } catch (err) {
      throw assumeRoleError(err, key);
    }
    const c = answer.Credentials;
    if (!c?.AccessKeyId || !c.SecretAccessKey || !c.SessionToken || !c.Expiration) {
      throw new Ec2Error('other', 'IncompleteCredentials', `STS AssumeRole of ${key.roleArn} answered without complete credentials`, 'AssumeRole');
    }
    const credentials = { accessKeyId: c.AccessKeyId, secretAccessKey: c.SecretAccessKey, sessionToken: c.SessionToken, expiration: c.Expiration };
    cached.set(id, { credentials, expiresAt: c.Expiration.getTime() });
    return credentials;
  }

  return {
    provider(key) {
      accountOfRole(key.roleArn);
      const id = sessionKeyId(key);
      return async () => {
        const hit = cached.get(id);
        if (hit && stillGood(hit.expiresAt, now())) return hit.credentials;
        let pending = inFlight.get(id);
        if (!pending) {
          pending = assume(key, id).finally(() => inFlight.delete(id));
          inFlight.set(id, pending);
        }
        return pending;
      };
    },
    stats: () => ({ assumeRoleCalls: calls, sessions: cached.size }),
  };
}
