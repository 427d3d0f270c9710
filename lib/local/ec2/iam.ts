/**
 * IAM in front of the simulated EC2: a caller whose access key belongs to a principal is held
 * to that principal's policies, as EC2 holds a role's session; the answer to a denied call is
 * EC2's `UnauthorizedOperation` (403), with the action, the resource and an "encoded
 * authorization failure message" (here base64 of the decision's JSON; AWS's is encrypted
 * for `sts decode-authorization-message`). Callers with any other access key are an account's
 * administrator — the operator's CLI, test setup — and are not evaluated; `administrators`
 * names the account of such a key, else it is the simulator's own. Credentials minted
 * by STS AssumeRole (sts.ts) are held to their role's policies, with the session's tags, until
 * they expire (then EC2's `RequestExpired`).
 */
import { randomBytes } from 'node:crypto';
import { authorizer, type IamDecision, type IamPrincipal, type IamRequest } from '../../iam/evaluate.js';
import { isAccountId } from './accounts.js';
import { authorizationRequests } from './authorization.js';
import { Ec2Error } from './errors.js';
import type { Clock } from './clock.js';
import type { QueryParams } from './query.js';
import { isRoleArn } from '../../registry/aws.js';
import { decideAssumeRole, readAssumeRole, sessionPrincipal, StsError, type Ec2Role, type StsCaller, type StsSession } from './sts.js';
import type { World } from './world.js';

export interface Ec2IamConfig {
  /** The principal each access key signs for; its calls are served in the principal's account. */
  principals?: Readonly<Record<string, IamPrincipal>>;
  /** The roles STS AssumeRole can grant sessions of, by role ARN; a session's calls are served in the role's account. */
  roles?: Readonly<Record<string, Ec2Role>>;
  /** Access keys of administrators (not evaluated) of an account other than the simulator's own, to that account. */
  administrators?: Readonly<Record<string, string>>;
}

/** Who signed the request: the access key of its SigV4 credential scope, and its session token; the scope's Region. */
export interface Ec2Caller {
  accessKeyId?: string;
  sessionToken?: string;
  /** The Region the request is signed for: the one it is served in (see Ec2SimulatorOptions.regions). */
  region?: string;
}

/** The access key in `Authorization: AWS4-HMAC-SHA256 Credential=<key>/<date>/…` (or the presigned form). */
export function accessKeyOf(authorization: string | undefined, query: URLSearchParams): string | undefined {
  const credential = /Credential=([^/,\s]+)\//.exec(authorization ?? '')?.[1] ?? query.get('X-Amz-Credential')?.split('/')[0];
  return credential || undefined;
}

/** The Region in `Credential=<key>/<date>/<region>/<service>/aws4_request` (or the presigned form). */
export function signedRegionOf(authorization: string | undefined, query: URLSearchParams): string | undefined {
  const scope = /Credential=[^/,\s]+\/\d{8}\/([^/,\s]+)\//.exec(authorization ?? '')?.[1] ?? query.get('X-Amz-Credential')?.split('/')[2];
  return scope || undefined;
}

/** The session token in `X-Amz-Security-Token` (header, or query of a presigned request). */
export function sessionTokenOf(header: string | string[] | undefined, query: URLSearchParams): string | undefined {
  const token = (Array.isArray(header) ? header[0] : header) ?? query.get('X-Amz-Security-Token');
  return token || undefined;
}

type Authorize = (requests: readonly IamRequest[]) => Promise<IamDecision>;

function token(bytes: number, alphabet?: string): string {
  const raw = randomBytes(bytes);
  return alphabet ? [...raw].map((b) => alphabet[b % alphabet.length]).join('') : raw.toString('base64');
}

/** The simulator's IAM: holds each principal's callers, and each STS session's, to their policies. */
export class Ec2Iam {
  private readonly authorizers = new Map<string, { principal: IamPrincipal; authorize: Authorize }>();
  private readonly roles: Record<string, Ec2Role> = {};
  private readonly administrators = new Map<string, string>();
  private readonly sessions = new Map<string, { session: StsSession; principal: IamPrincipal; authorize: Authorize }>();

  constructor(
    config: Ec2IamConfig | undefined,
    private readonly clock: Clock,
  ) {
    for (const [key, accountId] of Object.entries(config?.administrators ?? {})) {
      if (!isAccountId(accountId)) throw new Error(`EC2 simulator: administrator key ${key} names account ${JSON.stringify(accountId)}, which is not 12 digits`);
      this.administrators.set(key, accountId);
    }
    for (const [key, principal] of Object.entries(config?.principals ?? {})) this.addPrincipal(key, principal);
    for (const [arn, role] of Object.entries(config?.roles ?? {})) this.addRole(arn, role);
  }

