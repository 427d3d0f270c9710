/**
 * IAM's decision on authorization requests, by an independent evaluator
 * (`@cloud-copilot/iam-simulate`, with AWS's Service Authorization Reference): the identity
 * policies of one principal, no SCPs, no resource policies, no boundaries. Context keys the
 * reference does not list for the action and resource type are dropped by the evaluator, as
 * AWS never sends them.
 */
import { runSimulation } from '@cloud-copilot/iam-simulate';
import type { PolicyDocument } from './policy.js';

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

/** The first request the principal's policies do not allow, or allowed when they allow all. */
export async function authorize(principal: IamPrincipal, requests: readonly IamRequest[]): Promise<IamDecision> {
  for (const request of requests) {
    const result = await runSimulation(
      {
        request: {
          principal: principal.arn,
          action: request.action,
          resource: { resource: evaluatedArn(request.resource), accountId: principal.accountId },
          contextVariables: request.context,
        },
        identityPolicies: principal.policies.map((p) => ({ name: p.name, policy: p.document })),
        serviceControlPolicies: [],
        resourceControlPolicies: [],
      },
      {},
    );
    if (result.resultType === 'error') {
      return { allowed: false, request, result: 'Error', detail: result.errors.message };
    }
    if (result.overallResult !== 'Allowed') {
      return { allowed: false, request, result: result.overallResult, detail: result.overallResult };
    }
  }
  return { allowed: true };
}
