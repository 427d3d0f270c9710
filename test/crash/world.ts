/**
 * One run's world, all in one process and built from the project's real parts:
 *
 * - EC2: `Ec2Simulator` on a `ManualClock`, reached by the real gateway through the real
 *   `@aws-sdk/client-ec2` over an in-process transport (see ec2-transport.ts);
 * - the backend: the real hono app (`createApp`), called with `app.request`, its EC2 calls
 *   paced by the rate budget (in memory, on the same clock);
 * - Kubernetes: the local object store, its HTTP API on 127.0.0.1 (for `applyWrites` over
 *   client-node) and the cluster's controllers (PV controller, scheduler, attach/detach
 *   controller, kubelet) over the same store.
 */
import { Agent } from 'node:http';
import type { Hono } from 'hono';
import { createApp } from '../../lib/app/app.js';
import { createMemoryBudget } from '../../lib/budget/index.js';
import { createEc2Gateway } from '../../lib/ec2/index.js';
import { DEFAULT_NODE_TAG_KEY } from '../../lib/contract/tags.js';
import { EventCorrelator, kubeClientsFromConfig, kubeConfigFor, type KubeClients } from '../../lib/kube/index.js';
import { startControllers } from '../../lib/local/controllers/index.js';
import { deploymentIam } from '../../lib/iam/role-policy.js';
import { Ec2Simulator, ManualClock, type Clock } from '../../lib/local/ec2/index.js';
import { createObjectStore, startKubeApiServer, type KubeApiServer, type LocalObjectStore, type ResourceName } from '../../lib/local/kube/index.js';
import { csiDriverObject, csiNodeObject, nodeObject, type LocalNode } from '../../lib/local/stack/cluster-objects.js';
import { createStaticRegistry } from '../../lib/registry/index.js';
import { createMemoryReportStore, type ReportStore } from '../../lib/reports/index.js';
import type { Ec2Gateway } from '../../lib/ec2/index.js';
import { simulatorClusterClients, type Ec2CallObserver } from './ec2-transport.js';

export const DRIVER = 'ebs.csi.aws.com';
/** The cluster whose disk a foreign clone's static PV names. */
export const FOREIGN_CLUSTER = 'other';
export const REGION = 'us-east-1';
/** Where every VolumeSnapshotClass copies its snapshots (copyToRegion): a further Region of the simulator. */
export const COPY_REGION = 'us-west-2';
/** The backend's own key: the simulator holds it to the Lambda role's policy (AssumeRole of the EC2 role, no EC2 call). */
export const BACKEND_KEY = 'crash-backend-role';
/** The Lambda role signing with BACKEND_KEY, and the deployment's EC2 role trusting it. */
const DEPLOYMENT = deploymentIam({ backendKey: BACKEND_KEY, region: REGION });
export const ZONES = ['us-east-1a', 'us-east-1b', 'us-east-1c'];
/** A fixed test secret (32 bytes of key): nothing here is secret, and it keeps runs replayable. */
export const SECRET = `whsec_${Buffer.from('volhook-crash-explorer-test-key!').toString('base64')}`;

/** The rate budget's buckets in the explorer's world: a few tokens each, refilled in seconds. */
const CRASH_BUCKETS = {
  CreateVolume: { capacity: 2, refillPerSecond: 0.5 },
  DeleteVolume: { capacity: 2, refillPerSecond: 0.5 },
  AttachVolume: { capacity: 2, refillPerSecond: 0.5 },
  DetachVolume: { capacity: 2, refillPerSecond: 0.5 },
  DescribeVolumes: { capacity: 4, refillPerSecond: 1 },
  DescribeInstances: { capacity: 4, refillPerSecond: 1 },
};

/** Where every run's simulated clock starts. */
export const CLOCK_START = Date.UTC(2026, 0, 1);

export type BindingMode = 'Immediate' | 'WaitForFirstConsumer';
export type ReclaimPolicy = 'Delete' | 'Retain';

export interface ClassSpec {
  name: string;
  binding: BindingMode;
  policy: ReclaimPolicy;
  /** An in-tree `kubernetes.io/aws-ebs` class, provisioned under CSI migration (in-tree PVs). */
  inTree?: boolean;
}

/** EC2's rolling window for four modifications of a volume, shortened so that a run sees it end. */
export const MODIFICATION_WINDOW_MS = 60_000;

/** The VolumeAttributesClass claims move to: gp3 at its baseline IOPS and 200 MiB/s (fits any size). */
export const FAST_CLASS = 'fast';
/** One that only adds a tag: CreateTags, no ModifyVolume. */
export const TAGGED_CLASS = 'tagged';

