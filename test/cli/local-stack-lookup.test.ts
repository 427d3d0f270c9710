/**
 * A running local stack (`npm start`) and the clusters besides its own: `cluster add` without
 * --file registers in the registry file the stack's backend reads (it went to a file the stack
 * never reads, silently), and `audit` of a cluster registered there uses the stack's reports
 * and simulator without --reports-dir. Commands that read a cluster's Kubernetes API
 * (adopt, release) still take the stack only for its own cluster.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { findLocalStack } from '../../lib/cli/local-stack.js';
import { localPaths, writeDescriptor } from '../../lib/local/stack/local-files.js';
import { runCli } from '../deploy/cli-run.js';

let dir: string;
let env: NodeJS.ProcessEnv;
const registry = () => JSON.parse(readFileSync(localPaths(dir).registryFile, 'utf8')) as { clusters: Record<string, unknown> };

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'volhook-local-lookup-'));
  env = { VOLHOOK_LOCAL_DIR: dir };
  const paths = localPaths(dir);
  // This process stands for the stack: its pid is alive.
  await writeDescriptor(dir, { clusterId: 'local', region: 'us-east-1', ec2Endpoint: 'http://127.0.0.1:1', backendUrl: 'http://127.0.0.1:2', kubeUrl: 'http://127.0.0.1:3', registryFile: paths.registryFile, reportsDir: paths.reportsDir, pid: process.pid });
  writeFileSync(paths.registryFile, JSON.stringify({ clusters: {} }));
});

describe('cluster commands and a running local stack', () => {
  it('add of another cluster, no --file -> in the stack\'s registry file, said so on stderr', async () => {
    const res = await runCli(['add', 'second', '--region', 'us-east-1'], { env, cwd: dir });
    expect(res.code).toBe(0);
    expect(res.stderr).toContain(`registered cluster "second" in file ${localPaths(dir).registryFile}, the registry of the running local stack (npm start)`);
    expect(Object.keys(registry().clusters)).toEqual(['second']);
  });

  it('control: add with --file -> that file, the stack\'s untouched', async () => {
    const file = join(dir, 'elsewhere.json');
    expect((await runCli(['add', 'second', '--region', 'us-east-1', '--file', file], { env, cwd: dir })).code).toBe(0);
    expect(Object.keys(registry().clusters)).toEqual([]);
    expect(Object.keys((JSON.parse(readFileSync(file, 'utf8')) as { clusters: object }).clusters)).toEqual(['second']);
  });

  it('audit of a cluster registered in the stack -> the stack (its reports, no --reports-dir); of one not registered, or release of it -> not the stack', async () => {
    expect((await runCli(['add', 'second', '--region', 'us-east-1'], { env, cwd: dir })).code).toBe(0);
    const io = { env, cwd: dir };
    expect((await findLocalStack({ command: 'audit', clusterId: 'second', targetGiven: false }, io))?.reportsDir).toBe(localPaths(dir).reportsDir);
    expect(await findLocalStack({ command: 'audit', clusterId: 'third', targetGiven: false }, io)).toBeUndefined();
    expect(await findLocalStack({ command: 'release', clusterId: 'second', targetGiven: false }, io)).toBeUndefined();
    expect(await findLocalStack({ command: 'audit', clusterId: 'second', targetGiven: true }, io)).toBeUndefined();
    expect((await findLocalStack({ command: 'release', clusterId: 'local', targetGiven: false }, io))?.clusterId).toBe('local');
  });
});
