/**
 * The production wiring of the app: real EC2 clients (one per region, reused across
 * requests so connections are reused) and, for `writeBack: direct`
 * clusters, Kubernetes clients built from the registration.
 */
import type { EC2Client } from '@aws-sdk/client-ec2';
import { createEc2Client, createEc2Gateway } from '../ec2/index.js';
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
  now?: AppDependencies['now'];
  /** EC2's minimum time between two modifications of a volume, read per request (default 6 hours). */
  modifyCooldownMs?: () => number;
}

export function createBackendApp(options: BackendOptions) {
  const clients = new Map<string, EC2Client>();
  const clientFor = (region: string) => {
    let client = clients.get(region);
    if (!client) {
      client = createEc2Client({ region, endpoint: options.ec2Endpoint, credentials: options.ec2Credentials });
      clients.set(region, client);
    }
    return client;
  };

  return createApp({
    registry: options.registry,
    replay: options.replay,
    reports: options.reports,
    gatewayFor: (registration, deadline) =>
      createEc2Gateway({ client: clientFor(registration.region), clusterId: registration.clusterId, deadline }),
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
    now: options.now,
    modifyCooldownMs: options.modifyCooldownMs,
  });
}
