/**
 * IAM in front of the simulated EC2: a caller whose access key belongs to a principal is held
 * to that principal's policies, as EC2 holds a role's session; the answer to a denied call is
 * EC2's `UnauthorizedOperation` (403), with the action, the resource and an "encoded
 * authorization failure message" (here base64 of the decision's JSON; AWS's is encrypted
 * for `sts decode-authorization-message`). Callers with any other access key are the account's
 * administrator — the operator's CLI, test setup — and are not evaluated.
 */
import { authorizer, type IamDecision, type IamPrincipal, type IamRequest } from '../../iam/evaluate.js';
import { authorizationRequests } from './authorization.js';
import { Ec2Error } from './errors.js';
import type { QueryParams } from './query.js';
import type { World } from './world.js';

export interface Ec2IamConfig {
  /** The principal each access key signs for. */
  principals: Readonly<Record<string, IamPrincipal>>;
}

/** Who signed the request: the access key of its SigV4 credential scope. */
export interface Ec2Caller {
  accessKeyId?: string;
}

/** The access key in `Authorization: AWS4-HMAC-SHA256 Credential=<key>/<date>/…` (or the presigned form). */
export function accessKeyOf(authorization: string | undefined, query: URLSearchParams): string | undefined {
  const credential = /Credential=([^/,\s]+)\//.exec(authorization ?? '')?.[1] ?? query.get('X-Amz-Credential')?.split('/')[0];
  return credential || undefined;
}

type Authorize = (requests: readonly IamRequest[]) => Promise<IamDecision>;

/** The simulator's IAM: holds each principal's callers to its policies. */
export class Ec2Iam {
  private readonly authorizers = new Map<string, { principal: IamPrincipal; authorize: Authorize }>();

  constructor(config: Ec2IamConfig | undefined) {
    for (const [key, principal] of Object.entries(config?.principals ?? {})) this.authorizers.set(key, { principal, authorize: authorizer(principal) });
  }

  /** Throws EC2's UnauthorizedOperation when the caller's principal may not make this call. */
  async check(caller: Ec2Caller | undefined, action: string, params: QueryParams, world: World): Promise<void> {
    const found = caller?.accessKeyId === undefined ? undefined : this.authorizers.get(caller.accessKeyId);
    if (!found) return;
    const decision = await found.authorize(authorizationRequests(action, params, world));
    if (!decision.allowed) throw unauthorized(found.principal, decision);
  }
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
