/**
 * The chart's life as a platform team lives it, with helm 4 against the local API: install,
 * upgrade (a value changed, the pods rolled by the config checksum), an upgrade the schema
 * refuses (nothing changes), rollback, uninstall. Helm keeps its releases in Secrets, which its
 * client sends as protobuf: the local API decodes those (lib/local/kube/protobuf.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHART_DIR } from '../../infra/tools/chart.js';
import { createObjectStore, startKubeApiServer, type KubeApiServer, type LocalObjectStore } from '../../lib/local/kube/index.js';
import { kubectl134, type Kubectl } from '../local/kube/kubectl134.js';

const NS = 'volhook-system';
const RELEASE = 'volhook-forwarder';
const SECRET = 'whsec_MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=';

let store: LocalObjectStore;
let server: KubeApiServer;
let kubectl: Kubectl;

const helm = (...args: string[]) => kubectl.helm(...args);

const configMap = () => store.get('configmaps', RELEASE, NS) as { data: Record<string, string> } | undefined;
const podAnnotations = () => (store.get('deployments', RELEASE, NS) as { spec: { template: { metadata: { annotations: Record<string, string> } } } } | undefined)?.spec.template.metadata.annotations;
const releases = () => store.list('secrets', { namespace: NS }).items.filter((s) => s.metadata.labels?.owner === 'helm').map((s) => `${s.metadata.labels?.version} ${s.metadata.labels?.status}`).sort();

beforeAll(async () => {
  store = createObjectStore();
  server = await startKubeApiServer({ store });
  kubectl = await kubectl134(server.url);
});

afterAll(async () => {
  await kubectl?.close();
  await server?.close();
});

describe('helm upgrade --install, upgrade, rollback, uninstall against the local API', () => {
  it('install -> revision 1 deployed, every object there, the release kept in its Secret', async () => {
    const installed = await helm('upgrade', '--install', RELEASE, CHART_DIR, '-n', NS, '--create-namespace', '--set', 'backendUrl=https://abc123.execute-api.eu-west-1.amazonaws.com', '--set', 'clusterId=prod-eu-1', '--set', `secret.value=${SECRET}`);
    expect(installed.stderr).toBe('');
    expect(installed.code).toBe(0);
    expect(installed.stdout).toContain('STATUS: deployed');
    expect(installed.stdout).toContain('REVISION: 1');
    for (const [resource, name, ns] of [['serviceaccounts', RELEASE, NS], ['deployments', RELEASE, NS], ['secrets', RELEASE, NS], ['clusterroles', RELEASE], ['csidrivers', 'ebs.csi.aws.com']] as const) {
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
    for (const [resource, name, ns] of [['serviceaccounts', RELEASE, NS], ['deployments', RELEASE, NS], ['configmaps', RELEASE, NS], ['secrets', RELEASE, NS], ['clusterroles', RELEASE], ['csidrivers', 'ebs.csi.aws.com']] as const) {
      expect(store.get(resource, name, ns), `${resource} ${name}`).toBeUndefined();
    }
    expect(releases()).toEqual([]);
    expect(store.get('namespaces', NS)).toBeDefined();
  });
});
