/**
 * STS `AssumeRole` (Query API, version 2011-06-15) on the simulator's endpoint, as the SDK's
 * STSClient and `aws sts assume-role` meet it: the role's trust names who may assume it (by
 * access key or principal ARN) and the ExternalId it requires; the session's tags become
 * `aws:PrincipalTag/<key>` for every call its credentials sign. Not evaluated: the caller's own
 * identity policy for `sts:AssumeRole`/`sts:TagSession` (trust alone decides), session policies
 * (`Policy`, `PolicyArns`: refused), MFA and source identity (refused).
 */
import { createHash } from 'node:crypto';
import type { IamPrincipal } from '../../iam/evaluate.js';
import { roleArnParts } from '../../registry/aws.js';
import type { QueryParams } from './query.js';
import { escapeXml } from './xml.js';

export const STS_VERSION = '2011-06-15';
export const STS_XMLNS = 'https://sts.amazonaws.com/doc/2011-06-15/';

/** A role the simulated account holds: what its sessions may do and who may assume it. */
export interface Ec2Role {
  policies: IamPrincipal['policies'];
  trust: {
    /** Access keys or principal ARNs allowed to assume the role. */
    principals: readonly string[];
    /** When set, AssumeRole must give exactly this ExternalId. */
    externalId?: string;
  };
  /** The role's MaxSessionDuration; IAM's default is one hour. */
  maxSessionSeconds?: number;
}

/** An answer STS gives as `<ErrorResponse><Error>`. */
export class StsError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status = 400,
    readonly type: 'Sender' | 'Receiver' = 'Sender',
  ) {
    super(message);
    this.name = 'StsError';
  }
}

const validation = (message: string) => new StsError('ValidationError', message);

export interface AssumeRoleRequest {
  roleArn: string;
  roleSessionName: string;
  durationSeconds: number;
  externalId?: string;
  tags: { key: string; value: string }[];
  transitiveTagKeys: string[];
}

const KNOWN_PARAMS = /^(Action|Version|RoleArn|RoleSessionName|DurationSeconds|ExternalId|Tags\.member\.\d+\.(Key|Value)|TransitiveTagKeys\.member\.\d+)$/;
const DEFAULT_DURATION = 3600;

/** The request's parameters, checked as STS checks them; any other parameter is refused by name. */
export function readAssumeRole(params: QueryParams): AssumeRoleRequest {
  const unknown = params.entries().map(([k]) => k).filter((k) => !KNOWN_PARAMS.test(k));
  if (unknown.length) throw validation(`The simulator does not implement AssumeRole parameter(s): ${unknown.join(', ')}`);
  const roleArn = params.str('RoleArn');
  const roleSessionName = params.str('RoleSessionName');
  if (!roleArn) throw validation("1 validation error detected: Value null at 'roleArn' failed to satisfy constraint: Member must not be null");
  if (!roleSessionName) throw validation("1 validation error detected: Value null at 'roleSessionName' failed to satisfy constraint: Member must not be null");
  if (!/^[\w+=,.@-]{2,64}$/.test(roleSessionName)) {
    throw validation(`1 validation error detected: Value '${roleSessionName}' at 'roleSessionName' failed to satisfy constraint: Member must satisfy regular expression pattern: [\\w+=,.@-]* and have length between 2 and 64`);
  }
  const duration = params.str('DurationSeconds');
  if (duration !== undefined && !/^\d+$/.test(duration)) throw validation(`Invalid value '${duration}' for DurationSeconds`);
  const durationSeconds = duration === undefined ? DEFAULT_DURATION : Number(duration);
  if (durationSeconds < 900 || durationSeconds > 43200) {
    throw validation(`1 validation error detected: Value '${durationSeconds}' at 'durationSeconds' failed to satisfy constraint: Member must have value between 900 and 43200`);
  }
  const externalId = params.str('ExternalId');
  if (externalId !== undefined && !/^[\w+=,.@:/-]{2,1224}$/.test(externalId)) {
    throw validation(`1 validation error detected: Value at 'externalId' failed to satisfy constraint: Member must satisfy regular expression pattern: [\\w+=,.@:\\/-]* and have length between 2 and 1224`);
  }
  const tags = params.scope('Tags').structs('member').map((t) => ({ key: t.str('Key') ?? '', value: t.str('Value') ?? '' }));
  if (tags.length > 50) throw validation('1 validation error detected: Value at \'tags\' failed to satisfy constraint: Member must have length less than or equal to 50');
  for (const t of tags) {
    if (t.key.length < 1 || t.key.length > 128) throw validation(`Session tag key '${t.key}' must have length between 1 and 128`);
    if (t.value.length > 256) throw validation(`Session tag value of '${t.key}' must have length at most 256`);
  }
  const lower = tags.map((t) => t.key.toLowerCase());
  if (new Set(lower).size !== lower.length) throw validation('Duplicate tag keys found. Please note that Tag keys are case insensitive.');
  const transitiveTagKeys = params.scope('TransitiveTagKeys').list('member');
  const missing = transitiveTagKeys.filter((k) => !lower.includes(k.toLowerCase()));
  if (missing.length) throw validation(`The specified transitive tag key(s) must be included in the requested tags: ${missing.join(', ')}`);
  return { roleArn, roleSessionName, durationSeconds, ...(externalId === undefined ? {} : { externalId }), tags, transitiveTagKeys };
}

