/**
 * kubectl 1.34 server-side applies what `helm template` renders of the forwarder's chart to the
 * local API — with the defaults and with every knob set: with --dry-run=server (validated,
 * answered, nothing stored), for real, and again (nothing changes). Plus a Service with a
 * ServiceMonitor on a server that does not serve prometheus-operator's CRD, and a manifest with
 * an unknown field.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALL_VALUES, renderChartText } from '../../infra/tools/chart.js';
import { createObjectStore, startKubeApiServer, type KubeApiServer, type LocalObjectStore, type ResourceName } from '../../lib/local/kube/index.js';
import { kubectl134, type Kubectl } from '../local/kube/kubectl134.js';

const NS = 'volhook-system';
const SECRET = 'whsec_MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=';

/** The chart with the required values, its Secret from secret.value and csiDriver.create on, as kubectl names each object it applies. */
const APPLIED = [
  'serviceaccount/volhook-forwarder',
  'role.rbac.authorization.k8s.io/volhook-forwarder-leader-election',
  'clusterrole.rbac.authorization.k8s.io/volhook-forwarder',
  'rolebinding.rbac.authorization.k8s.io/volhook-forwarder-leader-election',
  'clusterrolebinding.rbac.authorization.k8s.io/volhook-forwarder',
  'configmap/volhook-forwarder',
  'secret/volhook-forwarder',
  'deployment.apps/volhook-forwarder',
  'poddisruptionbudget.policy/volhook-forwarder',
  'csidriver.storage.k8s.io/ebs.csi.aws.com',
].sort();

const STORED: Array<[ResourceName, string, string?]> = [
  ['serviceaccounts', 'volhook-forwarder', NS],
  ['roles', 'volhook-forwarder-leader-election', NS],
  ['clusterroles', 'volhook-forwarder'],
  ['rolebindings', 'volhook-forwarder-leader-election', NS],
  ['clusterrolebindings', 'volhook-forwarder'],
  ['configmaps', 'volhook-forwarder', NS],
  ['secrets', 'volhook-forwarder', NS],
  ['deployments', 'volhook-forwarder', NS],
  ['poddisruptionbudgets', 'volhook-forwarder', NS],
  ['csidrivers', 'ebs.csi.aws.com'],
];

/** Every knob set (ci/all-values.yaml, release `fwd`): a Service and a ServiceMonitor, no CSIDriver. */
const APPLIED_ALL = [
  'serviceaccount/fwd',
  'role.rbac.authorization.k8s.io/fwd-leader-election',
  'clusterrole.rbac.authorization.k8s.io/fwd',
  'rolebinding.rbac.authorization.k8s.io/fwd-leader-election',
  'clusterrolebinding.rbac.authorization.k8s.io/fwd',
  'configmap/fwd',
  'secret/fwd',
  'service/fwd',
  'deployment.apps/fwd',
  'poddisruptionbudget.policy/fwd',
  'servicemonitor.monitoring.coreos.com/fwd',
].sort();

const SERVICE_AND_MONITOR = `apiVersion: v1
kind: Service
metadata:
  name: volhook-forwarder
  namespace: ${NS}
  labels: { app.kubernetes.io/name: volhook-forwarder }
spec:
  selector: { app.kubernetes.io/name: volhook-forwarder }
  ports:
    - { name: http, port: 8080, targetPort: http }
---
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata:
  name: volhook-forwarder
  namespace: ${NS}
spec:
  selector:
    matchLabels: { app.kubernetes.io/name: volhook-forwarder }
  endpoints:
    - port: http
      path: /metrics
      relabelings:
        - { sourceLabels: [__meta_kubernetes_pod_node_name], targetLabel: node }
`;

const configMap = (name: string, dataKey: string) => `apiVersion: v1
kind: ConfigMap
metadata:
  name: ${name}
  namespace: ${NS}
${dataKey}:
  VOLHOOK_PORT: "8080"
`;

interface Local {
  store: LocalObjectStore;
  server: KubeApiServer;
  kubectl: Kubectl;
}

/** The chart rendered with the required values, and with every knob set, as files kubectl applies. */
let rendered: { defaults: string; all: string };

async function start(serviceMonitors: boolean): Promise<Local> {
  const store = createObjectStore();
  const server = await startKubeApiServer({ store, serviceMonitors });
  return { store, server, kubectl: await kubectl134(server.url) };
}

