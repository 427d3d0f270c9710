/**
 * The chart's life as a platform team lives it, with helm 4 against the local API: install,
 * upgrade (a value changed, the pods rolled by the config checksum), an upgrade the schema
 * refuses (nothing changes), rollback, uninstall. Helm keeps its releases in Secrets, which its
 * client sends as protobuf: the local API decodes those (lib/local/kube/protobuf.ts).
 *
 * The install is the one `cluster add` prints, run as printed by a shell in the repository, on a
 * cluster whose EBS CSI node plugin already made the CSIDriver (as every EKS cluster has).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHART_DIR } from '../../infra/tools/chart.js';
import { kubeTools } from '../../infra/tools/kube-tools.js';
import { SECRET_FILE } from '../../lib/cli/install-line.js';
import { createObjectStore, startKubeApiServer, type KubeApiServer, type LocalObjectStore } from '../../lib/local/kube/index.js';
import { kubectl134, type Kubectl } from '../local/kube/kubectl134.js';
import { runCli } from './cli-run.js';

const NS = 'volhook-system';
const RELEASE = 'volhook-forwarder';
const SECRET = 'whsec_MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const BACKEND = 'https://abc123.execute-api.eu-west-1.amazonaws.com';

let store: LocalObjectStore;
let server: KubeApiServer;
let kubectl: Kubectl;
let work: string;

const helm = (...args: string[]) => kubectl.helm(...args);

const configMap = () => store.get('configmaps', RELEASE, NS) as { data: Record<string, string> } | undefined;
const podAnnotations = () => (store.get('deployments', RELEASE, NS) as { spec: { template: { metadata: { annotations: Record<string, string> } } } } | undefined)?.spec.template.metadata.annotations;
const releases = () => store.list('secrets', { namespace: NS }).items.filter((s) => s.metadata.labels?.owner === 'helm').map((s) => `${s.metadata.labels?.version} ${s.metadata.labels?.status}`).sort();

beforeAll(async () => {
  store = createObjectStore();
  server = await startKubeApiServer({ store });
  kubectl = await kubectl134(server.url);
  work = mkdtempSync(join(tmpdir(), 'volhook-chart-install-'));
});

afterAll(async () => {
  await kubectl?.close();
  await server?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

/** The CSIDriver as the aws-ebs-csi-driver chart makes it: another release's object. */
const nodePluginsCsiDriver = {
  apiVersion: 'storage.k8s.io/v1',
  kind: 'CSIDriver',
  metadata: {
    name: 'ebs.csi.aws.com',
    labels: { 'app.kubernetes.io/managed-by': 'Helm', 'app.kubernetes.io/name': 'aws-ebs-csi-driver' },
    annotations: { 'meta.helm.sh/release-name': 'aws-ebs-csi-driver', 'meta.helm.sh/release-namespace': 'kube-system' },
  },
  spec: { attachRequired: true, podInfoOnMount: false, fsGroupPolicy: 'File' },
};

/** Runs `lines` with sh in the repository (the chart's path is relative), kubectl and helm pointed at the local API. */
function shell(lines: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const tools = kubeTools();
  const script = ['set -e', 'kubectl() { "$KUBECTL_BIN" "$@"; }', 'helm() { "$HELM_BIN" "$@"; }', ...lines].join('\n');
  const env = { PATH: process.env.PATH ?? '', HOME: work, KUBECONFIG: kubectl.kubeconfig, KUBECTL_BIN: tools.kubectl, HELM_BIN: tools.helm, NO_PROXY: '127.0.0.1', no_proxy: '127.0.0.1' };
  return new Promise((resolve) => {
    execFile('sh', ['-c', script], { cwd: REPO, env, timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
    });
  });
}

describe('the install cluster add prints, on a cluster whose EBS CSI node plugin made the CSIDriver', () => {
  it('control: the chart told to create the CSIDriver -> helm refuses to import the node plugin\'s, nothing of ours left deployed', async () => {
    store.create('csidrivers', structuredClone(nodePluginsCsiDriver));
    const refused = await helm('upgrade', '--install', 'control', CHART_DIR, '-n', 'control', '--create-namespace', '--set', `backendUrl=${BACKEND}`, '--set', 'clusterId=prod-eu-1', '--set', `secret.value=${SECRET}`, '--set', 'csiDriver.create=true');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/CSIDriver "ebs\.csi\.aws\.com" .*exists and cannot be imported into the current release/);
    expect(store.get('csidrivers', 'ebs.csi.aws.com')?.metadata.annotations).toEqual(nodePluginsCsiDriver.metadata.annotations);
    expect((await helm('list', '-a', '-q', '-n', 'control')).stdout).toBe('');
    expect(store.get('deployments', 'control', 'control')).toBeUndefined();
  });

  it('cluster add, then its printed steps as printed (namespace, Secret, helm line) -> installed, the CSIDriver still the node plugin\'s', async () => {
    const added = await runCli(['add', 'prod-eu-1', '--region', 'eu-west-1', '--api-url', BACKEND, '--file', join(work, 'clusters.json')]);
    expect(added.code).toBe(0);
    const steps = added.stderr.split('\n').filter((line) => /^ {2}(kubectl|helm) /.test(line)).map((line) => line.trim());
    expect(steps.map((line) => line.split(' ').slice(0, 2).join(' '))).toEqual(['kubectl create', 'kubectl apply', 'helm upgrade']);
    const ran = await shell([`cd ${JSON.stringify(work)}`, `cat > ${SECRET_FILE} <<'EOF'\n${added.stdout}EOF`, ...steps.slice(0, 2), `cd ${JSON.stringify(REPO)}`, steps[2]!]);
    expect(ran.stderr).toBe('');
    expect(ran.code).toBe(0);
    expect(ran.stdout).toContain('STATUS: deployed');
    expect(store.get('csidrivers', 'ebs.csi.aws.com')?.metadata.annotations).toEqual(nodePluginsCsiDriver.metadata.annotations);
    expect(store.get('deployments', RELEASE, NS)).toBeDefined();
    expect((await helm('uninstall', RELEASE, '-n', NS)).code).toBe(0);
    expect(store.get('csidrivers', 'ebs.csi.aws.com'), 'the node plugin\'s CSIDriver outlives the forwarder').toBeDefined();
    expect(store.get('secrets', RELEASE, NS), 'the Secret kubectl applied is not the release\'s').toBeDefined();
    store.delete('secrets', RELEASE, NS);
  });
});