/** Who signs an STS call: an access key, the ARN it signs for (when known), and its session when it is one. */
export interface StsCaller {
  accessKeyId?: string;
  arn?: string;
  session?: StsSession;
}

/** Credentials STS minted and what they stand for. */
export interface StsSession {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken: string;
  roleArn: string;
  roleSessionName: string;
  /** The account the role belongs to. */
  accountId: string;
  /** `arn:aws:sts::<account>:assumed-role/<role name>/<session name>`. */
  arn: string;
  /** `<role id>:<session name>`. */
  assumedRoleId: string;
  tags: Record<string, string>;
  transitiveTagKeys: string[];
  /** Epoch milliseconds, by the simulator's clock. */
  expiresAt: number;
}

/** New random credentials, as {@link decideAssumeRole} takes them. */
export interface MintedCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken: string;
}

/** An ID like IAM's `AROA…`, stable for the role's ARN. */
function roleId(roleArn: string): string {
  const digest = createHash('sha256').update(roleArn).digest();
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  return 'AROA' + [...digest.subarray(0, 17)].map((b) => alphabet[b % 32]).join('');
}

/**
 * STS's decision on one AssumeRole: the session it grants, or the refusal. A caller that is
 * itself a session passes on its transitive tags, which the request may not restate. A role
 * of an account the simulator does not hold is refused as one that does not exist.
 */