const lines = (text: string): string[] => text.split('\n').filter(Boolean);
const sortedLines = (text: string): string[] => lines(text).sort();
const resourceVersions = (store: LocalObjectStore): string[] => STORED.map(([r, name, ns]) => store.get(r, name, ns)?.metadata.resourceVersion ?? 'missing');

let withMonitors: Local;
let plain: Local;

beforeAll(async () => {
  [withMonitors, plain] = await Promise.all([start(true), start(false)]);
  rendered = {
    defaults: await withMonitors.kubectl.manifest('chart.yaml', renderChartText({ valuesFiles: [], values: { backendUrl: 'https://abc123.execute-api.eu-west-1.amazonaws.com', clusterId: 'prod-eu-1', secret: { value: SECRET }, csiDriver: { create: true } } })),
    all: await withMonitors.kubectl.manifest('chart-all.yaml', renderChartText({ valuesFiles: [ALL_VALUES], releaseName: 'fwd' })),
  };
});

afterAll(async () => {
  for (const local of [withMonitors, plain]) {
    await local?.kubectl.close();
    await local?.server.close();
  }
});

describe('kubectl 1.34 apply --server-side against the local API', () => {
  it('dry run on an empty cluster -> cluster-scoped objects answered; namespaced ones refused for the namespace not made yet (helm --create-namespace makes it); nothing stored', async () => {
    const { store, kubectl } = plain;
    const before = store.resourceVersion;
    const result = await kubectl.run('apply', '--server-side', '--dry-run=server', '-f', rendered.defaults);
    expect(result.code).toBe(1);
    expect(sortedLines(result.stdout)).toEqual([
      'clusterrole.rbac.authorization.k8s.io/volhook-forwarder serverside-applied (server dry run)',
      'clusterrolebinding.rbac.authorization.k8s.io/volhook-forwarder serverside-applied (server dry run)',
      'csidriver.storage.k8s.io/ebs.csi.aws.com serverside-applied (server dry run)',
    ]);
    expect(lines(result.stderr)).toEqual(Array(7).fill('Error from server (NotFound): namespaces "volhook-system" not found'));
    expect(store.resourceVersion).toBe(before);
    expect(store.get('namespaces', NS)).toBeUndefined();
  });

  it('dry run with the namespace there -> every object answered, none stored, no event, no resourceVersion used', async () => {
    const { store, kubectl } = withMonitors;
    expect(await kubectl.ok('create', 'namespace', NS)).toBe('namespace/volhook-system created\n');
    const before = store.resourceVersion;
    const events: string[] = [];
    const stops = (['deployments', 'secrets', 'clusterroles', 'csidrivers'] as const).map((r) => store.watch(r, { resourceVersion: before }, (e) => events.push(`${r} ${e.type}`)));

    const out = await kubectl.ok('apply', '--server-side', '--dry-run=server', '-f', rendered.defaults);
    const all = await kubectl.ok('apply', '--server-side', '--dry-run=server', '-f', rendered.all);

    stops.forEach((stop) => stop());
    expect(sortedLines(out)).toEqual(APPLIED.map((name) => `${name} serverside-applied (server dry run)`));
    expect(sortedLines(all)).toEqual(APPLIED_ALL.map((name) => `${name} serverside-applied (server dry run)`));
    expect(store.resourceVersion).toBe(before);
    expect(events).toEqual([]);
    expect(STORED.map(([r, name, ns]) => store.get(r, name, ns))).toEqual(Array(STORED.length).fill(undefined));
  });

  it('the real apply -> each object stored, kubectl get finds it, owned by the kubectl manager', async () => {
    const { store, kubectl } = withMonitors;
    expect(sortedLines(await kubectl.ok('apply', '--server-side', '-f', rendered.defaults))).toEqual(APPLIED.map((name) => `${name} serverside-applied`));

    const namespaced = await kubectl.ok('get', 'serviceaccount,role,rolebinding,configmap,secret,deployment,poddisruptionbudget', '-n', NS, '-o', 'name');
    expect(lines(namespaced).sort()).toEqual(
      [
        'serviceaccount/volhook-forwarder',
        'role.rbac.authorization.k8s.io/volhook-forwarder-leader-election',
        'rolebinding.rbac.authorization.k8s.io/volhook-forwarder-leader-election',
        'configmap/volhook-forwarder',
        'secret/volhook-forwarder',
        'deployment.apps/volhook-forwarder',
        'poddisruptionbudget.policy/volhook-forwarder',
      ].sort(),
    );
    const cluster = await kubectl.ok('get', 'clusterrole/volhook-forwarder', 'clusterrolebinding/volhook-forwarder', 'csidriver/ebs.csi.aws.com', '-o', 'name');
    expect(lines(cluster)).toEqual(['clusterrole.rbac.authorization.k8s.io/volhook-forwarder', 'clusterrolebinding.rbac.authorization.k8s.io/volhook-forwarder', 'csidriver.storage.k8s.io/ebs.csi.aws.com']);

    for (const [resource, name, ns] of STORED) {
      const managers = (store.get(resource, name, ns)?.metadata.managedFields as Array<{ manager: string; operation: string }> | undefined)?.map((m) => `${m.manager}/${m.operation}`);
      expect(managers, resource).toEqual(['kubectl/Apply']);
    }
    const secret = store.get('secrets', 'volhook-forwarder', NS);
    expect(secret?.data).toEqual({ secret: Buffer.from(SECRET).toString('base64') });
    expect(secret).not.toHaveProperty('stringData');
    const deployment = await kubectl.ok('get', 'deployment', 'volhook-forwarder', '-n', NS, '-o', 'jsonpath={.spec.replicas} {.spec.template.spec.containers[0].env[1].valueFrom.fieldRef.apiVersion} {.spec.revisionHistoryLimit} {.spec.template.spec.priorityClassName}');
    expect(deployment).toBe('2 v1 10 system-cluster-critical');
  });

  it('the same apply again, seconds later -> no object changes (kubectl 1.34 still prints serverside-applied; diff --server-side finds nothing)', async () => {
    const { store, kubectl } = withMonitors;
    // Past the second of the first apply: the Secret's stringData and the Deployment's fieldRef
    // differ from the stored objects until conversion and defaulting, so their managedFields
    // times would move if the server did not keep them for a write that changes nothing else.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const before = resourceVersions(store);
    const revision = store.resourceVersion;
    expect(sortedLines(await kubectl.ok('apply', '--server-side', '-f', rendered.defaults))).toEqual(APPLIED.map((name) => `${name} serverside-applied`));
    expect(resourceVersions(store)).toEqual(before);
    expect(store.resourceVersion).toBe(revision);
    expect(await kubectl.run('diff', '--server-side', '-f', rendered.defaults)).toMatchObject({ code: 0, stdout: '' });

    // Control: the same diff of a changed manifest finds the change (and changes nothing).
    const changed = await kubectl.manifest('pdb.yaml', `apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: { name: volhook-forwarder, namespace: ${NS} }
spec:
  minAvailable: 2
  selector: { matchLabels: { app.kubernetes.io/name: volhook-forwarder, app.kubernetes.io/instance: volhook-forwarder } }
`);
    const diff = await kubectl.run('diff', '--server-side', '-f', changed);
    expect(diff.code).toBe(1);
    expect(diff.stdout).toMatch(/^-  minAvailable: 1$/m);
    expect(diff.stdout).toMatch(/^\+  minAvailable: 2$/m);
    expect(store.resourceVersion).toBe(revision);
  });

  it('every knob set, where the ServiceMonitor CRD is served -> each object applied, the Service with a cluster IP, the ServiceMonitor on its port', async () => {
    const { store, kubectl } = withMonitors;
    expect(sortedLines(await kubectl.ok('apply', '--server-side', '-f', rendered.all))).toEqual(APPLIED_ALL.map((name) => `${name} serverside-applied`));
    const table = lines(await kubectl.ok('get', 'service,servicemonitor', '-n', NS));
    expect(table).toContainEqual(expect.stringMatching(/^service\/fwd\s+ClusterIP\s+10\.96\.0\.\d+\s+<none>\s+9090\/TCP\s+\d+/));
    expect(table).toContainEqual(expect.stringMatching(/^servicemonitor\.monitoring\.coreos\.com\/fwd\s+\d+/));
    expect(store.get('servicemonitors', 'fwd', NS)?.spec).toMatchObject({ endpoints: [{ port: 'http', path: '/metrics', interval: '15s' }] });
    expect(await kubectl.ok('get', 'deployment', 'fwd', '-n', NS, '-o', 'jsonpath={.spec.replicas} {.spec.template.spec.containers[0].image}')).toBe(
      '3 registry.example.internal/mirror/volhook-forwarder@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef',
    );
  });

  it('a Service and a ServiceMonitor with a relabeling, where the CRD is served -> the CRD\'s structural default filled in', async () => {
    const { store, kubectl } = withMonitors;
    const path = await kubectl.manifest('monitoring.yaml', SERVICE_AND_MONITOR);
    expect(lines(await kubectl.ok('apply', '--server-side', '-f', path))).toEqual(['service/volhook-forwarder serverside-applied', 'servicemonitor.monitoring.coreos.com/volhook-forwarder serverside-applied']);
    // The CRD's structural default for a relabeling's action.
    expect(store.get('servicemonitors', 'volhook-forwarder', NS)?.spec).toMatchObject({ endpoints: [{ relabelings: [{ action: 'replace', targetLabel: 'node' }] }] });
    expect(await kubectl.ok('api-resources', '--api-group', 'monitoring.coreos.com', '-o', 'name')).toBe('servicemonitors.monitoring.coreos.com\n');
  });

  it('the same manifest where the CRD is not served -> the Service applied, kubectl says the ServiceMonitor kind is not found', async () => {
    const { store, kubectl } = plain;
    await kubectl.ok('create', 'namespace', NS);
    const result = await kubectl.run('apply', '--server-side', '-f', await kubectl.manifest('monitoring.yaml', SERVICE_AND_MONITOR));
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('service/volhook-forwarder serverside-applied\n');
    expect(result.stderr).toContain('no matches for kind "ServiceMonitor" in version "monitoring.coreos.com/v1"');
    expect(store.list('servicemonitors').items).toEqual([]);
    expect(await kubectl.ok('api-resources', '--api-group', 'monitoring.coreos.com', '-o', 'name')).toBe('');
  });

  it('an unknown field -> server-side apply refuses it (whatever --validate says); client-side apply and create refuse it under strict, drop it with a warning under warn', async () => {
    const { store, kubectl } = withMonitors;
    const typo = await kubectl.manifest('typo.yaml', configMap('typo', 'dataa'));

    const applied = await kubectl.run('apply', '--server-side', '--validate=false', '-f', typo);
    expect(applied.code).toBe(1);
    expect(applied.stderr).toContain('failed to create typed patch object (volhook-system/typo; /v1, Kind=ConfigMap): .dataa: field not declared in schema');

    const strict = await kubectl.run('apply', '-f', typo);
    expect(strict.code).toBe(1);
    expect(strict.stderr).toContain('ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: unknown field "dataa"');
    expect(store.get('configmaps', 'typo', NS)).toBeUndefined();

    const warned = await kubectl.run('create', '--validate=warn', '-f', typo);
    expect(warned).toMatchObject({ code: 0, stdout: 'configmap/typo created\n' });
    expect(warned.stderr).toContain('Warning: unknown field "dataa"');
    expect(store.get('configmaps', 'typo', NS)).not.toHaveProperty('dataa');

    // Control: the same manifest spelt right applies.
    expect(await kubectl.ok('apply', '--server-side', '-f', await kubectl.manifest('right.yaml', configMap('right', 'data')))).toBe('configmap/right serverside-applied\n');
    expect(store.get('configmaps', 'right', NS)?.data).toEqual({ VOLHOOK_PORT: '8080' });
  });

  it('client-side apply, create and delete with --dry-run=server -> answered as the write would be, nothing changed', async () => {
    const { store, kubectl } = withMonitors;
    const revision = store.resourceVersion;
    const changed = await kubectl.manifest('right-changed.yaml', configMap('right', 'data').replace('"8080"', '"9090"'));
    const applied = await kubectl.run('apply', '--dry-run=server', '-f', changed);
    expect(applied).toMatchObject({ code: 0, stdout: 'configmap/right configured (server dry run)\n' });
    expect(await kubectl.ok('create', '--dry-run=server', '-f', await kubectl.manifest('new.yaml', configMap('new', 'data')))).toBe('configmap/new created (server dry run)\n');
    expect(await kubectl.ok('delete', '--dry-run=server', 'configmap', 'right', '-n', NS)).toBe('configmap "right" deleted from volhook-system namespace (server dry run)\n');
    expect(store.resourceVersion).toBe(revision);
    expect(store.get('configmaps', 'right', NS)?.data).toEqual({ VOLHOOK_PORT: '8080' });
    expect(store.get('configmaps', 'new', NS)).toBeUndefined();
    // Control: the same delete without the dry run deletes.
    expect(await kubectl.ok('delete', 'configmap', 'right', '-n', NS)).toBe('configmap "right" deleted from volhook-system namespace\n');
    expect(store.get('configmaps', 'right', NS)).toBeUndefined();
  });
});
