/**
 * The whole of volhook on one machine: an EC2 (the simulator, or any endpoint), a local
 * Kubernetes API with the controllers a cluster runs, the backend on `@hono/node-server`,
 * and the forwarder between them. `npm start`, the end-to-end tests and the benchmarks all
 * run this one function, so what they exercise is the same.
 */
import type { IamPrincipal } from '../../iam/evaluate.js';
import { randomBytes } from 'node:crypto';
import { EC2Client } from '@aws-sdk/client-ec2';
import { deploymentIam } from '../../iam/role-policy.js';
import { createBackendApp, type BackendOptions } from '../../app/index.js';
import { createMemoryBudget, type RateBudget } from '../../budget/index.js';
import { DEFAULT_NODE_TAG_KEY, type Item, type Result } from '../../contract/index.js';
import { startForwarder, silentLogger, type Forwarder, type ForwarderConfigInput, type Logger } from '../../forwarder/index.js';
import { kubeConfigFor } from '../../kube/index.js';
import { inClusterAccess, type KubeAccess } from '../../forwarder/kube/access.js';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createFileRegistry, createStaticRegistry, type ClusterRegistrationInput, type ClusterRegistry } from '../../registry/index.js';
import { createMemoryReplayStore } from '../../replay/index.js';
import { createFileReportStore, createMemoryReportStore, type ReportStore } from '../../reports/index.js';
import { startControllers, type ControllerOptions } from '../controllers/index.js';
import { DEFAULT_ACCOUNT_ID, startEc2Simulator, type Ec2Simulator, type Ec2SimulatorOptions } from '../ec2/index.js';
import { createObjectStore, startKubeApiServer, type LocalObjectStore, type ResourceName } from '../kube/index.js';
import { startBackendServer } from './backend-server.js';
import { csiDriverObject, csiNodeObject, nodeObject, storageClassObjects, type LocalNode } from './cluster-objects.js';
import { launchNodeInstances, waitForInstancesRunning } from './nodes.js';
import { kubeconfigText } from '../plane/kubeconfig.js';
import { startRealKube, type RealKube, type RealKubeOptions } from '../plane/real-kube.js';
import { listeningAs } from './ports.js';
import { localPaths, removeDescriptor, writeDescriptor } from './local-files.js';

export const DEFAULT_PORTS = { backend: 8787, ec2: 8788, kube: 8001 } as const;

/**
 * The backend's own key: the simulator holds it to the Lambda role's policy, which allows no EC2
 * call, only AssumeRole of the EC2 role; every EC2 call is made in the cluster's session of it.
 */
export const BACKEND_CREDENTIALS = { accessKeyId: 'volhook-backend-role', secretAccessKey: 'local' } as const;

export interface LocalStackOptions {
  host?: string;
  /** 0 picks free ports (tests); defaults are 8787 / 8788 / 8001. */
  ports?: Partial<Record<keyof typeof DEFAULT_PORTS, number>>;
  region?: string;
  zones?: string[];
  /** Nodes (EC2 instances) in each zone; each attaches at most 26 volumes. Default 1. */
  nodesPerZone?: number;
  clusterId?: string;
  /** Use this EC2 endpoint (e.g. moto) instead of starting the simulator. */
  ec2Endpoint?: string;
  /**
   * The operator's credentials at that endpoint (test setup, the nodes, the CLI): the account
   * the nodes are launched in. Default the simulator's own account's administrator.
   */
  operatorCredentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  /** Simulator settings: time scale, throttling, faults, state directory, further Regions… */
  ec2?: Omit<Ec2SimulatorOptions, 'port' | 'host' | 'region' | 'zones' | 'iam'>;
  /**
   * Policies the deployment's EC2 role is held to besides its own, as an account's guard rails
   * (a service control policy) bind every role in it: e.g. a deny outside the allowed Regions.
   */
  ec2RoleGuardRails?: IamPrincipal['policies'];
  /** `direct`: the backend applies writes through the local Kubernetes API itself. */
  writeBack?: 'forwarder' | 'direct';
  /** Forwarder settings, or `false` to run without one. */
  forwarder?: false | Partial<ForwarderConfigInput>;
  /**
   * Start without the forwarder running, though configured: `restartForwarder()` starts it.
   * A cluster another controller serves first (the EBS CSI driver's), handed over to volhook.
   */
  forwarderStopped?: boolean;
  controllers?: ControllerOptions;
  registration?: Partial<ClusterRegistrationInput>;
  /**
   * Keep the registration and the volume reports in files under this directory and describe
   * the running stack there (local-files.ts), so that `npm run cluster -- audit` finds it.
   * Default: none, everything in memory.
   */
  localDir?: string;
  /** Backend observer, e.g. to log each reconcile. */
  onResult?(clusterId: string, item: Item, result: Result): void;
  /** Told of each reconcile request's EC2 calls and tokens, per action. */
  onEc2Calls?: BackendOptions['onEc2Calls'];
  /** Told of each reconcile request's contract and forwarder version. */
  onContract?: BackendOptions['onContract'];
  /** The EC2 rate budget; default in memory, at the simulator's time scale. */
  budget?: RateBudget;
  /** The cluster's webhook secret; default a random one. */
  secret?: string;
  /**
   * A backend already running elsewhere (other processes, behind one URL), registered with
   * this cluster and its `secret`: the stack starts none of its own.
   */
  backendUrl?: string;
  logger?: Logger;
}

