/**
 * The production wiring of the app: EC2 clients per cluster session (one per Region and session,
 * reused across requests so connections are reused) and, for `writeBack: direct` clusters,
 * Kubernetes clients built from the registration.
 *
 * The backend makes no EC2 call under its own role: each cluster's calls are signed with the
 * credentials of its session (lib/ec2/sessions.ts), in the role its registration names
 * (`aws.roleArn`) or else the deployment's (`ec2RoleArn`). A cluster with neither gets a
 * `failed` result naming the missing role for every item that needs EC2 — unless the backend
 * was given static `ec2Credentials`, the documented exception for tests and benches without STS.
 */
import type { RateBudget } from '../budget/budget.js';
import { createMemoryBudget } from '../budget/memory.js';
import { DEFAULT_NODE_TAG_KEY } from '../contract/tags.js';
import { createClusterClients, createClusterSessions, createEc2Gateway, Ec2Error, refusingGateway, type ClusterSessions } from '../ec2/index.js';
import { withNodeTagKey, type ClusterRegistration, type ClusterRegistry } from '../registry/index.js';
import type { ReplayStore } from '../replay/index.js';
import type { ReportStore } from '../reports/index.js';
import { createApp, type AppDependencies } from './app.js';

export interface BackendOptions {
  registry: ClusterRegistry;
  /** Webhook ids already accepted: DynamoDB when deployed; default in memory. */
  replay?: ReplayStore;
  /** The clusters' volume reports: DynamoDB when deployed, files locally; default in memory. */
  reports?: ReportStore;
  /** EC2 endpoint override (the local simulator, moto); otherwise AWS's regional endpoint. */
  ec2Endpoint?: string;
  /**
   * The deployment's EC2 role (`VOLHOOK_EC2_ROLE_ARN`): the role of every cluster whose
   * registration names no `aws.roleArn`. Must be an IAM role ARN.
   */
  ec2RoleArn?: string;
  /** STS endpoint override (the local simulator, moto); otherwise the Region's STS endpoint. */
  stsEndpoint?: string;
  /** The Region STS is called in; default the SDK's (AWS_REGION, the Lambda's own). */
  stsRegion?: string;
  /**
   * Static credentials of the backend itself, for local endpoints. With a role (`ec2RoleArn` or
   * a registration's `aws.roleArn`) they are what AssumeRole is called with. Without any role,
   * EC2 is called with them directly, unfenced by IAM: kept only for tests and benches that run
   * without STS (the local stack, the bench). Absent, and no role: EC2 work is refused.
   */
  ec2Credentials?: { accessKeyId: string; secretAccessKey: string };
  /**
   * The process's session cache (default: one made from `stsEndpoint`, `stsRegion` and
   * `ec2Credentials`); pass one to read its `stats()` or to give it a mocked STS client.
   */
  sessions?: ClusterSessions;
  /**
   * The instance tag key the EC2 role fences attaches by (`VOLHOOK_NODE_TAG_KEY`, default
   * `eks:cluster-name`): a registration whose `aws.nodeTag` names another key is refused.
   */
  nodeTagKey?: string;
  onResult?: AppDependencies['onResult'];
  onContract?: AppDependencies['onContract'];
  onError?: AppDependencies['onError'];
  onEc2Calls?: AppDependencies['onEc2Calls'];
  now?: AppDependencies['now'];
  /**
   * The shared EC2 rate budget every call takes its token from: DynamoDB when deployed
   * (`budgetFromEnvironment`); default one in this process's memory.
   */
  budget?: RateBudget;
  /**
   * The AWS account of the budget's keys for calls made with `ec2Credentials` directly
   * (`VOLHOOK_AWS_ACCOUNT`). A session's calls are keyed by its role's account, read from the
   * role ARN. Default `default`.
   */
  account?: string;
  /**
   * How much faster than AWS the EC2 at `ec2Endpoint` runs (the local simulator's time scale):
   * the waits the backend measures against EC2's own durations shrink by it. Not read from the
   * environment: the deployed backend talks to AWS, at 1.
   */
  ec2TimeScale?: number;
  /** How much faster than real time the forwarders resync (a bench): ReconcileContext's `reportTimeScale`. */
  reportTimeScale?: number;
}

export function createBackendApp(options: BackendOptions) {
  const sessions =
    options.sessions ??
    createClusterSessions({
      stsClient: {
        ...(options.stsRegion !== undefined && { region: options.stsRegion }),
        ...(options.stsEndpoint !== undefined && { endpoint: options.stsEndpoint }),
        ...(options.ec2Credentials !== undefined && { credentials: options.ec2Credentials }),
      },
    });
  const clients = createClusterClients({
    sessions,
    ...(options.ec2RoleArn !== undefined && { defaultRoleArn: options.ec2RoleArn }),
    // The documented exception: static credentials and no role (tests, benches without STS).
    ...(options.ec2Credentials !== undefined && { direct: { credentials: options.ec2Credentials, ...(options.account !== undefined && { account: options.account }) } }),
    ...(options.ec2Endpoint !== undefined && { endpoint: options.ec2Endpoint }),
    // One attempt: a retry inside the SDK would be a call the budget did not grant. A call
    // that fails transiently becomes a requeue, and its next try takes a token again.
    maxAttempts: 1,
  });

  const budget = options.budget ?? createMemoryBudget();
  return createApp({
    registry: withNodeTagKey(options.registry, options.nodeTagKey || DEFAULT_NODE_TAG_KEY),
    replay: options.replay,
    reports: options.reports,
    gatewayFor: (registration, deadline, observer) => {
      let ec2;
      try {
        ec2 = clients.for(registration);
      } catch (error) {
        if (error instanceof Ec2Error) return refusingGateway(error);
        throw error;
      }
      return createEc2Gateway({
        client: ec2.client,
        clusterId: registration.clusterId,
        deadline,
        pacing: { budget, account: ec2.account, region: registration.region },
        observer,
        // The cluster's cross-Region snapshot copies: the same session, signed for that Region.
        clientFor: (region) => clients.for({ ...registration, region }).client,
      });
    },
    applyDirect: async (registration: ClusterRegistration, writes) => {
      if (!registration.kubernetes) {
        throw new Error(`cluster "${registration.clusterId}" uses writeBack: direct but its registration has no kubernetes.server`);
      }
      // Loaded on first use: only `direct` clusters need client-node, and it is the largest
      // part of the bundle, so the common path's cold start does not pay for it.
      const { applyWrites, kubeClientsFromConfig, kubeConfigFor } = await import('../kube/index.js');
      await applyWrites(kubeClientsFromConfig(kubeConfigFor(registration.kubernetes)), writes);
    },
    onResult: options.onResult,
    onContract: options.onContract,
    onError: options.onError,
    onEc2Calls: options.onEc2Calls,
    now: options.now,
    ...(options.ec2TimeScale !== undefined && { ec2TimeScale: options.ec2TimeScale }),
    ...(options.reportTimeScale !== undefined && { reportTimeScale: options.reportTimeScale }),
  });
}
