/**
 * Every cluster command finds a running local stack the same way (lib/cli/local-stack.ts):
 * with neither --file nor --ssm-path, `show local`, `adopt local` and `audit local` use the
 * registry file, the EC2 simulator and the Kubernetes API that `.volhook/local/stack.json` names.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EC2Client } from '@aws-sdk/client-ec2';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LOCAL_CREDENTIALS, localStackFor, type LocalCredentials } from '../../lib/cli/index.js';
import { ManualClock, startEc2Simulator, type RunningEc2Simulator } from '../../lib/local/ec2/index.js';
import { createObjectStore, startKubeApiServer, type KubeApiServer } from '../../lib/local/kube/index.js';
import { localPaths, writeDescriptor, type LocalStackDescriptor } from '../../lib/local/stack/local-files.js';
import { runCli } from './cli-run.js';

const PV = 'pvc-00000000-0000-4000-8000-000000000001';

let sim: RunningEc2Simulator;
let api: KubeApiServer;
let cwd: string;
let stack: LocalStackDescriptor;
let endpoints: Array<{ endpoint: string | undefined; credentials: LocalCredentials | undefined }>;

beforeEach(async () => {
  sim = await startEc2Simulator({ host: '127.0.0.1', port: 0, seed: 3, throttling: false }, new ManualClock(Date.UTC(2025, 5, 1, 12)));
  const store = createObjectStore();
  store.create('persistentvolumes', {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name: PV },
    spec: { capacity: { storage: '4Gi' }, accessModes: ['ReadWriteOnce'], csi: { driver: 'ebs.csi.aws.com', volumeHandle: 'vol-0123456789abcdef0' } },
  } as never);
  api = await startKubeApiServer({ store, port: 0, host: '127.0.0.1' });
  cwd = mkdtempSync(join(tmpdir(), 'volhook-cli-local-'));
  const dir = join(cwd, '.volhook', 'local');
  const paths = localPaths(dir);
  stack = { clusterId: 'local', region: 'us-east-1', ec2Endpoint: sim.url, backendUrl: 'http://127.0.0.1:9', kubeUrl: api.url, registryFile: paths.registryFile, reportsDir: paths.reportsDir, pid: process.pid };
  await writeDescriptor(dir, stack);
  // The stack's backend reads this file; npm start registers its cluster there.
  expect((await cli('add', 'local', '--region', 'us-east-1', '--file', stack.registryFile)).code).toBe(0);
  endpoints = [];
});
afterEach(async () => {
  await api.close();
  await sim.close();
});

async function cli(...argv: string[]) {
  return runCli(argv, {
    cwd,
    ec2Client(region, endpoint, credentials) {
      const keys = credentials as LocalCredentials | undefined;
      endpoints.push({ endpoint, credentials: keys });
      return new EC2Client({ region, endpoint: endpoint ?? 'http://127.0.0.1:9', credentials: keys ?? { accessKeyId: 'operator', secretAccessKey: 'operator' }, maxAttempts: 1 });
    },
  });
}


describe('the local stack, found the same way by every command', () => {
  it('show local, adopt local, audit local -> its registry file, its simulator with its keys, its kube API', async () => {
    const show = await cli('show', 'local');
    expect(show.stderr).toBe('');
    expect(show.code).toBe(0);
    expect(JSON.parse(show.stdout)).toMatchObject({ clusterId: 'local', region: 'us-east-1' });

    const adopt = await cli('adopt', 'local', '--json');
    expect(adopt.stderr).not.toMatch(/error|not registered/);
    // The PV came from the stack's Kubernetes API: no --kubeconfig, no --pvs.
    expect(adopt.stdout).toContain(PV);

    const audit = await cli('audit', 'local', '--json');
    expect(audit.stderr).not.toMatch(/error/);
    expect(audit.code).toBe(0);

    expect(endpoints.length).toBeGreaterThanOrEqual(2);
    for (const seen of endpoints) expect(seen).toMatchObject({ endpoint: sim.url, credentials: LOCAL_CREDENTIALS });
  });

  it('rotate-secret local and release local -> the stack\'s registry file and its Kubernetes API too', async () => {
    const rotate = await cli('rotate-secret', 'local');
    expect(rotate.code).toBe(0);
    expect(rotate.stderr).toContain(`added a secret to cluster "local" in file ${stack.registryFile}`);
    const shown = JSON.parse((await cli('show', 'local')).stdout) as { secrets: string[] };
    expect(shown.secrets).toHaveLength(2);

    const release = await cli('release', 'local');
    expect(release.code).toBe(0);
    expect(release.stderr).toContain(`cluster "local" (${api.url})`);
  });

  it('control: --file given -> that file, not the stack: show local is not registered there; no EC2 call for adopt', async () => {
    const other = join(cwd, 'other.json');
    const show = await cli('show', 'local', '--file', other);
    expect(show.code).toBe(1);
    expect(show.stderr).toContain(`cluster "local" is not registered in file ${other}`);
    const adopt = await cli('adopt', 'local', '--file', other, '--pvs', '/nonexistent/pvs.json');
    expect(adopt.code).toBe(2);
    expect(endpoints).toEqual([]);
  });

  it('control: another cluster id -> not the stack (the default registry file)', async () => {
    const show = await cli('show', 'c9');
    expect(show.code).toBe(1);
    expect(show.stderr).toContain('cluster "c9" is not registered in file .volhook/clusters.json');
  });
});

describe('localStackFor', () => {
  const running = { clusterId: 'local' } as LocalStackDescriptor;
  it.each([
    ['no registry given, the stack runs this cluster -> the stack', { clusterId: 'local', targetGiven: false }, running, running],
    ['a registry given -> none', { clusterId: 'local', targetGiven: true }, running, undefined],
    ['another cluster -> none', { clusterId: 'c9', targetGiven: false }, running, undefined],
    ['no stack running -> none', { clusterId: 'local', targetGiven: false }, undefined, undefined],
  ])('%s', (_what, command, stackNow, expected) => {
    expect(localStackFor(command, stackNow)).toBe(expected);
  });
});
