/**
 * A session per cluster: the backend makes no EC2 call under its own role. For each cluster it
 * assumes the cluster's EC2 role with STS AssumeRole, tagging the session with the cluster's id
 * (`volhook-cluster`, and `volhook-nodes` where the registration names its nodes' tag), so
 * the role's policy can fence every call to that cluster's disks and instances
 * (`${aws:PrincipalTag/volhook-cluster}`).
 *
 * Credentials are cached per (role, cluster, ExternalId, nodes) for the process and taken anew
 * 5 minutes before they expire: at most one AssumeRole per cluster per container per hour.
 * Callers that ask at once share one AssumeRole; one that failed is not remembered, so the next
 * caller asks STS again.
 */
import type { AssumeRoleCommandInput, STSClient } from '@aws-sdk/client-sts';
import { SessionTagKeys } from '../contract/tags.js';
import { EC2_ROLE_PATH, roleArnPath } from '../registry/aws.js';
import { DEFAULT_CONNECTION_TIMEOUT_MS, DEFAULT_MAX_ATTEMPTS, DEFAULT_REQUEST_TIMEOUT_MS } from './client.js';
import { classifyEc2Error } from './errors.js';
import { Ec2Error } from './types.js';

/** How long a session lasts: IAM's default MaxSessionDuration, which every role allows. */
export const SESSION_DURATION_SECONDS = 3600;
/** Credentials are taken anew this long before they expire, so no call is signed with ones about to lapse. */
export const REFRESH_BEFORE_EXPIRY_MS = 5 * 60_000;
/** STS's limit on RoleSessionName. */
const MAX_SESSION_NAME = 64;

/** What a session is cached by: every input of its AssumeRole. */
export interface SessionKey {
  roleArn: string;
  clusterId: string;
  /** The registration's `aws.externalId`, sent when its role's trust requires one. */
  externalId?: string;
  /** The value the cluster's instances carry under the deployment's node tag key: session tag `volhook-nodes`. */
  nodes?: string;
}

/** Temporary credentials of one cluster's session, as the SDK's signer takes them. */
export interface SessionCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken: string;
  expiration: Date;
}

/** An AWS SDK credentials provider (`AwsCredentialIdentityProvider`) for one cluster's session. */
export type SessionCredentialsProvider = () => Promise<SessionCredentials>;

/** The session of a registration: its own role, else the deployment's; undefined when neither names one. */
export function sessionKeyOf(
  registration: { clusterId: string; aws?: { roleArn?: string; externalId?: string; nodeTag?: { value: string } } },
  defaultRoleArn: string | undefined,
): SessionKey | undefined {
  const roleArn = registration.aws?.roleArn ?? defaultRoleArn;
  if (!roleArn) return undefined;
  const { externalId } = registration.aws ?? {};
  const nodes = registration.aws?.nodeTag?.value;
  return { roleArn, clusterId: registration.clusterId, ...(externalId !== undefined && { externalId }), ...(nodes !== undefined && { nodes }) };
}

/** `volhook-<clusterId>`, cut to STS's 64 characters: what CloudTrail names the session by. */
export function roleSessionName(clusterId: string): string {
  return `volhook-${clusterId}`.slice(0, MAX_SESSION_NAME);
}

/** The AssumeRole request of a session. */
export function assumeRoleInput(key: SessionKey): AssumeRoleCommandInput {
  return {
    RoleArn: key.roleArn,
    RoleSessionName: roleSessionName(key.clusterId),
    DurationSeconds: SESSION_DURATION_SECONDS,
    Tags: [
      { Key: SessionTagKeys.cluster, Value: key.clusterId },
      ...(key.nodes !== undefined ? [{ Key: SessionTagKeys.nodes, Value: key.nodes }] : []),
    ],
    ...(key.externalId !== undefined && { ExternalId: key.externalId }),
  };
}

