/**
 * A kubeconfig whose cluster is plain http (the local stack's API server) is refused in
 * volhook's words, naming the file, the cluster and its server, before any request; the same
 * file with insecure-skip-tls-verify: true is read.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EC2Client } from '@aws-sdk/client-ec2';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock, startEc2Simulator, type RunningEc2Simulator } from '../../lib/local/ec2/index.js';
import { createObjectStore, startKubeApiServer, type KubeApiServer } from '../../lib/local/kube/index.js';
import { runCli } from './cli-run.js';

let sim: RunningEc2Simulator;
let api: KubeApiServer;
let dir: string;
let registry: string;

beforeEach(async () => {
  sim = await startEc2Simulator({ host: '127.0.0.1', port: 0, seed: 5, throttling: false }, new ManualClock(Date.UTC(2025, 5, 1, 12)));
  api = await startKubeApiServer({ store: createObjectStore(), port: 0, host: '127.0.0.1' });
  dir = mkdtempSync(join(tmpdir(), 'volhook-cli-kubeconfig-'));
  registry = join(dir, 'clusters.json');
  expect((await cli('add', 'c1', '--region', 'us-east-1', '--file', registry)).code).toBe(0);
});
afterEach(async () => {
  await api.close();
  await sim.close();
});

async function cli(...argv: string[]) {
  return runCli(argv, {
    cwd: dir,
    ec2Client: (region) => new EC2Client({ region, endpoint: sim.url, credentials: { accessKeyId: 'test', secretAccessKey: 'test' }, maxAttempts: 1 }),
  });
}

function kubeconfig(name: string, skipTlsVerify: boolean): string {
  const path = join(dir, name);
  const cluster = `- name: local-api\n  cluster:\n    server: ${api.url}${skipTlsVerify ? '\n    insecure-skip-tls-verify: true' : ''}`;
  writeFileSync(path, ['apiVersion: v1', 'kind: Config', 'clusters:', cluster, 'users:', '- name: admin\n  user:\n    token: local', 'contexts:', '- name: local\n  context:\n    cluster: local-api\n    user: admin', 'current-context: local', ''].join('\n'));
  return path;
}

describe('a plain-http kubeconfig', () => {
  it.each([['adopt'], ['release']])('%s -> exit 2 naming the kubeconfig, its cluster and server, not the library\'s words', async (command) => {
    const path = kubeconfig('http.yaml', false);
    const res = await cli(command, 'c1', '--kubeconfig', path, '--file', registry);
    expect(res.code).toBe(2);
    expect(res.stdout).toBe('');
    expect(res.stderr).toContain(`error: --kubeconfig ${path}: cluster "local-api" has a plain-http server (${api.url})`);
    expect(res.stderr).toContain('insecure-skip-tls-verify: true');
    expect(res.stderr).not.toMatch(/HTTP protocol is not allowed|skipTLSVerify/);
  });

  it('control: the same server with insecure-skip-tls-verify: true -> the PVs are read (none), exit 0', async () => {
    const res = await cli('adopt', 'c1', '--kubeconfig', kubeconfig('skip.yaml', true), '--file', registry, '--json');
    expect(res.stderr).not.toMatch(/error/);
    expect(res.code).toBe(0);
    expect(JSON.parse(res.stdout)).toMatchObject({ clusterId: 'c1' });
  });
});
