/**
 * Two clusters in two AWS accounts behind one backend, as a fleet runs it: one simulator holding
 * both accounts and the one STS; the deployment's own EC2 role in its account, a member
 * account's EC2 role (infra/member-account/ec2-role.yaml) trusting the backend with an
 * ExternalId; one backend (its key the Lambda role's, EC2 only in a cluster's session), one rate
 * budget and one report store; and per cluster a Kubernetes API, its controllers, its nodes (in
 * its own account) and its forwarder, each stack's operator key an administrator of that account.
 */
import { createBackendApp } from '../../../lib/app/index.js';
import { createMemoryBudget, type BucketKey, type RateBudget } from '../../../lib/budget/index.js';
import { DEFAULT_NODE_TAG_KEY, type Result } from '../../../lib/contract/index.js';
import { ec2Role, ec2RoleArn, lambdaRolePrincipal, memberEc2Role, memberEc2RoleArn } from '../../../lib/iam/role-policy.js';
import { DEFAULT_ACCOUNT_ID, startEc2Simulator, type RunningEc2Simulator } from '../../../lib/local/ec2/index.js';
import { startBackendServer } from '../../../lib/local/stack/backend-server.js';
import { BACKEND_CREDENTIALS } from '../../../lib/local/stack/stack.js';
import { createStaticRegistry, type ClusterRegistrationInput } from '../../../lib/registry/index.js';
import { createMemoryReplayStore } from '../../../lib/replay/index.js';
import { createMemoryReportStore, reportTime, type ReportStore } from '../../../lib/reports/index.js';
import { resultLog, type ScenarioContext } from './scenarios.js';
import { startE2eStack, type E2eStack } from './stack.js';
import { waitFor } from './wait.js';

export const REGION = 'us-east-1';
export const OWN_ACCOUNT = DEFAULT_ACCOUNT_ID;
export const MEMBER_ACCOUNT = '222222222222';
export const EXTERNAL_ID = 'volhook-e2e-member-account';
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
  sim: RunningEc2Simulator;
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

export async function startTwoAccounts(): Promise<TwoAccounts> {
  const cleanups: Array<() => Promise<void>> = [];
  const stop = async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
  };
  try {
    const backendRole = lambdaRolePrincipal({ region: REGION, accountId: OWN_ACCOUNT });
    const ownRoleArn = ec2RoleArn({ region: REGION, accountId: OWN_ACCOUNT });
    const memberRoleArn = memberEc2RoleArn({ region: REGION, accountId: MEMBER_ACCOUNT });
    const sim = await startEc2Simulator({
      port: 0,
      host: '127.0.0.1',
      region: REGION,
      timeScale: TIME_SCALE,
      seed: 23,
      accounts: [MEMBER_ACCOUNT],
      iam: {
        principals: { [BACKEND_CREDENTIALS.accessKeyId]: backendRole },
        roles: {
          [ownRoleArn]: ec2Role({ region: REGION, accountId: OWN_ACCOUNT, trust: { principals: [backendRole.arn] } }),
          [memberRoleArn]: memberEc2Role({ region: REGION, accountId: MEMBER_ACCOUNT, trust: { principals: [backendRole.arn], externalId: EXTERNAL_ID } }),
        },
        administrators: { [MEMBER_OPERATOR.accessKeyId]: MEMBER_ACCOUNT },
      },
    });
    cleanups.push(() => sim.close());

    const registration = (clusterId: string, aws: ClusterRegistrationInput['aws'] = {}): ClusterRegistrationInput => ({
      clusterId,
      secrets: [secret(clusterId)],
      region: REGION,
      aws: { nodeTag: { key: DEFAULT_NODE_TAG_KEY, value: clusterId }, ...aws },
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
    const app = createBackendApp({
      registry: createStaticRegistry([registrations.own, registrations.member]),
      replay: createMemoryReplayStore(),
      reports,
      ec2Endpoint: sim.url,
      stsEndpoint: sim.url,
      stsRegion: REGION,
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
        ec2Endpoint: sim.url,
        backendUrl: backend.url,
        secret: reg.secrets[0]!,
        ...(which === 'member' && { operatorCredentials: MEMBER_OPERATOR }),
      });
      cleanups.push(() => stack.stop());
      const ctx: ScenarioContext = { kube: stack.kube, ec2: stack.ec2, clusterId: stack.clusterId, nodes: stack.nodes, results: logs[reg.clusterId]!.results };
      return { stack, ctx, registration: reg, account: which === 'own' ? OWN_ACCOUNT : MEMBER_ACCOUNT };
    };
    const own = await cluster('own');
    const member = await cluster('member');
    return { sim, reports, budget, ownRoleArn, takes, own, member, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** Waits until the backend holds a volume report of the cluster dated after `after` (epoch ms), asking its forwarder for one. */
export async function freshReport(fleet: TwoAccounts, cluster: FleetCluster, after: number): Promise<void> {
  await waitFor(
    async () => {
      cluster.stack.forwarder()?.resync();
      return fleet.reports.get(cluster.ctx.clusterId);
    },
    (r) => r !== undefined && reportTime(r) > after,
    { what: `a volume report of ${cluster.ctx.clusterId} dated after ${new Date(after).toISOString()}`, intervalMs: 300, timeoutMs: 30_000 },
  );
}
