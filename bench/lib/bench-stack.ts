/**
 * The local stack as the benchmarks run it: the EC2 simulator at AWS's buckets and latencies
 * (optionally time-scaled), volhook's production forwarder settings, and enough nodes for the
 * pods (each a running EC2 instance of the cluster, 26 volume slots) spread over three zones.
 */
import type { Item, Result } from '../../lib/contract/index.js';
import { silentLogger, type Logger } from '../../lib/forwarder/index.js';
import type { LatencyTable } from '../../lib/local/ec2/index.js';
import { startLocalStack, type LocalNode, type LocalStack, type LocalStackOptions } from '../../lib/local/stack/index.js';

/** Volumes placed per node: below the 26 slots, so a node never fills up. */
export const VOLUMES_PER_NODE = 24;
const ZONES = ['us-east-1a', 'us-east-1b', 'us-east-1c'];

export interface BenchStackOptions {
  timeScale: number;
  seed: number;
  /** Pods the run will place; decides how many nodes to start. */
  pods: number;
  /** Simulator latencies other than its defaults, e.g. AWS's medians for the single-PVC run. */
  latency?: Partial<LatencyTable>;
  logger?: Logger;
  onResult?(clusterId: string, item: Item, result: Result): void;
  onEc2Calls?: LocalStackOptions['onEc2Calls'];
  onControllerError?(error: unknown, context: { controller: string; key: string }): void;
}

export interface BenchStack {
  stack: LocalStack;
  /** Every node, zone by zone. */
  nodes: LocalNode[];
  /** Wall time spent setting up (not part of any figure). */
  setupMs: number;
}

export async function startBenchStack(options: BenchStackOptions): Promise<BenchStack> {
  const started = performance.now();
  const stack = await startLocalStack({
    ports: { backend: 0, ec2: 0, kube: 0 },
    zones: ZONES,
    nodesPerZone: Math.max(1, Math.ceil(options.pods / VOLUMES_PER_NODE / ZONES.length)),
    ec2: { timeScale: options.timeScale, seed: options.seed, ...(options.latency && { latency: options.latency }) },
    // Production settings: batch 100, 4 requests in flight, resync 5 min, backoff 1 s → 5 min.
    forwarder: {},
    controllers: options.onControllerError ? { onError: options.onControllerError } : {},
    logger: options.logger ?? silentLogger,
    onResult: options.onResult,
    onEc2Calls: options.onEc2Calls,
  });
  try {
    const sim = stack.simulator;
    if (!sim) throw new Error('the benchmark needs the in-process EC2 simulator');
    // Nodes boot through RunInstances (5–15 s at scale 1); a cluster's nodes are up before its pods come.
    await until(() => stack.nodes.every((n) => sim.instance(n.instanceId)?.state === 'running'), 120_000, 'node instances running');
    await until(() => stack.forwarder()?.ready() === true, 60_000, 'forwarder caches synced');
    return { stack, nodes: stack.nodes, setupMs: performance.now() - started };
  } catch (err) {
    await stack.stop();
    throw err;
  }
}

/** Polls `check` every 100 ms until it holds; throws naming `what` after `timeoutMs`. */
export async function until(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
