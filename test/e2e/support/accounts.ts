/**
 * Two clusters in two AWS accounts behind one backend, as a fleet runs it: one simulator holding
 * both accounts and the one STS; the deployment's own EC2 role in its account, a member
 * account's EC2 role (infra/member-account/ec2-role.yaml) trusting the backend with an
 * ExternalId; one backend (its key the Lambda role's, EC2 only in a cluster's session), one rate
 * budget and one report store; and per cluster a Kubernetes API, its controllers, its nodes (in
 * its own account) and its forwarder, each stack's operator key an administrator of that account.
 */
import { CreateVolumeCommand } from '@aws-sdk/client-ec2';
import { AssumeRoleCommand, STSClient } from '@aws-sdk/client-sts';
import { createBackendApp } from '../../../lib/app/index.js';
import { createClusterSessions, type ClusterSessions } from '../../../lib/ec2/index.js';
import { createMemoryBudget, type BucketKey, type RateBudget } from '../../../lib/budget/index.js';
import { DEFAULT_NODE_TAG_KEY, type Result } from '../../../lib/contract/index.js';
import { deploymentIam, memberEc2Role, memberEc2RoleArn } from '../../../lib/iam/role-policy.js';
import { DEFAULT_ACCOUNT_ID, startEc2Simulator } from '../../../lib/local/ec2/index.js';
import { startBackendServer } from '../../../lib/local/stack/backend-server.js';
import { BACKEND_CREDENTIALS } from '../../../lib/local/stack/stack.js';
import { createStaticRegistry, type ClusterRegistrationInput } from '../../../lib/registry/index.js';
import { createMemoryReplayStore } from '../../../lib/replay/index.js';
import { createMemoryReportStore, type ReportStore } from '../../../lib/reports/index.js';
import { resultLog, type ScenarioContext } from './scenarios.js';
import { startE2eStack, type E2eStack } from './stack.js';

export const REGION = 'us-east-1';
export const OWN_ACCOUNT = DEFAULT_ACCOUNT_ID;
export const MEMBER_ACCOUNT = '222222222222';
export const EXTERNAL_ID = 'volhook-e2e-member-account';
/** The member account's operator (test setup, its nodes): the simulator's administrator of it. */
const MEMBER_OPERATOR = { accessKeyId: 'operator-member', secretAccessKey: 'local' };
const TIME_SCALE = 40;

export interface FleetCluster {
  stack: E2eStack;
  ctx: ScenarioContext;
  registration: ClusterRegistrationInput;
  account: string;
}

export interface BudgetTake {
  key: BucketKey;
  wanted: number;
  granted: number;
}

export interface TwoAccounts {
  /** EC2 and STS: the simulator's, or moto's. */
  url: string;
  /** The backend's sessions (their AssumeRole count). */
  sessions: ClusterSessions;
  /** Puts a disk with these tags into the cluster's account, made more than the grace ago. */
  seedOrphan(cluster: FleetCluster, tags: Record<string, string>): Promise<string>;
  reports: ReportStore;
  budget: RateBudget;
  /** The deployment's own EC2 role: the role of a registration naming none. */
  ownRoleArn: string;
  /** Every token request of the backend, in order. */
  takes: BudgetTake[];
  own: FleetCluster;
  member: FleetCluster;
  stop(): Promise<void>;
}

const secret = (clusterId: string) => `whsec_${Buffer.from(`volhook-e2e-${clusterId}`.padEnd(24, '.')).toString('base64')}`;

export interface TwoAccountsOptions {
  /**
   * Another EC2 and STS (moto) in place of the simulator: accounts told apart by the credentials
   * (an assumed role's are its account's), no IAM evaluation, no ExternalId check.
   */
  endpoint?: string;
}