export interface RealStackOptions extends LocalStackOptions {
  /**
   * The real control plane (lib/local/plane) instead of the simulated API: etcd,
   * kube-apiserver, kube-controller-manager and kube-scheduler, a node agent per instance, the
   * forwarder under its chart's ServiceAccount and roles. Its data and logs go in `dir`, by
   * default `kube/` in `localDir` (or a temporary directory, removed on stop).
   */
  kube: Omit<RealKubeOptions, 'dir' | 'port'> & { dir?: string };
}

export interface LocalStack {
  clusterId: string;
  region: string;
  secret: string;
  urls: { backend: string; ec2: string; kube: string };
  store: LocalObjectStore;
  /** The backend's volume reports (lib/reports). */
  reports: ReportStore;
  /** The in-process simulator, when one was started. */
  simulator?: Ec2Simulator;
  /** A client of the stack's EC2, for tests and setup. */
  ec2: EC2Client;
  nodes: LocalNode[];
  /** A kubeconfig of the stack's Kubernetes (its administrator on the real plane). */
  kubeconfig: string;
  /** Where it was written, with a local directory: `kubeconfig` in it. */
  kubeconfigFile?: string;
  forwarder(): Forwarder | undefined;
  stopBackend(): Promise<void>;
  startBackend(): Promise<void>;
  /** Stops the forwarder (as a crash would: its queue is lost) and starts a fresh one. */
  restartForwarder(): Promise<void>;
  /** Stops the forwarder, as an operator uninstalls it: `forwarder()` is undefined until `restartForwarder()`. */
  stopForwarder(): Promise<void>;
  stop(): Promise<void>;
}

/** The stack on the real control plane: no object store, the plane instead. */
export type RealLocalStack = Omit<LocalStack, 'store'> & { real: RealKube };

