/**
 * The production wiring of the app: real EC2 clients (one per region, reused across
 * requests so connections are reused) and, for `writeBack: direct`
 * clusters, Kubernetes clients built from the registration.
 */
import type { EC2Client } from '@aws-sdk/client-ec2';
import type { RateBudget } from '../budget/budget.js';
import { createMemoryBudget } from '../budget/memory.js';
import { createEc2Client, createEc2Gateway, DEFAULT_BUDGET_ACCOUNT } from '../ec2/index.js';
import type { ClusterRegistration, ClusterRegistry } from '../registry/index.js';
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
  /** Static EC2 credentials (local endpoints); otherwise the SDK's default provider chain. */
  ec2Credentials?: { accessKeyId: string; secretAccessKey: string };
  onResult?: AppDependencies['onResult'];
  onError?: AppDependencies['onError'];
  onEc2Calls?: AppDependencies['onEc2Calls'];
  now?: AppDependencies['now'];
  /** EC2's minimum time between two modifications of a volume, read per request (default 6 hours). */
  modifyCooldownMs?: () => number;
  /**
   * The shared EC2 rate budget every call takes its token from: DynamoDB when deployed
   * (`budgetFromEnvironment`); default one in this process's memory.
   */
  budget?: RateBudget;
  /**
   * The AWS account of the budget's keys: the account of the backend's role, which every
   * cluster's calls go to (`VOLHOOK_AWS_ACCOUNT`, set by serverless.yml). Default `default`:
   * a backend whose clusters all share one account needs no name for it.
   */
  account?: string;
}


export function createBackendApp(options: BackendOptions) {
  const clients = new Map<string, EC2Client>();
  const clientFor = (region: string) => {
    let client = clients.get(region);
    if (!client) {
      // One attempt: a retry inside the SDK would be a call the budget did not grant. A call
      // that fails transiently becomes a requeue, and its next try takes a token again.
      client = createEc2Client({ region, endpoint: options.ec2Endpoint, credentials: options.ec2Credentials, maxAttempts: 1 });
      clients.set(region, client);
    }
    return client;
  };

  const budget = options.budget ?? createMemoryBudget();
  const account = options.account || DEFAULT_BUDGET_ACCOUNT;
  return createApp({
    registry: options.registry,
    replay: options.replay,
    reports: options.reports,
    gatewayFor: (registration, deadline, observer) =>
      createEc2Gateway({
        client: clientFor(registration.region),
        clusterId: registration.clusterId,
        deadline,
        pacing: { budget, account, region: registration.region },
        observer,
      }),
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
    onError: options.onError,
    onEc2Calls: options.onEc2Calls,
    now: options.now,
    modifyCooldownMs: options.modifyCooldownMs,
  });
}