/** moto's operator of the member account: a session of any role there (moto checks no trust). */
async function motoOperator(endpoint: string): Promise<{ accessKeyId: string; secretAccessKey: string; sessionToken: string }> {
  const sts = new STSClient({ region: REGION, endpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  const { Credentials: c } = await sts.send(new AssumeRoleCommand({ RoleArn: `arn:aws:iam::${MEMBER_ACCOUNT}:role/volhook-e2e-operator`, RoleSessionName: 'volhook-e2e-operator' }));
  sts.destroy();
  if (!c?.AccessKeyId || !c.SecretAccessKey || !c.SessionToken) throw new Error('moto answered AssumeRole without credentials');
  return { accessKeyId: c.AccessKeyId, secretAccessKey: c.SecretAccessKey, sessionToken: c.SessionToken };
}

export async function startTwoAccounts(options: TwoAccountsOptions = {}): Promise<TwoAccounts> {
  const cleanups: Array<() => Promise<void>> = [];
  const stop = async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
  };
  try {
    const deployment = deploymentIam({ backendKey: BACKEND_CREDENTIALS.accessKeyId, region: REGION, accountId: OWN_ACCOUNT });
    const ownRoleArn = deployment.ec2RoleArn;
    const memberRoleArn = memberEc2RoleArn({ region: REGION, accountId: MEMBER_ACCOUNT });
    const sim = options.endpoint
      ? undefined
      : await startEc2Simulator({
          port: 0,
          host: '127.0.0.1',
          region: REGION,
          timeScale: TIME_SCALE,
          seed: 23,
          accounts: [MEMBER_ACCOUNT],
          iam: {
            principals: deployment.principals,
            roles: {
              ...deployment.roles,
              [memberRoleArn]: memberEc2Role({ region: REGION, accountId: MEMBER_ACCOUNT, trust: { principals: [deployment.backend.arn], externalId: EXTERNAL_ID } }),
            },
            administrators: { [MEMBER_OPERATOR.accessKeyId]: MEMBER_ACCOUNT },
          },
        });
    if (sim) cleanups.push(() => sim.close());
    const url = options.endpoint ?? sim!.url;
    const memberOperator = options.endpoint ? await motoOperator(options.endpoint) : MEMBER_OPERATOR;

    const registration = (clusterId: string, aws: ClusterRegistrationInput['aws'] = {}): ClusterRegistrationInput => ({
      clusterId,
      secrets: [secret(clusterId)],
      region: REGION,
      aws: { nodeTag: { key: DEFAULT_NODE_TAG_KEY, value: clusterId }, ...aws },
      // A disk made a second ago may be an orphan (moto's disks cannot be dated back).
      audit: { graceSeconds: 1 },
    });
    const registrations = { own: registration('fleet-own'), member: registration('fleet-member', { roleArn: memberRoleArn, externalId: EXTERNAL_ID }) };

    const takes: BudgetTake[] = [];
    // At AWS's own refill, as deployed (the simulator runs faster): a burst can empty a bucket.
    const inner = createMemoryBudget();
    const budget: RateBudget = {
      async take(key, wanted) {
        const grant = await inner.take(key, wanted);
        takes.push({ key, wanted, granted: grant.granted });
        return grant;
      },
      throttled: (key) => inner.throttled(key),
    };
    const reports = createMemoryReportStore();
    const logs = { [registrations.own.clusterId]: resultLog(), [registrations.member.clusterId]: resultLog() };
    const sessions = createClusterSessions({ stsClient: { endpoint: url, region: REGION, credentials: BACKEND_CREDENTIALS } });
    const app = createBackendApp({
      registry: createStaticRegistry([registrations.own, registrations.member]),
      replay: createMemoryReplayStore(),
      reports,
      sessions,
      ec2Endpoint: url,
      ec2RoleArn: ownRoleArn,
      ec2Credentials: BACKEND_CREDENTIALS,
      budget,
      onResult: (clusterId, item, result: Result) => logs[clusterId]?.onResult(clusterId, item, result),
    });
    const backend = await startBackendServer(app, '127.0.0.1', 0);
    cleanups.push(() => backend.stop());

    const cluster = async (which: 'own' | 'member'): Promise<FleetCluster> => {
      const reg = registrations[which];
      const stack = await startE2eStack({
        clusterId: reg.clusterId,
        region: REGION,
        ec2Endpoint: url,
        backendUrl: backend.url,
        secret: reg.secrets[0]!,
        ...(which === 'member' && { operatorCredentials: memberOperator }),
      });
      cleanups.push(() => stack.stop());
      const ctx: ScenarioContext = { kube: stack.kube, ec2: stack.ec2, clusterId: stack.clusterId, nodes: stack.nodes, results: logs[reg.clusterId]!.results };
      return { stack, ctx, registration: reg, account: which === 'own' ? OWN_ACCOUNT : MEMBER_ACCOUNT };
    };
    const own = await cluster('own');
    const member = await cluster('member');
    const seedOrphan = async (cluster: FleetCluster, tags: Record<string, string>): Promise<string> => {
      const zone = cluster.ctx.nodes[0]!.zone;
      if (sim) return sim.sim.account(cluster.account).seedVolumes({ zone, tags, createdAt: new Date(Date.now() - 2 * 3_600_000).toISOString(), sizeGiB: 4 })[0]!.id;
      const made = await cluster.ctx.ec2.send(
        new CreateVolumeCommand({ AvailabilityZone: zone, Size: 4, TagSpecifications: [{ ResourceType: 'volume', Tags: Object.entries(tags).map(([Key, Value]) => ({ Key, Value })) }] }),
      );
      return made.VolumeId!;
    };
    return { url, sessions, reports, budget, ownRoleArn, takes, own, member, seedOrphan, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