/** Whether credentials expiring at `expiresAtMs` may still sign a call at `nowMs` (epoch ms). */
export function credentialsUsable(expiresAtMs: number, nowMs: number): boolean {
  return nowMs < expiresAtMs - REFRESH_BEFORE_EXPIRY_MS;
}

/**
 * What an AssumeRole failure means: throttling, 5xx and network failures are `transient` (the
 * item is requeued and the next request asks STS again); anything else — AccessDenied above
 * all — is `sessionDenied`, a failure of the cluster's configuration with a message that names
 * the role, the cluster and what to fix.
 */
export function assumeRoleError(err: unknown, key: SessionKey): Ec2Error {
  const classified = classifyEc2Error(err, 'AssumeRole');
  const detail = (classified.cause instanceof Error && classified.cause.message) || classified.message;
  const what = `STS AssumeRole of ${key.roleArn} for cluster "${key.clusterId}"`;
  let error: Ec2Error;
  if (classified.kind === 'transient') {
    error = new Ec2Error('transient', classified.code, `${what} failed (${classified.code}: ${detail}); tried again with the next request`, 'AssumeRole');
  } else {
    const fix =
      classified.code === 'AccessDenied'
        ? accessDeniedFix(key)
        : classified.code === 'RegionDisabledException'
          ? "STS is not activated in the backend's region for the role's account: activate it in IAM (Account settings)"
          : `the cluster's registration (aws.roleArn, aws.externalId, aws.nodeTag) and the role`;
    error = new Ec2Error(
      'sessionDenied',
      'AssumeRoleDenied',
      `${what} was refused (${classified.code}: ${detail}); no EC2 call is made for this cluster until it succeeds. Check ${fix}`,
      'AssumeRole',
    );
  }
  error.cause = err;
  return error;
}

function accessDeniedFix(key: SessionKey): string {
  const checks = [
    `the trust policy of ${key.roleArn}: it must allow the backend's role sts:AssumeRole and sts:TagSession` +
      (key.externalId !== undefined ? ", on the condition sts:ExternalId equal to the registration's aws.externalId" : ''),
  ];
  if (key.externalId === undefined) checks.push('whether the role requires an ExternalId the registration does not name (aws.externalId)');
  if (roleArnPath(key.roleArn) !== EC2_ROLE_PATH) checks.push(`the role's path: the backend's role may only assume roles under ${EC2_ROLE_PATH}`);
  return checks.join('; ');
}

/** The error of EC2 work for a cluster no role is configured for. */
export function noRoleError(clusterId: string): Ec2Error {
  return new Ec2Error(
    'sessionDenied',
    'NoEc2Role',
    `no EC2 role for cluster "${clusterId}": its registration names no aws.roleArn and the deployment sets no VOLHOOK_EC2_ROLE_ARN; ` +
      "the backend makes no EC2 call under its own role. Set one of them (npm run cluster -- add … --role-arn, or the deployment's EC2 role)",
  );
}

export interface StsClientOptions {
  /** The backend's own Region (default: the SDK's, AWS_REGION): credentials STS issues there are good in every Region. */
  region?: string;
  /** E.g. the local simulator's URL; default the Region's STS endpoint. */
  endpoint?: string;
  /** Static base credentials (local endpoints); default the SDK's provider chain (the Lambda's role, the operator's profile). */
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  maxAttempts?: number;
  requestTimeoutMs?: number;
  connectionTimeoutMs?: number;
}

/**
 * The process's STS client, with the EC2 client's retry mode, attempts and timeouts (see
 * lib/ec2/client.ts): a hung AssumeRole is cut off early and tried again. Loaded on first use:
 * a cold start pays for the STS client with the first request that needs a session.
 */
