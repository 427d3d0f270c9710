/**
 * What the IAM tests evaluate with: a cluster's session of the deployment's EC2 role, made as
 * the simulator's STS makes it (decideAssumeRole, sessionPrincipal: the role's policy and the
 * session tags as aws:PrincipalTag/*), and a small account (a World) to map calls against.
 */
import { SessionTagKeys } from '../../lib/contract/tags.js';
import type { IamPrincipal } from '../../lib/iam/evaluate.js';
import { ec2Role, ec2RoleArn, lambdaRolePrincipal } from '../../lib/iam/role-policy.js';
import { DEFAULT_LATENCY, zoneInfo } from '../../lib/local/ec2/config.js';
import { ManualClock } from '../../lib/local/ec2/clock.js';
import { seededRandom } from '../../lib/local/ec2/random.js';
import { DEFAULT_ACCOUNT_ID } from '../../lib/local/ec2/simulator.js';
import { decideAssumeRole, sessionPrincipal } from '../../lib/local/ec2/sts.js';
import { World } from '../../lib/local/ec2/world.js';

export const REGION = 'us-east-1';
export const ZONE = 'us-east-1a';
export const ACCOUNT_ID = DEFAULT_ACCOUNT_ID;

/** The backend: the Lambda role's session, as serverless.yml packages it. */
export const BACKEND = lambdaRolePrincipal({ region: REGION, accountId: ACCOUNT_ID });
export const EC2_ROLE_ARN = ec2RoleArn({ region: REGION, accountId: ACCOUNT_ID });
export const EC2_ROLE = ec2Role({ region: REGION, accountId: ACCOUNT_ID, trust: { principals: [BACKEND.arn] } });

/**
 * The principal a cluster's calls are evaluated as: its session of the EC2 role, tagged
 * volhook-cluster=<clusterId> (and volhook-nodes=<nodes> when given), as the backend assumes it.
 */
export function clusterSession(clusterId: string, nodes?: string): IamPrincipal {
  const tags = [{ key: SessionTagKeys.cluster, value: clusterId }, ...(nodes === undefined ? [] : [{ key: SessionTagKeys.nodes, value: nodes }])];
  const session = decideAssumeRole(
    { roleArn: EC2_ROLE_ARN, roleSessionName: `volhook-${clusterId}`, durationSeconds: 3600, tags, transitiveTagKeys: [] },
    { arn: BACKEND.arn },
    { [EC2_ROLE_ARN]: EC2_ROLE },
    0,
    { accessKeyId: `ASIA${clusterId.toUpperCase()}`, secretAccessKey: 'x', sessionToken: 'y' },
    [ACCOUNT_ID],
  );
  return sessionPrincipal(session, EC2_ROLE);
}

/** An empty account in one Region, as the simulator holds it. */
export function emptyWorld(): World {
  return new World({
    clock: new ManualClock(),
    rng: seededRandom(1),
    region: REGION,
    accountId: ACCOUNT_ID,
    zones: [zoneInfo(REGION, ZONE, 0)],
    timeScale: 1,
    latency: { ...DEFAULT_LATENCY },
    createFaults: [],
    attachFaults: [],
    snapshotFaults: [],
    attachmentSlots: 28,
    modificationWindowMs: 0,
  });
}