/** Every combination of binding mode and reclaim policy, and two in-tree classes under migration. */
export const CLASSES: readonly ClassSpec[] = [
  { name: 'wffc-delete', binding: 'WaitForFirstConsumer', policy: 'Delete' },
  { name: 'wffc-retain', binding: 'WaitForFirstConsumer', policy: 'Retain' },
  { name: 'immediate-delete', binding: 'Immediate', policy: 'Delete' },
  { name: 'immediate-retain', binding: 'Immediate', policy: 'Retain' },
  { name: 'intree-wffc-delete', binding: 'WaitForFirstConsumer', policy: 'Delete', inTree: true },
  { name: 'intree-immediate-retain', binding: 'Immediate', policy: 'Retain', inTree: true },
];

export const SNAPSHOT_POLICIES = ['Delete', 'Retain'] as const;
export type SnapshotPolicy = (typeof SNAPSHOT_POLICIES)[number];
export const snapshotClassName = (policy: SnapshotPolicy) => `snap-${policy.toLowerCase()}`;
/** The VolumeGroupSnapshotClass of each deletion policy. */
export const groupClassName = (policy: SnapshotPolicy) => `group-${policy.toLowerCase()}`;

/** What the judges (checks.ts, oracle.ts) read of a world: one cluster's store and nodes, EC2 and its clock. */
export type JudgedWorld = Pick<World, 'clusterId' | 'sim' | 'store' | 'nodes'> & { clock: Pick<Clock, 'now'> };

export interface World {
  clusterId: string;
  clock: ManualClock;
  sim: Ec2Simulator;
  store: LocalObjectStore;
  kube: KubeApiServer;
  clients: KubeClients;
  correlator: EventCorrelator;
  app: Hono;
  /** The backend's volume reports, which the audit reads. */
  reports: ReportStore;
  /** A gateway over the run's EC2 (the one the backend uses, so the oracle sees its calls), as the audit makes one. */
  gateway(): Ec2Gateway;
  nodes: LocalNode[];
  /** Unexpected errors the controllers reported (races are retried silently and not listed). */
  controllerErrors: string[];
  /** Lets the controllers react to what was just written, until the store is quiet. */
  settle(): Promise<void>;
  close(): Promise<void>;
}

