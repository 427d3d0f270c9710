/**
 * `npm run bench -- --peer ebs-csi`: the workload of peer-workload.ts against volhook, then
 * against the reference EBS CSI controller stack, one after the other in this run, each on a
 * fresh real control plane and EC2 simulator started with the same options (time scale, seed,
 * AWS's token buckets and latencies), so neither inherits the other's buckets or objects.
 * Builds what is missing first (tools/kube, tools/ebs-csi).
 */
import { build, EBS_CSI_BIN, readComponents } from '../../infra/tools/ebs-csi-build.js';
import { missingBinaries } from '../../lib/local/peer/ebs-csi.js';
import { realPlaneInputs } from '../../tools/kube/inputs.js';
import { say } from './format.js';
import { PEER_STACKS, startSide } from './peer-sides.js';
import { printPeerSummary } from './peer-report.js';
import { runWorkload, type WorkloadResult } from './peer-workload.js';
import type { BenchArgs } from './args.js';

/** Expansions and snapshots (each restored) of the workload, as the issue sets them, at most n. */
export const PEER_OPERATIONS = 100;

export async function runPeerBench(args: BenchArgs): Promise<WorkloadResult[]> {
  const missing = missingBinaries(EBS_CSI_BIN);
  if (missing.length > 0) {
    say(`The EBS CSI stack is not built (${missing.join(', ')} missing); building it first (npm run ebs-csi:build).`);
    await build(readComponents().components);
  }
  const inputs = await realPlaneInputs(say);
  const operations = Math.min(PEER_OPERATIONS, args.n);
  say(`\npeer run: ${args.n} claims + pods, ${operations} expansions, ${operations} snapshots + restores, then delete all; time scale ${args.timeScale}, seed ${args.seed}`);
  const results: WorkloadResult[] = [];
  for (const name of PEER_STACKS) {
    say(`\n[${name}] starting a real control plane, the simulator and the ${name === 'volhook' ? 'backend and forwarder processes' : 'driver and its sidecars'} …`);
    const side = await startSide({ name, inputs, binDir: EBS_CSI_BIN, timeScale: args.timeScale, seed: args.seed, pods: args.n + operations });
    try {
      say(`[${name}] ${side.stack.nodes.length} nodes; controllers measured: ${side.controllers.map((c) => `${c.name} (pid ${c.pid})`).join(', ')}`);
      results.push(await runWorkload(side, { n: args.n, expansions: operations, snapshots: operations, phaseTimeoutMs: args.timeoutSeconds * 1000 }));
    } finally {
      await side.stop();
    }
  }
  printPeerSummary(results, args.timeScale);
  return results;
}
