/**
 * The forwarder's chart through its life on the stack's Kubernetes, with helm 4 as a platform
 * team runs it (the kubectl layer's helm, the stack's kubeconfig): installed, upgraded (a value
 * changed, the pods to be rolled by the config checksum), an upgrade the schema refuses,
 * rolled back, uninstalled. On the simulated API or the real control plane (plane.ts); released
 * as `vh` in namespace `storage`, apart from the stack's own forwarder identity, with the
 * cluster's CSIDriver left to the cluster (`csiDriver.create=false`).
 */
import { AppsV1Api, CoreV1Api, RbacAuthorizationV1Api, StorageV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHART_DIR } from '../../infra/tools/chart.js';
import { kubeToolsFor, type KubeTools } from './support/helm.js';
import { orMissing } from './support/kube.js';
import { kubeConfigOf, STACK_START_MS } from './support/plane.js';
import { startE2eStack, type E2eStack } from './support/stack.js';
import { waitFor } from './support/wait.js';

const NS = 'storage';
const RELEASE = 'vh';
const SECRET = 'whsec_MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=';

let stack: E2eStack;
let tools: KubeTools;
let core: CoreV1Api;
let apps: AppsV1Api;
let rbac: RbacAuthorizationV1Api;

beforeAll(async () => {
  stack = await startE2eStack({ forwarder: false });
  tools = await kubeToolsFor(stack);
  const kc = kubeConfigOf(stack);
  core = kc.makeApiClient(CoreV1Api);
  apps = kc.makeApiClient(AppsV1Api);
  rbac = kc.makeApiClient(RbacAuthorizationV1Api);
}, STACK_START_MS);
afterAll(async () => {
  await tools?.close();
  await stack?.stop();
});

const helm = (...args: string[]) => tools.helm(...args);
const configData = async () => (await core.readNamespacedConfigMap({ name: RELEASE, namespace: NS })).data ?? {};
const checksum = async () => (await apps.readNamespacedDeployment({ name: RELEASE, namespace: NS })).spec?.template.metadata?.annotations?.['checksum/config'];
/** The release's revisions as helm keeps them (its Secrets): `1 superseded`, `2 deployed`… */
const revisions = async () =>
  (await core.listNamespacedSecret({ namespace: NS, labelSelector: `owner=helm,name=${RELEASE}` })).items.map((s) => `${s.metadata?.labels?.version} ${s.metadata?.labels?.status}`).sort();

/** Each object of the chart by kind, read through the API: present or not. */
async function objects(): Promise<Record<string, boolean>> {
  const there = async (read: Promise<unknown>) => (await orMissing(read)) !== undefined;
  return {
    ServiceAccount: await there(core.readNamespacedServiceAccount({ name: RELEASE, namespace: NS })),
    ConfigMap: await there(core.readNamespacedConfigMap({ name: RELEASE, namespace: NS })),
    Secret: await there(core.readNamespacedSecret({ name: RELEASE, namespace: NS })),
    Deployment: await there(apps.readNamespacedDeployment({ name: RELEASE, namespace: NS })),
    ClusterRole: await there(rbac.readClusterRole({ name: RELEASE })),
    ClusterRoleBinding: await there(rbac.readClusterRoleBinding({ name: RELEASE })),
  };
}
const all = (present: boolean) => ({ ServiceAccount: present, ConfigMap: present, Secret: present, Deployment: present, ClusterRole: present, ClusterRoleBinding: present });

describe('the chart installed, upgraded, rolled back and uninstalled with helm', () => {
  it('install -> revision 1 deployed, every object of the chart there, the release kept in its Secret', async () => {
    const installed = await helm('upgrade', '--install', RELEASE, CHART_DIR, '-n', NS, '--create-namespace',
      '--set', `backendUrl=${stack.urls.backend}`, '--set', `clusterId=${stack.clusterId}`, '--set', `secret.value=${SECRET}`, '--set', 'csiDriver.create=false');
    expect(installed.stderr).toBe('');
    expect(installed.code).toBe(0);
    expect(installed.stdout).toContain('STATUS: deployed');
    expect(installed.stdout).toContain('REVISION: 1');
    expect(await objects()).toEqual(all(true));
    expect(await configData()).toMatchObject({ VOLHOOK_CLUSTER_ID: stack.clusterId, VOLHOOK_LOG_LEVEL: 'info' });
    expect(await revisions()).toEqual(['1 deployed']);
    expect((await helm('status', RELEASE, '-n', NS)).stdout).toContain('STATUS: deployed');
  }, 120_000);

  it('upgrade with a value changed -> revision 2, the ConfigMap changed, the pods to be rolled (a new checksum)', async () => {
    const before = await checksum();
    const upgraded = await helm('upgrade', RELEASE, CHART_DIR, '-n', NS, '--reuse-values', '--set', 'logLevel=debug');
    expect(upgraded.code, upgraded.stderr).toBe(0);
    expect(upgraded.stdout).toContain('REVISION: 2');
    expect((await configData()).VOLHOOK_LOG_LEVEL).toBe('debug');
    expect(await checksum()).not.toBe(before);
    expect(await revisions()).toEqual(['1 superseded', '2 deployed']);
  }, 120_000);

  it('an upgrade the schema refuses -> helm names the value; no revision, nothing changed', async () => {
    const refused = await helm('upgrade', RELEASE, CHART_DIR, '-n', NS, '--reuse-values', '--set', 'clusterId=Prod_EU_1');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("at '/clusterId'");
    expect((await configData()).VOLHOOK_CLUSTER_ID).toBe(stack.clusterId);
    expect(await revisions()).toEqual(['1 superseded', '2 deployed']);
  }, 120_000);

  it("rollback to 1 -> revision 3 with revision 1's values", async () => {
    const rolled = await helm('rollback', RELEASE, '1', '-n', NS);
    expect(rolled.code, rolled.stderr).toBe(0);
    expect((await configData()).VOLHOOK_LOG_LEVEL).toBe('info');
    expect(await revisions()).toEqual(['1 superseded', '2 superseded', '3 deployed']);
  }, 120_000);

  it("uninstall -> the chart's objects and the release's Secrets gone; the namespace and the cluster's CSIDriver stay", async () => {
    const removed = await helm('uninstall', RELEASE, '-n', NS);
    expect(removed.stderr).toBe('');
    expect(removed.code).toBe(0);
    await waitFor(objects, (o) => Object.values(o).every((present) => !present), { what: "the chart's objects gone" });
    expect(await revisions()).toEqual([]);
    expect(await orMissing(core.readNamespace({ name: NS }))).toBeDefined();
    expect((await kubeConfigOf(stack).makeApiClient(StorageV1Api).readCSIDriver({ name: 'ebs.csi.aws.com' })).spec.attachRequired).toBe(true);
  }, 120_000);
});