export function decideAssumeRole(
  request: AssumeRoleRequest,
  caller: StsCaller,
  roles: Readonly<Record<string, Ec2Role>>,
  now: number,
  credentials: MintedCredentials,
  heldAccounts: readonly string[],
): StsSession {
  const who = caller.arn ?? caller.accessKeyId ?? 'anonymous';
  const denied = (why: string) =>
    new StsError('AccessDenied', `User: ${who} is not authorized to perform: sts:AssumeRole on resource: ${request.roleArn} (${why})`, 403);
  const arn = roleArnParts(request.roleArn);
  if (arn && !heldAccounts.includes(arn.accountId)) throw denied(`the simulator holds no account ${arn.accountId} (it holds ${heldAccounts.join(', ')})`);
  const role = Object.hasOwn(roles, request.roleArn) ? roles[request.roleArn] : undefined;
  if (!role || !arn) throw denied('the simulated account holds no such role');
  const trusted = role.trust.principals.some((p) => p === caller.accessKeyId || (caller.arn !== undefined && p === caller.arn));
  if (!trusted) throw denied("the role's trust names neither this principal nor its access key");
  if (role.trust.externalId !== undefined && request.externalId !== role.trust.externalId) {
    throw denied(request.externalId === undefined ? 'the role requires an ExternalId and the request gives none' : "the request's ExternalId is not the one the role requires");
  }
  const max = role.maxSessionSeconds ?? DEFAULT_DURATION;
  if (request.durationSeconds > max) throw validation('The requested DurationSeconds exceeds the MaxSessionDuration set for this role.');

  const inherited = caller.session ? Object.entries(caller.session.tags).filter(([k]) => caller.session?.transitiveTagKeys.includes(k)) : [];
  const restated = request.tags.filter((t) => inherited.some(([k]) => k.toLowerCase() === t.key.toLowerCase()));
  if (restated.length) throw validation(`Session tag(s) ${restated.map((t) => t.key).join(', ')} are transitive from the calling session and cannot be set again`);
  const tags = Object.fromEntries([...inherited, ...request.tags.map((t) => [t.key, t.value] as const)]);
  const transitiveTagKeys = [...inherited.map(([k]) => k), ...request.transitiveTagKeys.map((k) => request.tags.find((t) => t.key.toLowerCase() === k.toLowerCase())?.key ?? k)];

  const { partition, accountId, name: roleName } = arn;
  return {
    ...credentials,
    roleArn: request.roleArn,
    roleSessionName: request.roleSessionName,
    accountId,
    arn: `arn:${partition}:sts::${accountId}:assumed-role/${roleName}/${request.roleSessionName}`,
    assumedRoleId: `${roleId(request.roleArn)}:${request.roleSessionName}`,
    tags,
    transitiveTagKeys,
    expiresAt: now + request.durationSeconds * 1000,
  };
}

/** The principal a session's calls are evaluated as: the role's policies, the session's ARN and tags. */
export function sessionPrincipal(session: StsSession, role: Ec2Role): IamPrincipal {
  const context: Record<string, string> = { 'aws:PrincipalArn': session.roleArn, 'aws:PrincipalAccount': session.accountId };
  for (const [k, v] of Object.entries(session.tags)) context[`aws:PrincipalTag/${k}`] = v;
  return { arn: session.arn, accountId: session.accountId, policies: role.policies, context };
}

function element(name: string, inner: string): string {
  return `<${name}>${inner}</${name}>`;
}

export function assumeRoleXml(session: StsSession, requestId: string): string {
  const credentials = element(
    'Credentials',
    element('AccessKeyId', escapeXml(session.accessKeyId)) +
      element('SecretAccessKey', escapeXml(session.secretAccessKey)) +
      element('SessionToken', escapeXml(session.sessionToken)) +
      element('Expiration', new Date(session.expiresAt).toISOString()),
  );
  const user = element('AssumedRoleUser', element('AssumedRoleId', escapeXml(session.assumedRoleId)) + element('Arn', escapeXml(session.arn)));
  // Tags are packed with the session; a percentage of the space STS allows (about 2 KB here).
  const packed = Object.keys(session.tags).length === 0 ? '' : element('PackedPolicySize', String(Math.max(1, Math.ceil((JSON.stringify(session.tags).length * 100) / 2048))));
  return (
    `<?xml version="1.0" encoding="UTF-8"?>\n<AssumeRoleResponse xmlns="${STS_XMLNS}">` +
    element('AssumeRoleResult', credentials + user + packed) +
    element('ResponseMetadata', element('RequestId', escapeXml(requestId))) +
    `</AssumeRoleResponse>`
  );
}

export function stsErrorXml(err: StsError, requestId: string): string {
  return (
    `<?xml version="1.0" encoding="UTF-8"?>\n<ErrorResponse xmlns="${STS_XMLNS}">` +
    element('Error', element('Type', err.type) + element('Code', escapeXml(err.code)) + element('Message', escapeXml(err.message))) +
    element('RequestId', escapeXml(requestId)) +
    `</ErrorResponse>`
  );
}
