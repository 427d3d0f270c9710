/**
 * Where a deployed function's EC2 calls go and under which role, from its environment:
 * - `VOLHOOK_EC2_ROLE_ARN`: the deployment's EC2 role, assumed for every cluster whose
 *   registration names no `aws.roleArn` (none set and none named: EC2 work is refused);
 * - `VOLHOOK_NODE_TAG_KEY`: the instance tag that role fences attaches by (default `eks:cluster-name`);
 * - `AWS_ENDPOINT_URL_EC2`, `AWS_ENDPOINT_URL_STS` (else `AWS_ENDPOINT_URL`): endpoint overrides;
 * - `VOLHOOK_AWS_ACCOUNT`: the budget account, only for calls made without a session.
 */
import { nodeTagKeyFrom } from '../registry/node-tag-key.js';

export interface Ec2Environment {
  ec2RoleArn?: string;
  nodeTagKey: string;
  ec2Endpoint?: string;
  stsEndpoint?: string;
  account?: string;
}

export function ec2FromEnvironment(env: NodeJS.ProcessEnv): Ec2Environment {
  const value = (name: string) => env[name]?.trim() || undefined;
  const ec2RoleArn = value('VOLHOOK_EC2_ROLE_ARN');
  const ec2Endpoint = value('AWS_ENDPOINT_URL_EC2') ?? value('AWS_ENDPOINT_URL');
  const stsEndpoint = value('AWS_ENDPOINT_URL_STS') ?? value('AWS_ENDPOINT_URL');
  const account = value('VOLHOOK_AWS_ACCOUNT');
  return {
    nodeTagKey: nodeTagKeyFrom(env),
    ...(ec2RoleArn !== undefined && { ec2RoleArn }),
    ...(ec2Endpoint !== undefined && { ec2Endpoint }),
    ...(stsEndpoint !== undefined && { stsEndpoint }),
    ...(account !== undefined && { account }),
  };
}
