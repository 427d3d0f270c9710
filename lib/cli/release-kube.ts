/**
 * The Kubernetes calls of `cluster release`, with the operator's kubeconfig: the reads that
 * make a ClusterView and the ForwarderEvidence (each object through its schema), and the
 * writes, applied one at a time through `applyWrites` — the one implementation of the
 * contract's writes, uid-guarded JSON patches — so that each mark's outcome is its own.
 */
import { AppsV1Api, CoordinationV1Api, CoreV1Api, CustomObjectsApi, StorageV1Api, type KubeConfig } from '@kubernetes/client-node';
import type * as z from 'zod';
import { SNAPSHOT_API_GROUP, SNAPSHOT_API_VERSION, type Write } from '../contract/index.js';
import { applyWrites, describeError, isApiError, kubeClientsFromConfig } from '../kube/index.js';
import { FORWARDER_LABEL, FORWARDER_NAME, FORWARDER_NAMESPACE } from './release-forwarder.js';
import {
  DeploymentSchema,
  helmReleaseOf,
  LeaseSchema,
  ListedConfigMapSchema,
  ListedDeploymentSchema,
  PodSchema,
  ReleaseAttachmentSchema,
  ReleaseClaimSchema,
  ReleaseCsiNodeSchema,
  ReleasePvSchema,
  ReleaseSnapshotContentSchema,
  type ClusterView,
  type ForwarderEvidence,
  type ForwarderPlace,
} from './release-view.js';

const PAGE = 500;

interface Page {
  items: unknown[];
  metadata?: { _continue?: string; continue?: string };
}

/** Every object of a list, page by page, each read with `schema`. */
async function listAll<S extends z.ZodType>(schema: S, page: (next: string | undefined) => Promise<Page>): Promise<Array<z.infer<S>>> {
  const out: Array<z.infer<S>> = [];
  let next: string | undefined;
  do {
    const answer = await page(next);
    for (const item of answer.items) out.push(schema.parse(item));
    next = answer.metadata?._continue || answer.metadata?.continue || undefined;
  } while (next);
  return out;
}

const continued = (next: string | undefined) => ({ limit: PAGE, ...(next && { _continue: next }) });

/** The cluster's claims, PVs, VolumeAttachments, CSINodes and (if served) VolumeSnapshotContents. */
export async function readClusterView(kc: KubeConfig): Promise<ClusterView> {
  const core = kc.makeApiClient(CoreV1Api);
  const storage = kc.makeApiClient(StorageV1Api);
  const custom = kc.makeApiClient(CustomObjectsApi);
  const [claims, volumes, attachments, csiNodes, snapshotContents] = await Promise.all([
    listAll(ReleaseClaimSchema, (next) => core.listPersistentVolumeClaimForAllNamespaces(continued(next))),
    listAll(ReleasePvSchema, (next) => core.listPersistentVolume(continued(next))),
    listAll(ReleaseAttachmentSchema, (next) => storage.listVolumeAttachment(continued(next))),
    listAll(ReleaseCsiNodeSchema, (next) => storage.listCSINode(continued(next))),
    listAll(ReleaseSnapshotContentSchema, (next) =>
      custom.listClusterCustomObject({ group: SNAPSHOT_API_GROUP, version: SNAPSHOT_API_VERSION, plural: 'volumesnapshotcontents', ...continued(next) }) as Promise<Page>,
    ).catch((err: unknown) => {
      // No snapshot CRDs: nothing of that kind to look at.
      if (isApiError(err, 404)) return undefined;
      throw err;
    }),
  ]);
  return { claims, volumes, attachments, csiNodes, ...(snapshotContents && { snapshotContents }) };
}

/** The label the chart and the manifests give every object of the forwarder: its release's name. */
const INSTANCE_LABEL = 'app.kubernetes.io/instance';

/**
 * Every forwarder of the cluster, wherever it is, each with its Lease (and the API server's Date
 * of that read), Deployment, pods and ConfigMap. Found by what identifies one: the chart's label
 * on Deployments, pods and ConfigMaps in every namespace (the chart names them after the Helm
 * release, in its namespace), a ConfigMap in any namespace naming a cluster id, and the
 * manifests' and default release's place `volhook-system/volhook-forwarder`.
 */