export function startLocalStack(options: RealStackOptions): Promise<RealLocalStack>;
export function startLocalStack(options?: LocalStackOptions): Promise<LocalStack>;
export async function startLocalStack(options: LocalStackOptions & { kube?: RealStackOptions['kube'] } = {}): Promise<LocalStack | RealLocalStack> {
  const host = options.host ?? '127.0.0.1';
  const ports = {
    backend: options.ports?.backend ?? DEFAULT_PORTS.backend,
    ec2: options.ports?.ec2 ?? DEFAULT_PORTS.ec2,
    kube: options.ports?.kube ?? DEFAULT_PORTS.kube,
  };
  const region = options.region ?? 'us-east-1';
  const zones = options.zones ?? [`${region}a`, `${region}b`, `${region}c`];
  const clusterId = options.clusterId ?? 'local';
  const secret = options.secret ?? `whsec_${randomBytes(24).toString('base64')}`;
  const cleanups: Array<() => Promise<void>> = [];
  if (options.kube) {
    if (options.writeBack === 'direct') throw new Error('writeBack "direct" is not implemented on the real control plane: the backend would need a token of its own there');
    if (options.controllers) throw new Error("controllers: options of the simulated API's controllers; the real control plane runs kube-controller-manager's own");
  }

  try {
    // EC2: the simulator unless another endpoint was given.
    let ec2Url = options.ec2Endpoint;
    let simulator: Ec2Simulator | undefined;
    // As deployed: the backend signs as the Lambda role; every cluster's session is one of the
    // deployment's EC2 role, which trusts it.
    const deployment = deploymentIam({ backendKey: BACKEND_CREDENTIALS.accessKeyId, region, accountId: DEFAULT_ACCOUNT_ID });
    if (!ec2Url) {
      const guards = options.ec2RoleGuardRails ?? [];
      const roles = Object.fromEntries(Object.entries(deployment.roles).map(([arn, role]) => [arn, { ...role, policies: [...role.policies, ...guards] }]));
      const iam = { principals: deployment.principals, roles };
      const sim = await listeningAs('ec2', host, ports.ec2, () => startEc2Simulator({ ...options.ec2, port: ports.ec2, host, region, zones, iam }));
      cleanups.push(() => sim.close());
      ec2Url = sim.url;
      simulator = sim.sim;
    }
    // The operator's: test setup, the nodes, the CLI. The backend signs with its role's.
    const credentials = options.operatorCredentials ?? { accessKeyId: 'local', secretAccessKey: 'local' };
    const ec2 = new EC2Client({
      region,
      endpoint: ec2Url,
      credentials,
      maxAttempts: 10,
    });
    cleanups.push(async () => ec2.destroy());
    const nodes = await launchNodeInstances(ec2, clusterId, zones, options.nodesPerZone);
    // Waited for after the other servers started, so their start-up overlaps the instances'.
    const nodesRunning = waitForInstancesRunning(ec2, nodes.map((n) => n.instanceId));
    // Not left unhandled if a later step fails first; awaited below.
    nodesRunning.catch(() => undefined);

    // Kubernetes: the simulated API with its controllers, or the real control plane.
    const writeBack = options.writeBack ?? 'forwarder';
    /** How the forwarder reaches the API: a kubeconfig (the simulated API) or, on the real plane, its ServiceAccount's volume read in-cluster style. */
    let kube: { url: string; kubeconfig: string; forwarderAccess: () => Promise<{ kubeConfig: ReturnType<typeof kubeConfigFor> } | { kubeAccess: KubeAccess }> };
    let store: LocalObjectStore | undefined;
    let plane: RealKube | undefined;
    if (options.kube) {
      const dir = options.kube.dir ?? (options.localDir ? join(options.localDir, 'kube') : undefined);
      let planeDir: string;
      if (dir) {
        // A fresh cluster each start, as the simulated API is.
        await rm(dir, { recursive: true, force: true });
        planeDir = dir;
      } else {
        planeDir = await mkdtemp(join(tmpdir(), 'volhook-kube-'));
        cleanups.push(() => rm(planeDir, { recursive: true, force: true }));
      }
      const real = options.kube;
      const started = await listeningAs('kube', host, ports.kube, () => startRealKube({ ...real, dir: planeDir, host, nodes, region, ...(ports.kube ? { port: ports.kube } : {}) }));
      cleanups.push(() => started.stop());
      plane = started;
      kube = {
        url: started.url,
        kubeconfig: started.plane.kubeconfig(),
        forwarderAccess: async () => {
          const { hostname, port } = new URL(started.url);
          return { kubeAccess: await inClusterAccess({ env: { KUBERNETES_SERVICE_HOST: hostname, KUBERNETES_SERVICE_PORT: port }, dir: started.forwarder.volume.dir }) };
        },
      };
    } else {
      const objects = createObjectStore({ storageObjectInUseProtection: true });
      store = objects;
      const server = await listeningAs('kube', host, ports.kube, () => startKubeApiServer({ store: objects, port: ports.kube, host }));
      cleanups.push(() => server.close());
      const seed = (resource: ResourceName, object: { metadata: { name: string } }) =>
        objects.create(resource, object as Parameters<typeof objects.create>[1]);
      for (const node of nodes) {
        seed('nodes', nodeObject(node, region));
        seed('csinodes', csiNodeObject(node));
      }
      seed('csidrivers', csiDriverObject);
      for (const sc of storageClassObjects) seed('storageclasses', sc);
      const controllers = startControllers(objects, options.controllers);
      cleanups.push(() => controllers.stop());
      kube = { url: server.url, kubeconfig: kubeconfigText({ server: server.url }), forwarderAccess: async () => ({ kubeConfig: kubeConfigFor({ server: server.url }) }) };
    }

    // The backend, with this cluster registered (unless one runs elsewhere).
    const registration = {
      clusterId,
      secrets: [secret],
      region,
      writeBack,
      ...(writeBack === 'direct' ? { kubernetes: { server: kube.url } } : {}),
      // The nodes carry it (nodes.ts): attaches are fenced to them by IAM.
      aws: { nodeTag: { key: DEFAULT_NODE_TAG_KEY, value: clusterId } },
      ...options.registration,
    };
    let registry: ClusterRegistry;
    let reports: ReportStore;
    if (options.localDir) {
      const paths = localPaths(options.localDir);
      await mkdir(options.localDir, { recursive: true, mode: 0o700 });
      await writeFile(paths.registryFile, `${JSON.stringify({ clusters: { [clusterId]: registration } }, null, 2)}\n`, { mode: 0o600 });
      await chmod(paths.registryFile, 0o600);
      registry = createFileRegistry(paths.registryFile);
      reports = createFileReportStore(paths.reportsDir);
    } else {
      registry = createStaticRegistry([registration]);
      reports = createMemoryReportStore();
    }
    let backend: { url: string; stop(): Promise<void>; start(): Promise<void> };
    if (options.backendUrl) {
      const url = options.backendUrl;
      const external = async () => {
        throw new Error('the backend runs outside this stack; it is not stopped or started here');
      };
      backend = { url, stop: external, start: external };
    } else {
      // One process, so seen webhook ids are kept in memory (they outlive backend restarts).
      const replay = createMemoryReplayStore();
      const budget = options.budget ?? createMemoryBudget({ timeScale: options.ec2?.timeScale ?? 1 });
      const app = createBackendApp({
        registry,
        replay,
        reports,
        ec2Endpoint: ec2Url,
        // STS is served at the same endpoint (the simulator's, moto's).
        stsEndpoint: ec2Url,
        stsRegion: region,
        ec2RoleArn: deployment.ec2RoleArn,
        ec2Credentials: BACKEND_CREDENTIALS,
        onResult: options.onResult,
        onEc2Calls: options.onEc2Calls,
        onContract: options.onContract,
        budget,
        ec2TimeScale: options.ec2?.timeScale ?? 1,
      });
      const server = await listeningAs('backend', host, ports.backend, () => startBackendServer(app, host, ports.backend));
      cleanups.push(() => server.stop());
      backend = server;
    }

    // The forwarder, as it would run in the cluster.
    let forwarder: Forwarder | undefined;
    const startOurForwarder = async () => {
      if (options.forwarder === false) return;
      const config = { apiUrl: backend.url, clusterId, secret, kubeServer: kube.url, port: 0, listenHost: host, ...options.forwarder };
      const deps = { ...(await kube.forwarderAccess()), logger: options.logger ?? silentLogger };
      forwarder = await listeningAs('forwarder', host, config.port, () => startForwarder(config, deps));
    };
    if (!options.forwarderStopped) await startOurForwarder();
    cleanups.push(async () => forwarder?.stop());
    // Up only once the nodes' instances run: the first attach must not meet one still pending.
    await nodesRunning;

    let kubeconfigFile: string | undefined;
    if (options.localDir) {
      const localDir = options.localDir;
      const paths = localPaths(localDir);
      kubeconfigFile = paths.kubeconfig;
      await writeFile(kubeconfigFile, kube.kubeconfig, { mode: 0o600 });
      await chmod(kubeconfigFile, 0o600);
      await writeDescriptor(localDir, {
        clusterId,
        region,
        ec2Endpoint: ec2Url,
        backendUrl: backend.url,
        kubeUrl: kube.url,
        kubeconfig: kubeconfigFile,
        registryFile: paths.registryFile,
        reportsDir: paths.reportsDir,
        pid: process.pid,
      });
      cleanups.push(() => removeDescriptor(localDir));
    }

    const common = {
      clusterId,
      region,
      secret,
      urls: { backend: backend.url, ec2: ec2Url, kube: kube.url },
      kubeconfig: kube.kubeconfig,
      ...(kubeconfigFile !== undefined && { kubeconfigFile }),
      reports,
      simulator,
      ec2,
      nodes,
      forwarder: () => forwarder,
      stopBackend: () => backend.stop(),
      startBackend: () => backend.start(),
      async restartForwarder() {
        await forwarder?.stop();
        forwarder = undefined;
        await startOurForwarder();
      },
      async stopForwarder() {
        await forwarder?.stop();
        forwarder = undefined;
      },
      stop: () => runCleanups(cleanups),
    };
    if (plane) return { ...common, real: plane };
    return { ...common, store: store! };
  } catch (err) {
    await runCleanups(cleanups);
    throw err;
  }
}

async function runCleanups(cleanups: Array<() => Promise<void>>): Promise<void> {
  for (const cleanup of cleanups.splice(0).reverse()) {
    await cleanup().catch(() => undefined);
  }
}
