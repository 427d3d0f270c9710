/** How scenario (c)'s figures are printed. */
import { mib, say, seconds, table } from './format.js';
import type { DeploymentLimits } from '../../infra/forwarder/image.js';
import { IDLE_MS, type MemoryResult } from './forwarder-memory.js';

export function memoryRow(r: MemoryResult): string[] {
  return [
    r.runtime === 'tsx' ? 'node --import tsx bin/forwarder.ts' : ['node', ...r.nodeFlags, 'forwarder.mjs (bundle)', r.nodeOptions].filter(Boolean).join(' '),
    r.objects === 0 ? 'idle' : `${r.objects.toLocaleString('en-US')} + ${r.objects.toLocaleString('en-US')}`,
    seconds(r.readyMs),
    seconds(r.cpuAtReadyMs),
    mib(r.rssAtReady),
    mib(r.rssSettled),
    mib(r.rssIdle),
    mib(r.peakRss),
    mib(r.heapUsed),
    mib(r.heapTotal),
    mib(r.external),
    r.failure ? `FAILED after ${r.itemsSent} items` : r.objects === 0 ? '—' : `${r.itemsSent} in ${r.requests} req, ${seconds(r.drainedMs)} (CPU ${seconds(r.cpuDrainedMs)})`,
  ];
}

export function printMemory(results: readonly MemoryResult[], limits: DeploymentLimits): void {
  say();
  say(
    table(
      ['forwarder process', 'PVCs + PVs', 'ready', 'CPU to ready', 'RSS ready', 'RSS settled', `RSS +${IDLE_MS / 1000} s idle`, 'peak RSS', 'heap used', 'heap total', 'external', 'start-up items'],
      results.map(memoryRow),
    ),
  );
  for (const r of results.filter((x) => x.tooLarge.length > 0)) {
    say(`  NOTE ${r.runtime} with ${r.objects}+${r.objects}: never sent, too large for one request (retried with backoff, counted as drained): ${r.tooLarge.join(', ')}`);
  }
  for (const r of results.filter((x) => x.failure)) say(`  FAILED ${r.runtime} with ${r.objects}+${r.objects}: forwarder ${r.failure}`);
  say('  RSS from /proc/<pid>/status (VmRSS; peak = VmHWM); heap from its /metrics (prom-client default metrics).');
  say('  CPU: user + system time of the process (/proc/<pid>/stat) from spawn to ready, and to the start-up items drained.');
  say('  "settled": the start-up items (one per PV of ours) answered `done` by a dummy backend, queue empty, +2 s.');
  say(`  "+${IDLE_MS / 1000} s idle": read again after that long with nothing to do (V8's memory reducer runs 8 s after the last full GC).`);
  if (limits.memoryLimit) {
    say(`  the chart's Deployment (defaults): memory request ${limits.memoryRequest ?? '—'}, limit ${limits.memoryLimit}, NODE_OPTIONS ${limits.nodeOptions ?? '—'}`);
  }
  const loaded = results.filter((r) => r.objects > 0);
  for (const r of loaded) {
    const idle = results.find((i) => i.runtime === r.runtime && i.objects === 0);
    if (idle && r.rssSettled !== undefined && idle.rssSettled !== undefined) {
      const perPair = (r.rssSettled - idle.rssSettled) / r.objects;
      say(`  ${r.runtime}: +${mib(r.rssSettled - idle.rssSettled)} RSS over idle ≈ ${(perPair / 1024).toFixed(1)} KiB per PVC+PV pair cached`);
    }
  }
}