export async function createWorld(options: { seed: number; clusterId: string; observe: Ec2CallObserver; stuckAttachRate?: number }): Promise<World> {
  const { clusterId } = options;
  // A fixed start: nothing in a run depends on the wall clock but the gateway's deadline.
  const clock = new ManualClock(CLOCK_START);
  // Snapshots complete in tens of seconds here (EC2: minutes for a first snapshot), so that a
  // run's restores converge within its time budget.
  const sim = new Ec2Simulator(
    {
      seed: options.seed,
      region: REGION,
      regions: [COPY_REGION],
      zones: ZONES,
      throttling: false,
      latency: { snapshot: { kind: 'lognormal', medianMs: 8_000, p99Ms: 30_000, maxMs: 45_000 } },
      modificationWindowMs: MODIFICATION_WINDOW_MS,
      ...(options.stuckAttachRate && { attachFaults: [{ rate: options.stuckAttachRate, outcome: 'stuck' as const }] }),
      // As deployed: the backend's key is the Lambda role's, which may only assume the EC2 role;
      // every EC2 call is made in the cluster's session of it, fenced by IAM to the cluster.
      iam: { principals: DEPLOYMENT.principals, roles: DEPLOYMENT.roles },
    },
    clock,
  );
  const nodes: LocalNode[] = ZONES.map((zone, z) => {
    const name = `ip-10-0-${z + 1}-10.ec2.internal`;
    const instance = sim.runInstance({
      zone,
      instanceType: 'm6i.large',
      instanceTags: [
        { key: 'Name', value: name },
        { key: `kubernetes.io/cluster/${clusterId}`, value: 'owned' },
        { key: DEFAULT_NODE_TAG_KEY, value: clusterId },
      ],
    });
    return { name, zone, instanceId: instance.id };
  });

  const controllerErrors: string[] = [];
  const store = createObjectStore({
    storageObjectInUseProtection: true,
    now: () => new Date(clock.now()),
    onListenerError: (err) => controllerErrors.push(`watch listener: ${String(err)}`),
  });
  const seed = (resource: ResourceName, object: { metadata: { name: string } }) =>
    store.create(resource, object as Parameters<typeof store.create>[1]);
  for (const node of nodes) {
    seed('nodes', nodeObject(node, REGION));
    seed('csinodes', csiNodeObject(node));
  }
  seed('csidrivers', csiDriverObject);
  for (const policy of SNAPSHOT_POLICIES) {
    seed('volumesnapshotclasses', {
      apiVersion: 'snapshot.storage.k8s.io/v1',
      kind: 'VolumeSnapshotClass',
      metadata: { name: snapshotClassName(policy) },
      driver: DRIVER,
      deletionPolicy: policy,
      parameters: { copyToRegion: COPY_REGION },
    } as never);
    seed('volumegroupsnapshotclasses', {
      apiVersion: 'groupsnapshot.storage.k8s.io/v1',
      kind: 'VolumeGroupSnapshotClass',
      metadata: { name: groupClassName(policy) },
      driver: DRIVER,
      deletionPolicy: policy,
    } as never);
  }
  for (const spec of CLASSES) {
    seed('storageclasses', {
      apiVersion: 'storage.k8s.io/v1',
      kind: 'StorageClass',
      metadata: { name: spec.name },
      provisioner: spec.inTree ? 'kubernetes.io/aws-ebs' : DRIVER,
      parameters: spec.inTree ? { type: 'gp2', fsType: 'ext4' } : { type: 'gp3' },
      reclaimPolicy: spec.policy,
      volumeBindingMode: spec.binding,
      allowVolumeExpansion: true,
    } as never);
  }

  seed('volumeattributesclasses', { apiVersion: 'storage.k8s.io/v1', kind: 'VolumeAttributesClass', metadata: { name: FAST_CLASS }, driverName: DRIVER, parameters: { type: 'gp3', iops: '3000', throughput: '200' } } as never);
  seed('volumeattributesclasses', { apiVersion: 'storage.k8s.io/v1', kind: 'VolumeAttributesClass', metadata: { name: TAGGED_CLASS }, driverName: DRIVER, parameters: { tagSpecification_1: 'team=crash' } } as never);

  const kube = await startKubeApiServer({ store, port: 0, host: '127.0.0.1' });
  const controllers = startControllers(store, {
    // A long resync: every change the controllers act on comes as a watch event, and a
    // resync on the real clock would make runs depend on timing.
    resyncIntervalMs: 600_000,
    onError: (error, { controller, key }) => {
      if (controllerErrors.length < 20) controllerErrors.push(`${controller} ${key}: ${error instanceof Error ? error.message : String(error)}`);
    },
  });
  // client-node makes a new agent (so a new connection) for every request; one keep-alive
  // agent makes the same requests several times faster, which is all this changes.
  const kubeConfig = kubeConfigFor({ server: kube.url });
  const agent = new Agent({ keepAlive: true });
  (kubeConfig as unknown as { createAgent(): Agent }).createAgent = () => agent;
  const clients = kubeClientsFromConfig(kubeConfig);

  // One attempt per call: a lost answer reaches the reconciler (the SDK's retries would mask
  // it, and their back-off sleeps on the real clock).
  const ec2Clients = simulatorClusterClients(sim, options.observe, { backendKey: BACKEND_KEY, defaultRoleArn: DEPLOYMENT.ec2RoleArn, region: REGION, now: () => clock.now() });
  const registration = { clusterId, secrets: [SECRET], region: REGION, aws: { nodeTag: { key: DEFAULT_NODE_TAG_KEY, value: clusterId } } };
  const ec2 = ec2Clients.for(registration).client;
  const reports = createMemoryReportStore();
  // Small buckets, so that a run's few claims meet refusals too: items answered with the
  // budget's wait and sent again, interleaved with the crashes.
  const budget = createMemoryBudget({ now: () => clock.now(), rates: { [REGION]: { share: 1, buckets: CRASH_BUCKETS }, [COPY_REGION]: { share: 1, buckets: CRASH_BUCKETS } } });
  const app = createApp({
    registry: createStaticRegistry([registration]),
    reports,
    // The backend's clock is the simulated one, like EC2's and the API server's: deletion
    // timestamps, attach times and grace periods are all measured on it. (Signatures are made
    // on it too; only the gateway's deadline stays on the real clock.)
    now: () => clock.now(),
    // Every EC2 call paced as deployed: the rate budget in memory, on the simulated clock.
    gatewayFor: (registration, deadline, observer) =>
      createEc2Gateway({
        client: ec2Clients.for(registration).client,
        clusterId: registration.clusterId,
        deadline,
        batchWindowMs: 0,
        pacing: { budget, account: 'crash', region: registration.region },
        observer,
        clientFor: (region) => ec2Clients.for({ ...registration, region }).client,
      }),
  });

  async function settle(): Promise<void> {
    let rv = store.resourceVersion;
    let quiet = 0;
    for (let turn = 0; turn < 500 && quiet < 4; turn++) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      if (store.resourceVersion === rv) quiet++;
      else {
        quiet = 0;
        rv = store.resourceVersion;
      }
    }
  }

  return {
    clusterId,
    clock,
    sim,
    store,
    kube,
    clients,
    correlator: new EventCorrelator({ now: () => clock.now() }),
    app,
    reports,
    gateway: () => createEc2Gateway({ client: ec2, clusterId, deadline: Date.now() + 20_000, batchWindowMs: 0, clientFor: (region) => ec2Clients.for({ ...registration, region }).client }),
    nodes,
    controllerErrors,
    settle,
    async close() {
      await controllers.stop();
      agent.destroy();
      await kube.close();
      ec2Clients.destroy();
    },
  };
}
