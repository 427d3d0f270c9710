/**
 * charts/volhook-forwarder/values.schema.json, generated: the forwarder's settings take their
 * types and bounds from the forwarder's own configuration schema (lib/forwarder/config.ts) —
 * the cluster id with the registry's rule — so helm refuses at install what the forwarder
 * would refuse at start. `npm run chart:schema` writes it; a test fails when it is stale.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as z from 'zod/mini';
import { ForwarderConfigSchema, type ForwarderConfig } from '../../lib/forwarder/config.js';

export const VALUES_SCHEMA_FILE = fileURLToPath(new URL('../../charts/volhook-forwarder/values.schema.json', import.meta.url));

type JsonSchema = Record<string, unknown>;

/** The chart's values that are forwarder settings, by the setting each one is. */
export const CONFIG_VALUES = {
  backendUrl: 'apiUrl',
  clusterId: 'clusterId',
  logLevel: 'logLevel',
  provisioner: 'provisioner',
  driver: 'driver',
  batchSize: 'batchSize',
  concurrency: 'concurrency',
  resyncSeconds: 'resyncSeconds',
  port: 'port',
  'leaderElection.enabled': 'leaderElect',
  'leaderElection.leaseDurationSeconds': 'leaseDurationSeconds',
  'leaderElection.renewDeadlineSeconds': 'renewDeadlineSeconds',
  'leaderElection.retryPeriodSeconds': 'retryPeriodSeconds',
  refusedReadySeconds: 'refusedReadySeconds',
} as const satisfies Record<string, keyof ForwarderConfig>;

function configProperties(): Record<string, JsonSchema> {
  const schema = z.toJSONSchema(ForwarderConfigSchema, { io: 'input', unrepresentable: 'any' }) as { properties: Record<string, JsonSchema> };
  return schema.properties;
}

/** A setting's schema without its default (the chart's values.yaml holds the defaults). */
function setting(name: keyof ForwarderConfig, description: string): JsonSchema {
  const { default: _default, ...rest } = configProperties()[name]!;
  const extra: JsonSchema =
    name === 'apiUrl'
      ? // The configuration's url check also wants http(s): JSON Schema's `format` is not asserted by helm.
        { pattern: '^https?://[^\\s/]+', minLength: 1 }
      : {};
  return { description, ...rest, ...extra };
}

const object = (properties: Record<string, JsonSchema>, required: string[] = []): JsonSchema => ({
  type: 'object',
  additionalProperties: false,
  properties,
  ...(required.length > 0 && { required }),
});
const text = (description: string, extra: JsonSchema = {}): JsonSchema => ({ type: 'string', description, ...extra });
const flag = (description: string): JsonSchema => ({ type: 'boolean', description });
const map = (description: string): JsonSchema => ({ type: 'object', description, additionalProperties: { type: 'string' } });
const list = (description: string): JsonSchema => ({ type: 'array', description, items: { type: 'object' } });
const quantity = { anyOf: [{ type: 'string', pattern: '^[0-9.]+[a-zA-Z]*$' }, { type: 'number', minimum: 0 }] };
const resourceList = object({ cpu: quantity, memory: quantity, 'ephemeral-storage': quantity });

