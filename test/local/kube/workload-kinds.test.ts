/**
 * The configuration, RBAC and workload kinds the forwarder's manifests and chart need
 * (ServiceAccount, ConfigMap, Secret, Service, Role/Binding, ClusterRole/Binding, Deployment,
 * PodDisruptionBudget, and ServiceMonitor when the server serves it), over HTTP through
 * `@kubernetes/client-node`: CRUD and watch, discovery, their defaults and their rules.
 */
import { KubernetesObjectApi, Watch, type KubernetesObject } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { KubeObject } from '../../../lib/local/kube/index.js';
import { failure, startHarness, type Harness } from './helpers.js';

let h: Harness;
let plain: Harness;
let client: KubernetesObjectApi;

beforeAll(async () => {
  [h, plain] = await Promise.all([startHarness({}, { serviceMonitors: true }), startHarness()]);
  client = KubernetesObjectApi.makeApiClient(h.kc);
});
afterAll(async () => {
  await h.server.close();
  await plain.server.close();
});

const ns = 'default';
const labels = { app: 'web' };
const podTemplate = { metadata: { labels }, spec: { containers: [{ name: 'web', image: 'nginx:1.27', ports: [{ containerPort: 80 }] }] } };

const samples: Array<{ path: string; object: KubernetesObject }> = [
  { path: `/api/v1/namespaces/${ns}/serviceaccounts`, object: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'web', namespace: ns } } },
  { path: `/api/v1/namespaces/${ns}/configmaps`, object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'web', namespace: ns }, data: { a: '1' } } as KubernetesObject },
  { path: `/api/v1/namespaces/${ns}/secrets`, object: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'web', namespace: ns }, data: { a: 'MQ==' } } as KubernetesObject },
  { path: `/api/v1/namespaces/${ns}/services`, object: { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: ns }, spec: { selector: labels, ports: [{ port: 80 }] } } as KubernetesObject },
  {
    path: `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/roles`,
    object: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'web', namespace: ns }, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }] } as KubernetesObject,
  },
  {
    path: `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/rolebindings`,
    object: {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'web', namespace: ns },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'web' },
      subjects: [{ kind: 'ServiceAccount', name: 'web', namespace: ns }],
    } as KubernetesObject,
  },
  {
    path: '/apis/rbac.authorization.k8s.io/v1/clusterroles',
    object: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'system:web' }, rules: [{ apiGroups: [''], resources: ['nodes'], verbs: ['list'] }] } as KubernetesObject,
  },
  {
    path: '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings',
    object: {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'system:web' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'system:web' },
      subjects: [{ kind: 'ServiceAccount', name: 'web', namespace: ns }],
    } as KubernetesObject,
  },
  { path: `/apis/apps/v1/namespaces/${ns}/deployments`, object: { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: ns }, spec: { selector: { matchLabels: labels }, template: podTemplate } } as KubernetesObject },
  { path: `/apis/policy/v1/namespaces/${ns}/poddisruptionbudgets`, object: { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'web', namespace: ns }, spec: { minAvailable: 1, selector: { matchLabels: labels } } } as KubernetesObject },
  {
    path: `/apis/monitoring.coreos.com/v1/namespaces/${ns}/servicemonitors`,
    object: { apiVersion: 'monitoring.coreos.com/v1', kind: 'ServiceMonitor', metadata: { name: 'web', namespace: ns }, spec: { selector: { matchLabels: labels }, endpoints: [{ port: 'http' }] } } as KubernetesObject,
  },
];

const ref = (o: KubernetesObject) => ({ apiVersion: o.apiVersion as string, kind: o.kind as string, metadata: { name: o.metadata?.name as string, namespace: o.metadata?.namespace as string } });