  /** Holds the calls signed with `accessKeyId` to the principal's policies, in the principal's account. */
  addPrincipal(accessKeyId: string, principal: IamPrincipal): void {
    if (!accessKeyId) throw new Error('EC2 simulator: a principal needs an access key');
    if (this.administrators.has(accessKeyId) || this.authorizers.has(accessKeyId) || this.sessions.has(accessKeyId)) {
      throw new Error(`EC2 simulator: access key ${accessKeyId} already signs for someone`);
    }
    if (!isAccountId(principal.accountId)) throw new Error(`EC2 simulator: principal ${principal.arn} has account ${JSON.stringify(principal.accountId)}, which is not 12 digits`);
    this.authorizers.set(accessKeyId, { principal, authorize: authorizer(principal) });
  }

  /** A role STS AssumeRole may grant sessions of from now on. */
  addRole(roleArn: string, role: Ec2Role): void {
    if (!isRoleArn(roleArn)) throw new Error(`EC2 simulator: ${JSON.stringify(roleArn)} is not a role ARN (arn:<partition>:iam::<account>:role/<path>/<name>)`);
    if (Object.hasOwn(this.roles, roleArn)) throw new Error(`EC2 simulator: role ${roleArn} is already held`);
    this.roles[roleArn] = role;
  }

  /** The account of the credentials: a session's role's, a principal's, a named administrator's; undefined for any other key. */
  accountOf(accessKeyId: string | undefined): string | undefined {
    if (accessKeyId === undefined) return undefined;
    return this.sessions.get(accessKeyId)?.session.accountId ?? this.authorizers.get(accessKeyId)?.principal.accountId ?? this.administrators.get(accessKeyId);
  }

  /** The accounts the administrator keys name. */
  administratorAccounts(): string[] {
    return [...new Set(this.administrators.values())];
  }

  /** STS AssumeRole: the session granted (remembered by its access key), or StsError. */
  assumeRole(caller: Ec2Caller | undefined, params: QueryParams, heldAccounts: readonly string[]): StsSession {
    const request = readAssumeRole(params);
    const key = caller?.accessKeyId;
    const stsCaller: StsCaller = { ...(key === undefined ? {} : { accessKeyId: key }) };
    const signer = key === undefined ? undefined : this.authorizers.get(key);
    const session = key === undefined ? undefined : this.sessions.get(key)?.session;
    if (signer) stsCaller.arn = signer.principal.arn;
    if (session) {
      if (caller?.sessionToken !== session.sessionToken) throw new StsError('InvalidClientTokenId', 'The security token included in the request is invalid.', 403);
      if (this.clock.now() >= session.expiresAt) throw new StsError('ExpiredToken', 'The security token included in the request is expired');
      stsCaller.arn = session.arn;
      stsCaller.session = session;
    }
    const granted = decideAssumeRole(request, stsCaller, this.roles, this.clock.now(), {
      accessKeyId: 'ASIA' + token(16, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567'),
      secretAccessKey: token(30),
      sessionToken: token(96),
    }, heldAccounts);
    const principal = sessionPrincipal(granted, this.roles[granted.roleArn] as Ec2Role);
    this.sessions.set(granted.accessKeyId, { session: granted, principal, authorize: authorizer(principal) });
    return granted;
  }

  /**
   * Throws EC2's UnauthorizedOperation when the caller's principal may not make this call;
   * RequestExpired for a session past its expiration, AuthFailure for a session key without
   * its token.
   */
  async check(caller: Ec2Caller | undefined, action: string, params: QueryParams, world: World): Promise<void> {
    const key = caller?.accessKeyId;
    const found = key === undefined ? undefined : (this.authorizers.get(key) ?? this.sessionOf(key, caller?.sessionToken));
    if (!found) return;
    const decision = await found.authorize(authorizationRequests(action, params, world));
    if (!decision.allowed) throw unauthorized(found.principal, decision);
  }

  private sessionOf(key: string, sessionToken: string | undefined): { principal: IamPrincipal; authorize: Authorize } | undefined {
    const found = this.sessions.get(key);
    if (found) sessionCheck(found.session, sessionToken, this.clock.now());
    return found;
  }
}

function sessionCheck(session: StsSession, sessionToken: string | undefined, now: number): void {
  if (sessionToken !== session.sessionToken) throw new Ec2Error('AuthFailure', 'AWS was not able to validate the provided access credentials', 401);
  if (now >= session.expiresAt) throw new Ec2Error('RequestExpired', 'Request has expired.', 400);
}

function unauthorized(principal: IamPrincipal, decision: Extract<IamDecision, { allowed: false }>): Ec2Error {
  const { request, result } = decision;
  const because = result === 'ExplicitlyDenied' ? 'with an explicit deny in an identity-based policy' : 'because no identity-based policy allows the ' + request.action + ' action';
  const encoded = Buffer.from(JSON.stringify({ allowed: false, explicitDeny: result === 'ExplicitlyDenied', context: { principal: principal.arn, action: request.action, resource: request.resource, conditions: request.context } })).toString('base64');
  return new Ec2Error(
    'UnauthorizedOperation',
    `You are not authorized to perform this operation. User: ${principal.arn} is not authorized to perform: ${request.action} on resource: ${request.resource} ${because}. Encoded authorization failure message: ${encoded}`,
    403,
  );
}
