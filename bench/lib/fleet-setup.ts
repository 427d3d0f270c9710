/**
 * What every multi-cluster bench starts first (scale-out.ts, fleet-faults.ts, rest-cost.ts): one
 * simulated EC2 account, a registry file of `count` clusters with their webhook secrets, the
 * environment of the backend processes (bench/lib/backend-process.ts) that serve them, and the
 * clusters' local stacks (Kubernetes API and controllers, nodes enough for their pods).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from '../../lib/forwarder/index.js';
import { startEc2Simulator, type RunningEc2Simulator } from '../../lib/local/ec2/index.js';
import { startLocalStack, type LocalStack } from '../../lib/local/stack/index.js';
import { VOLUMES_PER_NODE } from './bench-stack.js';
import { claim, podFor } from './manifests.js';
import type { BurstTracker } from './tracker.js';

export const REGION = 'us-east-1';
export const ZONES = ['us-east-1a', 'us-east-1b', 'us-east-1c'];

/** What to undo at the end, in reverse order. */
export type Cleanups = Array<() => Promise<void> | void>;

export async function runCleanups(cleanups: Cleanups): Promise<void> {
  for (const c of cleanups.splice(0).reverse()) await Promise.resolve(c()).catch(() => undefined);
}

export interface FleetRegistry {
  /** `<prefix>-a`, `<prefix>-b`, … */
  clusterIds: string[];
  secrets: Map<string, string>;
  /** The registry file (lib/registry/file-registry.ts) naming every cluster with its secret and Region. */
  registryFile: string;
}

export interface FleetBase extends FleetRegistry {
  sim: RunningEc2Simulator;
}

/** The simulator in this process and the clusters' registry; both undone by `cleanups`. */
export async function startFleetBase(options: { prefix: string; clusters: number; seed: number; timeScale: number }, cleanups: Cleanups): Promise<FleetBase> {
  const sim = await startEc2Simulator({ port: 0, host: '127.0.0.1', region: REGION, zones: ZONES, seed: options.seed, timeScale: options.timeScale });
  cleanups.push(() => sim.close());
  return { sim, ...startFleetRegistry(options, cleanups) };
}

/** A registry file of `clusters` clusters with their webhook secrets; undone by `cleanups`. */
export function startFleetRegistry(options: { prefix: string; clusters: number }, cleanups: Cleanups): FleetRegistry {
  const clusterIds = Array.from({ length: options.clusters }, (_, i) => `${options.prefix}-${String.fromCharCode(97 + i)}`);
  const secrets = new Map(clusterIds.map((id) => [id, `whsec_${randomBytes(24).toString('base64')}`]));
  const dir = mkdtempSync(join(tmpdir(), `volhook-${options.prefix}-`));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const registryFile = join(dir, 'clusters.json');
  writeFileSync(registryFile, JSON.stringify({ clusters: Object.fromEntries(clusterIds.map((id) => [id, { clusterId: id, secrets: [secrets.get(id)], region: REGION }])) }));
  return { clusterIds, secrets, registryFile };
}

/** The DynamoDB tables the backend processes share, by store; a store left out stays in each process's memory. */
export interface SharedTables {
  endpoint: string;
  budget?: string;
  replay?: string;
  reports?: string;
}

/** The environment of a backend process against `ec2Endpoint`, with the stores in `tables`. */
export function backendEnvironment(base: Pick<FleetRegistry, 'registryFile'>, options: { ec2Endpoint: string; timeScale: number; tables?: SharedTables }): NodeJS.ProcessEnv {
  const t = options.tables;
  return {
    ...process.env,
    VOLHOOK_REGISTRY_FILE: base.registryFile,
    VOLHOOK_BENCH_EC2_ENDPOINT: options.ec2Endpoint,
    VOLHOOK_BUDGET_TIME_SCALE: String(options.timeScale),
    VOLHOOK_BENCH_EC2_TIME_SCALE: String(options.timeScale),
    ...(t?.budget && { VOLHOOK_BUDGET_TABLE: t.budget }),
    ...(t?.replay && { VOLHOOK_REPLAY_TABLE: t.replay }),
    ...(t?.reports && { VOLHOOK_REPORTS_TABLE: t.reports }),
    ...(t && { AWS_ENDPOINT_URL_DYNAMODB: t.endpoint }),
    AWS_REGION: REGION,
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    AWS_EC2_METADATA_DISABLED: 'true',
  };
}

/**
 * One local stack per cluster against the fleet's simulator, with nodes enough for `pods[c]`
 * pods: its forwarder in-process against `backendUrl`, or none (`backendUrl` undefined: the
 * caller starts them).
 */
export async function startClusterStacks(
  base: FleetRegistry & { sim: { url: string } },
  options: { pods: readonly number[]; backendUrl?: string; onControllerError(error: unknown, context: { controller: string; key: string }): void; logger: Logger },
  cleanups: Cleanups,
): Promise<LocalStack[]> {
  const stacks: LocalStack[] = [];
  for (const [c, clusterId] of base.clusterIds.entries()) {
    const stack = await startLocalStack({
      ports: { backend: 0, ec2: 0, kube: 0 },
      zones: ZONES,
      region: REGION,
      clusterId,
      secret: base.secrets.get(clusterId),
      ec2Endpoint: base.sim.url,
      // Without a forwarder of the stack's own, a URL it never uses: the stack starts no backend.
      backendUrl: options.backendUrl ?? 'http://127.0.0.1:9',
      nodesPerZone: Math.max(1, Math.ceil((options.pods[c] ?? 0) / VOLUMES_PER_NODE / ZONES.length)),
      forwarder: options.backendUrl === undefined ? false : {},
      controllers: { onError: options.onControllerError },
      logger: options.logger,
    });
    cleanups.push(() => stack.stop());
    stacks.push(stack);
  }
  return stacks;
}

/** Every node instance of every stack running in EC2. */
export function nodesRunning(base: FleetBase, stacks: readonly LocalStack[]): boolean {
  return stacks.every((s) => s.nodes.every((n) => base.sim.sim.instance(n.instanceId)?.state === 'running'));
}

/** `n` dealt out over `clusters` as evenly as whole claims allow, the first clusters taking the remainder. */
export function dealOut(n: number, clusters: number): number[] {
  return Array.from({ length: clusters }, (_, c) => Math.floor(n / clusters) + (c < n % clusters ? 1 : 0));
}

/**
 * `perCluster[c]` claims named `<prefix>-00000`… with a pod each in cluster `c`, spread over its
 * nodes, each tracked; the clusters' claims interleaved, so every cluster sends from the first moment.
 */
export function createClaimsWithPods(stacks: readonly LocalStack[], trackers: readonly BurstTracker[], perCluster: readonly number[], prefix: string): void {
  for (let i = 0; i < Math.max(...perCluster); i++) {
    for (const [c, stack] of stacks.entries()) {
      if (i >= perCluster[c]!) continue;
      const name = `${prefix}-${String(i).padStart(5, '0')}`;
      trackers[c]!.expect(name, name);
      stack.store.create('persistentvolumeclaims', claim(name));
      stack.store.create('pods', podFor(name, name, stack.nodes[i % stack.nodes.length]!.name));
    }
  }
}