export async function createStsClient(options: StsClientOptions = {}): Promise<STSClient> {
  const { STSClient } = await import('@aws-sdk/client-sts');
  return new STSClient({
    ...(options.region !== undefined && { region: options.region }),
    ...(options.endpoint !== undefined && { endpoint: options.endpoint }),
    ...(options.credentials !== undefined && { credentials: options.credentials }),
    retryMode: 'standard',
    maxAttempts: options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS,
    requestHandler: {
      requestTimeout: options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
      throwOnRequestTimeout: true,
      connectionTimeout: options.connectionTimeoutMs ?? DEFAULT_CONNECTION_TIMEOUT_MS,
    },
  });
}

export interface ClusterSessionsOptions {
  /** The STS client (tests mock it); default one made on first use from `stsClient`. */
  sts?: STSClient;
  stsClient?: StsClientOptions;
  /** Epoch ms; tests move it to see credentials taken anew before they expire. */
  now?(): number;
}

/** What the sessions cost so far: the AssumeRole calls made (a cold container's first request makes one per cluster). */
export interface SessionStats {
  assumeRoleCalls: number;
  assumeRoleFailures: number;
  /** Sessions whose credentials are held now. */
  cached: number;
}

export interface ClusterSessions {
  /** The session's credentials: cached ones while usable, else those of one AssumeRole (shared by callers at once). */
  credentials(key: SessionKey): Promise<SessionCredentials>;
  /** A provider of {@link credentials} for an SDK client of this session. */
  provider(key: SessionKey): SessionCredentialsProvider;
  stats(): SessionStats;
}

/** The sessions of one process (make one, at module scope of the Lambda): the cache lives as long as it. */
export function createClusterSessions(options: ClusterSessionsOptions = {}): ClusterSessions {
  const now = options.now ?? Date.now;
  const held = new Map<string, SessionCredentials>();
  const inFlight = new Map<string, Promise<SessionCredentials>>();
  let sts: Promise<STSClient> | undefined;
  let assumeRoleCalls = 0;
  let assumeRoleFailures = 0;

  const stsClient = () => {
    const client = (sts ??= options.sts ? Promise.resolve(options.sts) : createStsClient(options.stsClient));
    // A failed load is tried again by the next caller.
    client.catch(() => {
      if (sts === client) sts = undefined;
    });
    return client;
  };

  async function assume(key: SessionKey, cacheKey: string): Promise<SessionCredentials> {
    assumeRoleCalls++;
    let out;
    try {
      const [client, { AssumeRoleCommand }] = await Promise.all([stsClient(), import('@aws-sdk/client-sts')]);
      out = await client.send(new AssumeRoleCommand(assumeRoleInput(key)));
    } catch (err) {
      assumeRoleFailures++;
      throw assumeRoleError(err, key);
    }
    const { AccessKeyId, SecretAccessKey, SessionToken, Expiration } = out.Credentials ?? {};
    if (!AccessKeyId || !SecretAccessKey || !SessionToken || !Expiration) {
      assumeRoleFailures++;
      throw new Ec2Error('other', 'AssumeRoleNoCredentials', `STS AssumeRole of ${key.roleArn} for cluster "${key.clusterId}" answered without credentials`, 'AssumeRole');
    }
    const credentials = { accessKeyId: AccessKeyId, secretAccessKey: SecretAccessKey, sessionToken: SessionToken, expiration: new Date(Expiration) };
    held.set(cacheKey, credentials);
    return credentials;
  }

  function credentials(key: SessionKey): Promise<SessionCredentials> {
    const cacheKey = JSON.stringify([key.roleArn, key.clusterId, key.externalId ?? null, key.nodes ?? null]);
    const cached = held.get(cacheKey);
    if (cached && credentialsUsable(cached.expiration.getTime(), now())) return Promise.resolve(cached);
    let pending = inFlight.get(cacheKey);
    if (!pending) {
      held.delete(cacheKey);
      pending = assume(key, cacheKey).finally(() => inFlight.delete(cacheKey));
      inFlight.set(cacheKey, pending);
    }
    return pending;
  }

  return {
    credentials,
    provider: (key) => () => credentials(key),
    stats: () => ({ assumeRoleCalls, assumeRoleFailures, cached: held.size }),
  };
}
