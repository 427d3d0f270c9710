import { execFile, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startHarness, type Harness } from './helpers.js';

const run = promisify(execFile);
const KUBECTL = '/usr/bin/kubectl';

let h: Harness;
let home: string;

/** kubectl with a throwaway HOME (its discovery cache lives in ~/.kube/cache) and no kubeconfig. */
function env(): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH, HOME: home, KUBECONFIG: join(home, 'none'), NO_PROXY: '127.0.0.1', no_proxy: '127.0.0.1' };
}

async function kubectl(...args: string[]): Promise<string> {
  const { stdout } = await run(KUBECTL, ['--server', h.server.url, ...args], { env: env(), timeout: 20_000 });
  return stdout;
}

async function manifest(name: string, text: string): Promise<string> {
  const path = join(home, name);
  await writeFile(path, text);
  return path;
}

const claimYaml = (name: string, tier: string) => `apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: ${name}
  labels:
    tier: ${tier}
spec:
  accessModes: [ReadWriteOnce]
  resources:
    requests:
      storage: 4Gi
`;

beforeAll(async () => {
  h = await startHarness();
  home = await mkdtemp(join(tmpdir(), 'volhook-kubectl-'));
  h.store.create('storageclasses', {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: { name: 'gp3', annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } },
    provisioner: 'ebs.csi.aws.com',
    volumeBindingMode: 'WaitForFirstConsumer',
  });
});

afterAll(async () => {
  await h.server.close();
  await rm(home, { recursive: true, force: true });
});

describe('local Kubernetes API through kubectl 1.32', () => {
  it('create -f then get -> PVC stored with defaults and listed with STATUS and STORAGECLASS columns', async () => {
    expect(await kubectl('create', '-f', await manifest('data.yaml', claimYaml('data', 'db')))).toBe('persistentvolumeclaim/data created\n');

    const table = (await kubectl('get', 'pvc')).split('\n');
    expect(table[0]).toMatch(/^NAME\s+STATUS\s+VOLUME\s+CAPACITY\s+ACCESS MODES\s+STORAGECLASS\s+VOLUMEATTRIBUTESCLASS\s+AGE$/);
    expect(table[1]).toMatch(/^data\s+Pending\s+gp3\s+<unset>\s+\d+s$/);

    const json = JSON.parse(await kubectl('get', 'pvc', 'data', '-o', 'json')) as { spec: { volumeMode: string; storageClassName: string } };
    expect(json.spec).toMatchObject({ volumeMode: 'Filesystem', storageClassName: 'gp3' });
  });

  it('apply -f twice -> created, then configured by a strategic merge patch that keeps last-applied', async () => {
    const path = await manifest('applied.yaml', claimYaml('applied', 'web'));
    expect(await kubectl('apply', '-f', path)).toBe('persistentvolumeclaim/applied created\n');
    await writeFile(path, claimYaml('applied', 'cache'));
    expect(await kubectl('apply', '-f', path)).toBe('persistentvolumeclaim/applied configured\n');

    const stored = h.store.get('persistentvolumeclaims', 'applied', 'default');
    expect(stored?.metadata.labels).toEqual({ tier: 'cache' });
    const lastApplied = JSON.parse(stored?.metadata.annotations?.['kubectl.kubernetes.io/last-applied-configuration'] ?? '{}') as { metadata: { labels: object } };
    expect(lastApplied.metadata.labels).toEqual({ tier: 'cache' });
  });

  it('describe pvc -> status, class and the events about the claim', async () => {
    const claim = h.store.get('persistentvolumeclaims', 'data', 'default');
    h.store.create('events', {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: 'data.provisioning', namespace: 'default' },
      involvedObject: { kind: 'PersistentVolumeClaim', apiVersion: 'v1', namespace: 'default', name: 'data', uid: claim?.metadata.uid },
      reason: 'WaitForFirstConsumer',
      message: 'waiting for first consumer to be created before binding',
      type: 'Normal',
      source: { component: 'persistentvolume-controller' },
    });
    const out = await kubectl('describe', 'pvc', 'data');
    expect(out).toMatch(/^Name:\s+data$/m);
    expect(out).toMatch(/^Status:\s+Pending$/m);
    expect(out).toMatch(/^StorageClass:\s+gp3$/m);
    expect(out).toMatch(/Normal\s+WaitForFirstConsumer\s+\S+\s+persistentvolume-controller\s+waiting for first consumer/);
  });

  it('get pv,sc -> server-side columns for volumes and classes', async () => {
    h.store.create('persistentvolumes', {
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: { name: 'pvc-1234' },
      spec: {
        capacity: { storage: '4Gi' },
        accessModes: ['ReadWriteOnce'],
        persistentVolumeReclaimPolicy: 'Delete',
        storageClassName: 'gp3',
        claimRef: { namespace: 'default', name: 'data' },
        csi: { driver: 'ebs.csi.aws.com', volumeHandle: 'vol-0123456789abcdef0' },
      },
    });
    const out = await kubectl('get', 'pv,sc');
    expect(out).toMatch(/^persistentvolume\/pvc-1234\s+4Gi\s+RWO\s+Delete\s+Pending\s+default\/data\s+gp3\s+<unset>\s+\d+s$/m);
    expect(out).toMatch(/^storageclass\.storage\.k8s\.io\/gp3 \(default\)\s+ebs\.csi\.aws\.com\s+Delete\s+WaitForFirstConsumer\s+false\s+\d+s$/m);
  });

  it('get pvc -w -> prints a new row when a claim changes', async () => {
    const child = spawn(KUBECTL, ['--server', h.server.url, 'get', 'pvc', 'data', '-w'], { env: env() });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    try {
      await vi.waitFor(() => expect(out.split('\n').filter(Boolean)).toHaveLength(2), { timeout: 10_000 });
      h.store.patch('persistentvolumeclaims', 'data', 'default', 'merge', { spec: { volumeName: 'pvc-1234' } });
      await vi.waitFor(() => expect(out).toMatch(/^data\s+Pending\s+pvc-1234\s/m), { timeout: 10_000 });
    } finally {
      child.kill();
    }
  });

  it('create namespace (kubectl sends protobuf for it) -> namespace created', async () => {
    expect(await kubectl('create', 'namespace', 'team-b')).toBe('namespace/team-b created\n');
    expect(h.store.get('namespaces', 'team-b')?.metadata.labels).toEqual({ 'kubernetes.io/metadata.name': 'team-b' });
  });

  it('delete pvc -> reported deleted and gone from the store', async () => {
    expect(await kubectl('delete', 'pvc', 'applied')).toBe('persistentvolumeclaim "applied" deleted\n');
    expect(h.store.get('persistentvolumeclaims', 'applied', 'default')).toBeUndefined();
  });
});
