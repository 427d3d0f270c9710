/**
 * IAM's decision on authorization requests, by an independent evaluator
 * (`@cloud-copilot/iam-simulate`, with AWS's Service Authorization Reference): the identity
 * policies of one principal, no SCPs, no resource policies, no boundaries. Context keys the
 * reference does not list for the action and resource type are dropped by the evaluator, as
 * AWS never sends them.
 */
import { runSimulation } from '@cloud-copilot/iam-simulate';
import { listOf, type PolicyDocument } from './policy.js';

export interface IamRequest {
  action: string;
  /** The resource's ARN; one being created ends in `/*` (`…:volume/*`). */
  resource: string;
  context: Record<string, string | string[]>;
}

export interface IamPrincipal {
  /** The caller, e.g. `arn:aws:sts::123456789012:assumed-role/volhook-ec2/volhook`. */
  arn: string;
  accountId: string;
  policies: readonly { name: string; document: PolicyDocument }[];
  /** Keys every request of this principal carries (a session's `aws:PrincipalTag/*`, `aws:PrincipalArn`). */
  context?: Readonly<Record<string, string | string[]>>;
}

export type IamDecision =
  | { allowed: true }
  | { allowed: false; request: IamRequest; result: 'ImplicitlyDenied' | 'ExplicitlyDenied' | 'Error'; detail: string };

/**
 * A resource not created yet is evaluated with a placeholder ID of its type, so that patterns
 * like `volume/*` match it as they match the resource it becomes.
 */
const PLACEHOLDER_IDS: Record<string, string> = {
  volume: 'vol-00000000000000000',
  snapshot: 'snap-00000000000000000',
  instance: 'i-00000000000000000',
};

function evaluatedArn(resource: string): string {
  const m = /^(.*:)([a-z-]+)\/\*$/.exec(resource);
  const placeholder = m && PLACEHOLDER_IDS[m[2] as string];
  return m && placeholder ? `${m[1]}${m[2]}/${placeholder}` : resource;
}

/**
 * The account a resource is in (`aws:ResourceAccount`): the one its ARN names (an IAM role's
 * `arn:aws:iam::<account>:role/…`), else the caller's (a snapshot's ARN names none).
 */
function resourceAccount(resource: string, principal: IamPrincipal): string {
  const account = resource.split(':')[4];
  return account && /^\d{12}$/.test(account) ? account : principal.accountId;
}

/** IAM's answer to one request, as the evaluator gives it. */
async function evaluate(principal: IamPrincipal, request: IamRequest): Promise<IamDecision> {
  const result = await runSimulation(
    {
      request: {
        principal: principal.arn,
        action: request.action,
                // The caller's account, so that only the identity policies decide (a role's trust is STS's
        // part, lib/local/ec2/sts.ts); the resource's own account is aws:ResourceAccount below.
        resource: { resource: evaluatedArn(request.resource), accountId: principal.accountId },
        // A global key AWS sets on every request to a resource of an account; the evaluator does not derive it.
        contextVariables: { 'aws:ResourceAccount': resourceAccount(request.resource, principal), ...request.context },
      },
      identityPolicies: principal.policies.map((p) => ({ name: p.name, policy: p.document })),
      serviceControlPolicies: [],
      resourceControlPolicies: [],
    },
    {},
  );
  if (result.resultType === 'error') return { allowed: false, request, result: 'Error', detail: result.errors.message };
  if (result.overallResult !== 'Allowed') return { allowed: false, request, result: result.overallResult, detail: result.overallResult };
  return { allowed: true };
}

/**
 * What a decision can depend on, as a cache key: the action, the resource's ARN and the
 * context keys the policies' conditions name (compared without case, as IAM compares key
 * names). Where no resource pattern names an ID (each ends in `/*` or is `*`), the ID is left
 * out of the ARN, so that the thousand volumes of a cluster share one entry.
 */
function keyer(principal: IamPrincipal): (request: IamRequest) => string {
  const statements = principal.policies.flatMap((p) => p.document.Statement);
  const conditionKeys = statements.flatMap((s) => Object.values(s.Condition ?? {}).flatMap((keys) => Object.keys(keys)));
  // Policy variables (`${aws:PrincipalTag/…}`) read context keys too.
  const variables = [...JSON.stringify(statements).matchAll(/\$\{([^}]+)\}/g)].map((m) => m[1] as string);
  const named = new Set([...conditionKeys, ...variables].map((k) => k.toLowerCase()));
  const patterns = statements.flatMap((s) => [...listOf(s.Resource), ...listOf(s.NotResource)]);
  const idFree = patterns.every((r) => r === '*' || /^[^$]*\/\*$/.test(r));
  return (request) => {
    const resource = idFree ? request.resource.replace(/\/[^/]*$/, '/') : request.resource;
    const context = Object.entries(request.context)
      .filter(([k]) => named.has(k.toLowerCase()))
      .sort(([a], [b]) => (a < b ? -1 : 1));
    return JSON.stringify([request.action, resource, context]);
  };
}

const CACHE_LIMIT = 10_000;

/**
 * The first request the principal's policies do not allow, or allowed when they allow all;
 * decisions are remembered per principal (see {@link keyer}).
 */
export function authorizer(principal: IamPrincipal): (requests: readonly IamRequest[]) => Promise<IamDecision> {
  const key = keyer(principal);
  const cache = new Map<string, IamDecision>();
  const withPrincipal = (request: IamRequest): IamRequest => (principal.context ? { ...request, context: { ...principal.context, ...request.context } } : request);
  return async (requests) => {
    for (const given of requests) {
      const request = withPrincipal(given);
      const k = key(request);
      let decision = cache.get(k);
      if (!decision) {
        decision = await evaluate(principal, request);
        if (cache.size >= CACHE_LIMIT) cache.clear();
        cache.set(k, decision);
      }
      if (!decision.allowed) return { ...decision, request };
    }
    return { allowed: true };
  };
}