export function valuesSchema(): JsonSchema {
  return {
    $schema: 'https://json-schema.org/draft-07/schema#',
    title: 'volhook-forwarder values',
    ...object(
      {
        backendUrl: setting('apiUrl', "the backend's URL: the HttpApiUrl output of `npx osls deploy`"),
        clusterId: setting('clusterId', 'the cluster id as registered (`npm run cluster -- add <id>`)'),
        secret: object({
          existingSecret: text('a Secret in the release namespace holding the signing secret; empty: the chart creates one from secret.value'),
          key: text('the key of the signing secret in that Secret', { minLength: 1, pattern: '^[-._a-zA-Z0-9]+$' }),
          value: text('the signing secret, for the Secret the chart creates (only with existingSecret empty)'),
        }),
        image: object({
          repository: text('the image, without tag', { minLength: 1 }),
          tag: text("the tag; empty: the chart's appVersion"),
          digest: text('sha256:<64 hex>; pulls repository@digest and ignores the tag', { pattern: '^(sha256:[a-f0-9]{64})?$' }),
          pullPolicy: { type: 'string', enum: ['Always', 'IfNotPresent', 'Never'] },
        }),
        imagePullSecrets: { type: 'array', items: object({ name: text('a Secret of type kubernetes.io/dockerconfigjson', { minLength: 1 }) }, ['name']) },
        replicaCount: { type: 'integer', minimum: 0, description: 'forwarders; one holds the Lease and sends, the others stand by' },
        leaderElection: object({
          enabled: setting('leaderElect', 'leader election on a Lease named after the release (needed with more than one replica)'),
          leaseDurationSeconds: setting('leaseDurationSeconds', 'how long a Lease not renewed stays held'),
          renewDeadlineSeconds: setting('renewDeadlineSeconds', 'how long the holder tries to renew before it stops sending'),
          retryPeriodSeconds: setting('retryPeriodSeconds', 'how often the Lease is tried'),
        }),
        logLevel: setting('logLevel', "the forwarder's log level"),
        provisioner: setting('provisioner', 'the provisioner of the StorageClasses volhook serves'),
        driver: setting('driver', 'the CSI driver of the PVs volhook writes (and of the CSIDriver the chart creates)'),
        batchSize: setting('batchSize', 'objects per request'),
        concurrency: setting('concurrency', 'requests in flight at once'),
        resyncSeconds: setting('resyncSeconds', 'the period of the re-offer of unsettled objects'),
        refusedReadySeconds: setting('refusedReadySeconds', '/readyz fails once every request to the backend was refused this long'),
        port: { ...setting('port', 'the health and metrics port'), minimum: 1 },
        resources: object({ requests: resourceList, limits: resourceList }),
        nodeOptions: text("NODE_OPTIONS of the forwarder (the heap bound under the memory limit)"),
        priorityClassName: text('the pods\' PriorityClass; empty: none'),
        nodeSelector: map('node labels the pods must match'),
        tolerations: list('the pods\' tolerations'),
        affinity: { type: 'object', description: 'the pods\' affinity; empty: replicas preferably on different nodes' },
        podAnnotations: map('more annotations of the pods'),
        podLabels: map('more labels of the pods'),
        podDisruptionBudget: object({
          enabled: flag('a PodDisruptionBudget keeping minAvailable forwarders through node drains'),
          minAvailable: { type: 'integer', minimum: 1 },
        }),
        proxy: object({
          httpsProxy: text('HTTPS_PROXY of the forwarder, for its requests to the backend'),
          httpProxy: text('HTTP_PROXY of the forwarder, for its requests to a plain-http backend'),
          noProxy: text('NO_PROXY of the forwarder: hosts reached without the proxy'),
        }),
        tls: object({
          clientCertSecret: text('a kubernetes.io/tls Secret (tls.crt, tls.key): the client certificate shown to a backend behind mutual TLS; empty: none', { pattern: '^([a-z0-9]([-a-z0-9.]*[a-z0-9])?)?$' }),
          caConfigMap: text('a ConfigMap holding a PEM bundle trusted besides the public roots; empty: the public roots only', { pattern: '^([a-z0-9]([-a-z0-9.]*[a-z0-9])?)?$' }),
          caKey: text('the key of the bundle in that ConfigMap', { minLength: 1, pattern: '^[-._a-zA-Z0-9]+$' }),
        }),
        extraEnv: { type: 'array', description: 'more environment variables of the container', items: { type: 'object', required: ['name'], properties: { name: { type: 'string', minLength: 1 } } } },
        metrics: object({
          service: object({ enabled: flag('a ClusterIP Service in front of /metrics'), port: { type: 'integer', minimum: 1, maximum: 65535 } }),
          serviceMonitor: object({
            enabled: flag("a prometheus-operator ServiceMonitor (needs the operator's CRD; implies the Service)"),
            interval: text('the scrape interval', { pattern: '^[0-9]+(ms|s|m|h)$' }),
            labels: map("labels of the ServiceMonitor (the operator's serviceMonitorSelector)"),
          }),
        }),
        csiDriver: object({
          create: flag('create the CSIDriver; false when the aws-ebs-csi-driver chart (node part) creates it'),
          nodeAllocatableUpdatePeriodSeconds: {
            type: 'integer',
            description: "seconds between the kubelet's refreshes of the node's attach limit (Kubernetes 1.33+); 0 leaves it unset",
            anyOf: [{ const: 0 }, { minimum: 10 }],
          },
          seLinuxMount: flag('the node plugin mounts with SELinux contexts (the driver chart\'s node.selinux)'),
        }),
      },
      ['backendUrl', 'clusterId'],
    ),
  };
}

export function valuesSchemaText(): string {
  return `${JSON.stringify(valuesSchema(), null, 2)}\n`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(VALUES_SCHEMA_FILE, valuesSchemaText());
  console.log(`wrote ${VALUES_SCHEMA_FILE}`);
}
