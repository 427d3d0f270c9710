/**
 * Scheme defaults of the workload and configuration kinds (k8s.io/kubernetes
 * `pkg/apis/{core,apps}/v1/defaults.go`), and the Secret conversion that turns `stringData`
 * into `data`. Server-side apply depends on them being right: a defaulted field belongs to no
 * manager, so an apply neither conflicts on it nor removes it.
 */
import { ensureObject, isObject, type JsonObject } from './json.js';
import type { KubeObject } from './types.js';

function setDefault(target: JsonObject, key: string, value: unknown): void {
  if (target[key] === undefined || target[key] === null) target[key] = value;
}

const objects = (value: unknown): JsonObject[] => (Array.isArray(value) ? value.filter(isObject) : []);

/** `SetDefaults_Probe` and its `HTTPGetAction`. */
function probeDefaults(probe: unknown): void {
  if (!isObject(probe)) return;
  setDefault(probe, 'timeoutSeconds', 1);
  setDefault(probe, 'periodSeconds', 10);
  setDefault(probe, 'successThreshold', 1);
  setDefault(probe, 'failureThreshold', 3);
  if (isObject(probe.httpGet)) {
    setDefault(probe.httpGet, 'path', '/');
    setDefault(probe.httpGet, 'scheme', 'HTTP');
  }
}

function containerDefaults(container: JsonObject): void {
  const image = typeof container.image === 'string' ? container.image : '';
  const latest = !/:[^/]+$/.test(image) || image.endsWith(':latest');
  setDefault(container, 'imagePullPolicy', latest && !image.includes('@') ? 'Always' : 'IfNotPresent');
  setDefault(container, 'terminationMessagePath', '/dev/termination-log');
  setDefault(container, 'terminationMessagePolicy', 'File');
  setDefault(container, 'resources', {});
  for (const port of objects(container.ports)) setDefault(port, 'protocol', 'TCP');
  for (const probe of ['livenessProbe', 'readinessProbe', 'startupProbe']) probeDefaults(container[probe]);
  for (const env of objects(container.env)) {
    const fieldRef = isObject(env.valueFrom) ? env.valueFrom.fieldRef : undefined;
    if (isObject(fieldRef)) setDefault(fieldRef, 'apiVersion', 'v1');
  }
}

/** `SetDefaults_PodSpec` with its containers' and volumes' defaults: a Pod's spec, or a template's. */
export function podSpecDefaults(spec: JsonObject): void {
  setDefault(spec, 'restartPolicy', 'Always');
  setDefault(spec, 'dnsPolicy', 'ClusterFirst');
  setDefault(spec, 'schedulerName', 'default-scheduler');
  setDefault(spec, 'terminationGracePeriodSeconds', 30);
  setDefault(spec, 'enableServiceLinks', true);
  setDefault(spec, 'securityContext', {});
  for (const list of ['containers', 'initContainers']) for (const container of objects(spec[list])) containerDefaults(container);
  for (const volume of objects(spec.volumes)) {
    for (const source of ['secret', 'configMap', 'downwardAPI', 'projected']) if (isObject(volume[source])) setDefault(volume[source], 'defaultMode', 420);
  }
}

/** `SetDefaults_Deployment`, and the template's pod defaults. */
export function deploymentDefaults(object: KubeObject): void {
  const spec = ensureObject(object, 'spec');
  setDefault(spec, 'replicas', 1);
  setDefault(spec, 'revisionHistoryLimit', 10);
  setDefault(spec, 'progressDeadlineSeconds', 600);
  const strategy = ensureObject(spec, 'strategy');
  setDefault(strategy, 'type', 'RollingUpdate');
  if (strategy.type === 'RollingUpdate') {
    const rolling = ensureObject(strategy, 'rollingUpdate');
    setDefault(rolling, 'maxUnavailable', '25%');
    setDefault(rolling, 'maxSurge', '25%');
  }
  const template = ensureObject(spec, 'template');
  podSpecDefaults(ensureObject(template, 'spec'));
}

/** `SetDefaults_Service` (the cluster IP is the store's to allocate). */
export function serviceDefaults(object: KubeObject): void {
  const spec = ensureObject(object, 'spec');
  setDefault(spec, 'type', 'ClusterIP');
  setDefault(spec, 'sessionAffinity', 'None');
  if (spec.type !== 'ExternalName') setDefault(spec, 'internalTrafficPolicy', 'Cluster');
  for (const port of objects(spec.ports)) {
    setDefault(port, 'protocol', 'TCP');
    if (port.targetPort === undefined || port.targetPort === null || port.targetPort === 0 || port.targetPort === '') port.targetPort = port.port;
  }
}

/** `SetDefaults_Secret`, and the v1 conversion: each `stringData` entry becomes a base64 `data` entry, overriding it. */
export function secretDefaults(object: KubeObject): void {
  setDefault(object, 'type', 'Opaque');
  if (!isObject(object.stringData)) {
    delete object.stringData;
    return;
  }
  const data = ensureObject(object, 'data');
  for (const [key, value] of Object.entries(object.stringData)) data[key] = Buffer.from(String(value), 'utf8').toString('base64');
  delete object.stringData;
}

/** Where cluster IPs come from (kind's default service CIDR; .1 is the API server's). */
const SERVICE_NET = '10.96.0.';

/**
 * Service IP allocation on create: a cluster IP not in `taken` unless the Service names one
 * (or `None`: headless), with the single IPv4 family; ExternalName Services get none.
 */
export function allocateClusterIp(service: KubeObject, taken: ReadonlySet<string>): void {
  const spec = ensureObject(service, 'spec');
  if (spec.type === 'ExternalName') return;
  if (typeof spec.clusterIP !== 'string' || spec.clusterIP === '') {
    let host = 10;
    while (taken.has(`${SERVICE_NET}${host}`)) host++;
    spec.clusterIP = `${SERVICE_NET}${host}`;
  }
  setDefault(spec, 'clusterIPs', [spec.clusterIP]);
  setDefault(spec, 'ipFamilies', ['IPv4']);
  setDefault(spec, 'ipFamilyPolicy', 'SingleStack');
}

/** `patchAllocatedValues`: an update that leaves out what was allocated keeps it. */
export function keepAllocated(next: KubeObject, previous: KubeObject): void {
  const spec = isObject(next.spec) ? next.spec : undefined;
  const old = isObject(previous.spec) ? previous.spec : undefined;
  if (!spec || !old || spec.type !== old.type) return;
  for (const field of ['clusterIP', 'clusterIPs', 'ipFamilies', 'ipFamilyPolicy']) setDefault(spec, field, old[field]);
}