describe('configuration, RBAC and workload kinds', () => {
  it('each kind: create, read, list, replace and delete via discovery, each change seen by a watch', async () => {
    for (const { path, object } of samples) {
      const events: string[] = [];
      const watching = await new Watch(h.kc).watch(path, { resourceVersion: h.store.resourceVersion }, (type: string, o: KubernetesObject) => events.push(`${type} ${o.metadata?.name}`), () => undefined);
      try {
        const created = await client.create(object);
        expect(created.metadata?.uid, object.kind).toMatch(/^[0-9a-f-]{36}$/);
        expect((await client.read(ref(object))).metadata?.resourceVersion, object.kind).toBe(created.metadata?.resourceVersion);
        const listed = await client.list(object.apiVersion as string, object.kind as string, object.metadata?.namespace);
        expect(listed.items.map((i) => i.metadata?.name), object.kind).toEqual([object.metadata?.name]);
        const replaced = await client.replace({ ...created, metadata: { ...created.metadata, labels: { touched: 'yes' } } });
        expect(replaced.metadata?.labels, object.kind).toEqual({ touched: 'yes' });
        await client.delete(object);
        expect((await failure(client.read(ref(object)))).code, object.kind).toBe(404);
        const name = object.metadata?.name;
        await vi.waitFor(() => expect(events, object.kind).toEqual([`ADDED ${name}`, `MODIFIED ${name}`, `DELETED ${name}`]));
      } finally {
        watching.abort();
      }
    }
  });

  it('discovery -> the new groups and kinds with their short names; ServiceMonitors only where the server serves them', async () => {
    const groups = async (harness: Harness) => ((await (await fetch(`${harness.server.url}/apis`)).json()) as { groups: Array<{ name: string }> }).groups.map((g) => g.name);
    expect(await groups(h)).toEqual(expect.arrayContaining(['rbac.authorization.k8s.io', 'apps', 'policy', 'monitoring.coreos.com']));
    expect(await groups(plain)).not.toContain('monitoring.coreos.com');
    expect(await groups(plain)).toEqual(expect.arrayContaining(['rbac.authorization.k8s.io', 'apps', 'policy']));
    const core = (await (await fetch(`${h.server.url}/api/v1`)).json()) as { resources: Array<{ name: string; shortNames?: string[] }> };
    expect(core.resources.filter((r) => ['serviceaccounts', 'configmaps', 'services'].includes(r.name)).map((r) => [r.name, r.shortNames])).toEqual([
      ['serviceaccounts', ['sa']],
      ['configmaps', ['cm']],
      ['services', ['svc']],
    ]);
    expect((await fetch(`${plain.server.url}/apis/monitoring.coreos.com/v1/namespaces/${ns}/servicemonitors`)).status).toBe(404);
    expect((await fetch(`${h.server.url}/apis/monitoring.coreos.com/v1/namespaces/${ns}/servicemonitors`)).status).toBe(200);
  });

  it('defaults as the API server sets them: Deployment strategy and pod template, Service cluster IP and ports, Secret stringData as data', () => {
    const deployment = h.store.create('deployments', { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd', namespace: ns }, spec: { selector: { matchLabels: labels }, template: podTemplate } });
    expect(deployment.spec).toMatchObject({
      replicas: 1,
      revisionHistoryLimit: 10,
      progressDeadlineSeconds: 600,
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } },
      template: { spec: { restartPolicy: 'Always', dnsPolicy: 'ClusterFirst', containers: [{ imagePullPolicy: 'IfNotPresent', ports: [{ containerPort: 80, protocol: 'TCP' }] }] } },
    });
    const first = h.store.create('services', { apiVersion: 'v1', kind: 'Service', metadata: { name: 'a', namespace: ns }, spec: { ports: [{ port: 80 }] } });
    const second = h.store.create('services', { apiVersion: 'v1', kind: 'Service', metadata: { name: 'b', namespace: ns }, spec: { ports: [{ port: 80 }] } });
    expect(first.spec).toMatchObject({ type: 'ClusterIP', sessionAffinity: 'None', clusterIP: '10.96.0.10', clusterIPs: ['10.96.0.10'], ports: [{ port: 80, protocol: 'TCP', targetPort: 80 }] });
    expect((second.spec as { clusterIP: string }).clusterIP).toBe('10.96.0.11');
    // An update leaving the cluster IP out keeps it (patchAllocatedValues).
    const updated = h.store.update('services', { ...first, spec: { ports: [{ port: 81 }] } } as KubeObject);
    expect((updated.spec as { clusterIP: string }).clusterIP).toBe('10.96.0.10');
    const secret = h.store.create('secrets', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: ns }, stringData: { k: 'v' }, data: { k: 'b2xk', o: 'eA==' } });
    expect(secret).toMatchObject({ type: 'Opaque', data: { k: 'dg==', o: 'eA==' } });
    expect(secret).not.toHaveProperty('stringData');
  });

  it('their rules -> roleRef and cluster IP immutable; a selector must match its template; RBAC names may hold colons, Service names must be DNS labels', () => {
    const store = h.store;
    const binding = store.create('rolebindings', { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'b', namespace: ns }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'x' } });
    expect(() => store.update('rolebindings', { ...binding, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'y' } })).toThrow('roleRef: Invalid value: {"apiGroup":"rbac.authorization.k8s.io","kind":"Role","name":"y"}: cannot change roleRef');
    expect(() => store.create('deployments', { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'bad', namespace: ns }, spec: { selector: { matchLabels: { app: 'other' } }, template: podTemplate } })).toThrow(
      'spec.template.metadata.labels: Invalid value: {"app":"web"}: `selector` does not match template `labels`',
    );
    const service = store.get('services', 'a', ns) as KubeObject;
    expect(() => store.update('services', { ...service, spec: { ...(service.spec as object), clusterIP: '10.96.0.99' } })).toThrow('may not change once set');
    expect(store.create('clusterroles', { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'system:controller:x' } }).metadata.name).toBe('system:controller:x');
    expect(() => store.create('services', { apiVersion: 'v1', kind: 'Service', metadata: { name: '9lives', namespace: ns }, spec: { ports: [{ port: 80 }] } })).toThrow('a DNS-1035 label');
  });

  it('kubectl-style tables -> the columns of kube-apiserver\'s printers for Deployments, Services and bindings', async () => {
    const table = async (path: string) =>
      (await (await fetch(`${h.server.url}${path}`, { headers: { accept: 'application/json;as=Table;g=meta.k8s.io;v=v1' } })).json()) as { columnDefinitions: Array<{ name: string }>; rows: Array<{ cells: unknown[] }> };
    const deployments = await table(`/apis/apps/v1/namespaces/${ns}/deployments`);
    expect(deployments.columnDefinitions.map((c) => c.name)).toEqual(['Name', 'Ready', 'Up-to-date', 'Available', 'Age']);
    expect(deployments.rows[0]?.cells.slice(0, 4)).toEqual(['d', '0/1', 0, 0]);
    const services = await table(`/api/v1/namespaces/${ns}/services/a`);
    expect(services.rows[0]?.cells.slice(0, 5)).toEqual(['a', 'ClusterIP', '10.96.0.10', '<none>', '81/TCP']);
    const bindings = await table(`/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/rolebindings`);
    expect(bindings.rows[0]?.cells.slice(0, 2)).toEqual(['b', 'Role/x']);
  });
});