export async function readForwarderEvidence(kc: KubeConfig): Promise<ForwarderEvidence[]> {
  const core = kc.makeApiClient(CoreV1Api);
  const apps = kc.makeApiClient(AppsV1Api);
  const served = await appsServed(apps);
  const [deployments, pods, configMaps] = await Promise.all([
    served ? listAll(ListedDeploymentSchema, (next) => apps.listDeploymentForAllNamespaces({ labelSelector: FORWARDER_LABEL, ...continued(next) })) : [],
    listAll(PodSchema, (next) => core.listPodForAllNamespaces({ labelSelector: FORWARDER_LABEL, ...continued(next) })),
    // Every ConfigMap: one naming a cluster id is a forwarder's, whatever its labels.
    listAll(ListedConfigMapSchema, (next) => core.listConfigMapForAllNamespaces(continued(next))),
  ]);
  const places = new Map<string, ForwarderPlace>();
  const add = (namespace: string | null | undefined, name: string) => {
    const place = { namespace: namespace || 'default', name };
    places.set(placeKey(place), place);
  };
  add(FORWARDER_NAMESPACE, FORWARDER_NAME);
  for (const d of deployments) add(d.metadata.namespace, d.metadata.name);
  const forwarderConfigMaps = configMaps.filter((cm) => cm.metadata.labels?.['app.kubernetes.io/name'] === FORWARDER_NAME || cm.data?.VOLHOOK_CLUSTER_ID !== undefined);
  for (const cm of forwarderConfigMaps) add(cm.metadata.namespace, cm.metadata.name);
  const podPlace = (pod: (typeof pods)[number]): ForwarderPlace => ({ namespace: pod.metadata.namespace || 'default', name: pod.metadata.labels?.[INSTANCE_LABEL] || FORWARDER_NAME });
  for (const pod of pods) add(podPlace(pod).namespace, podPlace(pod).name);

  return Promise.all(
    [...places.values()].map(async (where): Promise<ForwarderEvidence> => {
      const cm = forwarderConfigMaps.find((c) => (c.metadata.namespace || 'default') === where.namespace && c.metadata.name === where.name);
      const leaseName = cm?.data?.VOLHOOK_LEASE_NAME || where.name;
      const [lease, deployment] = await Promise.all([readLease(kc, { namespace: where.namespace, name: leaseName }), served ? readDeployment(apps, where) : ({ kind: 'not-served' } as const)]);
      const running = pods
        .filter((pod) => placeKey(podPlace(pod)) === placeKey(where))
        .filter((pod) => pod.status?.phase !== 'Succeeded' && pod.status?.phase !== 'Failed')
        .map((pod) => ({ name: pod.metadata.name, phase: `${pod.status?.phase ?? 'Pending'}${pod.metadata.deletionTimestamp ? ' (terminating)' : ''}` }));
      const clusterId = cm?.data?.VOLHOOK_CLUSTER_ID;
      const cmHelm = cm && helmReleaseOf(cm.metadata.annotations, where.namespace);
      return {
        where,
        ...(leaseName !== where.name && { leaseName }),
        ...lease,
        deployment,
        pods: running,
        ...(cm && { configMap: { ...(clusterId !== undefined && { clusterId }), ...(cmHelm && { helm: cmHelm }) } }),
      };
    }),
  );
}

const placeKey = (place: ForwarderPlace) => `${place.namespace}/${place.name}`;

async function readLease(kc: KubeConfig, where: ForwarderPlace): Promise<Pick<ForwarderEvidence, 'lease' | 'serverDate'>> {
  const api = kc.makeApiClient(CoordinationV1Api);
  let answer;
  try {
    answer = await api.readNamespacedLeaseWithHttpInfo(where);
  } catch (err) {
    if (isApiError(err, 404)) return {};
    throw err;
  }
  const date = Object.entries(answer.headers).find(([name]) => name.toLowerCase() === 'date')?.[1];
  const { metadata, spec } = LeaseSchema.parse(answer.data);
  const times = [spec.renewTime, spec.acquireTime, ...(metadata.managedFields ?? []).map((f) => f.time)].filter((t): t is string => typeof t === 'string');
  return {
    ...(date !== undefined && { serverDate: date }),
    lease: { holderIdentity: spec.holderIdentity ?? '', leaseDurationSeconds: spec.leaseDurationSeconds ?? 0, times },
  };
}

async function appsServed(apps: AppsV1Api): Promise<boolean> {
  try {
    const resources = await apps.getAPIResources();
    return resources.resources.some((r) => r.name === 'deployments');
  } catch (err) {
    if (isApiError(err, 404)) return false;
    throw err;
  }
}

async function readDeployment(apps: AppsV1Api, where: ForwarderPlace): Promise<ForwarderEvidence['deployment']> {
  const found = await orAbsent(apps.readNamespacedDeployment(where));
  if (found === undefined) return { kind: 'absent' };
  const deployment = DeploymentSchema.parse(found);
  const helm = helmReleaseOf(deployment.metadata.annotations, where.namespace);
  return {
    kind: 'present',
    // Unset means 1, as the API server defaults it.
    replicas: Math.max(deployment.spec.replicas ?? 1, deployment.status?.replicas ?? 0),
    readyReplicas: deployment.status?.readyReplicas ?? 0,
    ...(helm && { helm }),
  };
}

async function orAbsent<T>(read: Promise<T>): Promise<T | undefined> {
  try {
    return await read;
  } catch (err) {
    if (isApiError(err, 404)) return undefined;
    throw err;
  }
}

/** Applies each write on its own; resolves to the error message of each that failed, by index. */
export async function applyEach(kc: KubeConfig, writes: readonly Write[]): Promise<Map<number, string>> {
  const clients = kubeClientsFromConfig(kc);
  const failures = new Map<number, string>();
  for (const [index, write] of writes.entries()) {
    try {
      await applyWrites(clients, [write]);
    } catch (err) {
      failures.set(index, describeError((err as { cause?: unknown }).cause ?? err));
    }
  }
  return failures;
}
