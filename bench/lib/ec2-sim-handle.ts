/**
 * The EC2 simulator as a bench reaches it: in its own process (ec2-sim-process.ts), its counters
 * and instances read over its admin routes.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import * as z from 'zod';
import { ADMIN_PREFIX, type Ec2SimStats } from '../../lib/local/ec2/index.js';
import { readyUrl, repoRoot, stopChild } from './fleet-processes.js';

/** What the bench sets of the simulator in its own process. */
export const Ec2SimProcessOptionsSchema = z.object({
  region: z.string(),
  zones: z.array(z.string()).min(1),
  seed: z.number().int(),
  timeScale: z.number().positive(),
});
export type Ec2SimProcessOptions = z.infer<typeof Ec2SimProcessOptionsSchema>;

const ActionStatsSchema = z.object({
  calls: z.number(),
  ok: z.number(),
  throttled: z.number(),
  errors: z.record(z.string(), z.number()),
  firstOkMs: z.number().optional(),
  lastOkMs: z.number().optional(),
});
const Ec2SimStatsSchema = z.object({ since: z.string(), total: ActionStatsSchema, actions: z.record(z.string(), ActionStatsSchema) });
const InstancesSchema = z.object({ instances: z.array(z.object({ id: z.string(), state: z.string() }).loose()) }).loose();

export interface Ec2SimProcess {
  url: string;
  stats(): Promise<Ec2SimStats>;
  resetStats(): Promise<void>;
  /** Whether every instance named is running. */
  instancesRunning(instanceIds: readonly string[]): Promise<boolean>;
  stop(): Promise<void>;
}

export async function startEc2SimProcess(options: Ec2SimProcessOptions): Promise<Ec2SimProcess> {
  const env: NodeJS.ProcessEnv = { ...process.env, VOLHOOK_BENCH_EC2_OPTIONS: JSON.stringify(options) };
  delete env.NODE_OPTIONS;
  const child = spawn(process.execPath, ['--import', 'tsx', join(repoRoot, 'bench/lib/ec2-sim-process.ts')], { cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let errors = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    errors = (errors + chunk.toString()).slice(-10_000);
  });
  const url = await readyUrl(child, () => errors).catch(async (err: unknown) => {
    await stopChild(child);
    throw err;
  });
  const admin = async (method: 'GET' | 'POST', path: string): Promise<unknown> => {
    const res = await fetch(`${url}${ADMIN_PREFIX}${path}`, { method });
    if (!res.ok) throw new Error(`EC2 simulator ${method} ${path}: ${res.status} ${await res.text()}`);
    return res.json();
  };
  return {
    url,
    stats: async () => Ec2SimStatsSchema.parse(await admin('GET', 'stats')),
    resetStats: async () => void (await admin('POST', 'reset-stats')),
    async instancesRunning(instanceIds) {
      const { instances } = InstancesSchema.parse(await admin('GET', 'state'));
      const state = new Map(instances.map((i) => [i.id, i.state]));
      return instanceIds.every((id) => state.get(id) === 'running');
    },
    stop: () => stopChild(child),
  };
}