describe('helm upgrade --install, upgrade, rollback, uninstall against the local API', () => {
  it('install -> revision 1 deployed, every object there, the release kept in its Secret', async () => {
    const installed = await helm('upgrade', '--install', RELEASE, CHART_DIR, '-n', NS, '--create-namespace', '--set', `backendUrl=${BACKEND}`, '--set', 'clusterId=prod-eu-1', '--set', `secret.value=${SECRET}`);
    expect(installed.stderr).toBe('');
    expect(installed.code).toBe(0);
    expect(installed.stdout).toContain('STATUS: deployed');
    expect(installed.stdout).toContain('REVISION: 1');
    for (const [resource, name, ns] of [['serviceaccounts', RELEASE, NS], ['deployments', RELEASE, NS], ['secrets', RELEASE, NS], ['clusterroles', RELEASE]] as const) {
      expect(store.get(resource, name, ns), `${resource} ${name}`).toBeDefined();
    }
    expect(configMap()?.data).toMatchObject({ VOLHOOK_CLUSTER_ID: 'prod-eu-1', VOLHOOK_LOG_LEVEL: 'info' });
    expect(releases()).toEqual(['1 deployed']);
    expect(store.get('secrets', `sh.helm.release.v1.${RELEASE}.v1`, NS)).toMatchObject({ type: 'helm.sh/release.v1' });
    // Helm reads its release back from the Secret it wrote.
    expect((await helm('status', RELEASE, '-n', NS)).stdout).toContain('STATUS: deployed');
  });

  it('upgrade with a value changed -> revision 2, the ConfigMap changed and the pods to be rolled (new checksum)', async () => {
    const checksum = podAnnotations()?.['checksum/config'];
    const upgraded = await helm('upgrade', RELEASE, CHART_DIR, '-n', NS, '--reuse-values', '--set', 'logLevel=debug');
    expect(upgraded.code).toBe(0);
    expect(upgraded.stdout).toContain('REVISION: 2');
    expect(configMap()?.data.VOLHOOK_LOG_LEVEL).toBe('debug');
    expect(podAnnotations()?.['checksum/config']).not.toBe(checksum);
    expect(releases()).toEqual(['1 superseded', '2 deployed']);
  });

  it('an upgrade the schema refuses -> helm names the value; no revision, nothing changed', async () => {
    const revision = store.resourceVersion;
    const refused = await helm('upgrade', RELEASE, CHART_DIR, '-n', NS, '--reuse-values', '--set', 'clusterId=Prod_EU_1');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("at '/clusterId'");
    expect(store.resourceVersion).toBe(revision);
    expect(releases()).toEqual(['1 superseded', '2 deployed']);
  });

  it('rollback to 1 -> revision 3 with revision 1\'s values', async () => {
    const rolled = await helm('rollback', RELEASE, '1', '-n', NS);
    expect(rolled.code).toBe(0);
    expect(configMap()?.data.VOLHOOK_LOG_LEVEL).toBe('info');
    expect(releases()).toEqual(['1 superseded', '2 superseded', '3 deployed']);
  });

  it('uninstall -> the forwarder\'s objects and the release\'s Secrets gone; the namespace stays', async () => {
    const removed = await helm('uninstall', RELEASE, '-n', NS);
    expect(removed.stderr).toBe('');
    expect(removed.code).toBe(0);
    for (const [resource, name, ns] of [['serviceaccounts', RELEASE, NS], ['deployments', RELEASE, NS], ['configmaps', RELEASE, NS], ['secrets', RELEASE, NS], ['clusterroles', RELEASE]] as const) {
      expect(store.get(resource, name, ns), `${resource} ${name}`).toBeUndefined();
    }
    expect(store.get('csidrivers', 'ebs.csi.aws.com')).toBeDefined();
    expect(releases()).toEqual([]);
    expect(store.get('namespaces', NS)).toBeDefined();
  });
});
