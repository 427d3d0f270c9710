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
  ConfigMapSchema,
  DeploymentSchema,
  helmReleaseOf,
  LeaseSchema,
  PodSchema,
  ReleaseAttachmentSchema,
  ReleaseClaimSchema,
  ReleaseCsiNodeSchema,
  ReleasePvSchema,
  ReleaseSnapshotContentSchema,
  type ClusterView,
  type ForwarderEvidence,
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

/** The Lease (with the API server's Date of that read), the Deployment, the pods and the ConfigMap of the forwarder. */
export async function readForwarderEvidence(kc: KubeConfig): Promise<ForwarderEvidence> {
  const where = { name: FORWARDER_NAME, namespace: FORWARDER_NAMESPACE };
  const core = kc.makeApiClient(CoreV1Api);
  const [lease, deployment, pods, configMap] = await Promise.all([
    readLease(kc),
    readDeployment(kc),
    orAbsent(core.listNamespacedPod({ namespace: FORWARDER_NAMESPACE, labelSelector: FORWARDER_LABEL })),
    orAbsent(core.readNamespacedConfigMap(where)),
  ]);
  const running = (pods?.items ?? [])
    .map((item) => PodSchema.parse(item))
    .filter((pod) => pod.status?.phase !== 'Succeeded' && pod.status?.phase !== 'Failed')
    .map((pod) => ({ name: pod.metadata.name, phase: `${pod.status?.phase ?? 'Pending'}${pod.metadata.deletionTimestamp ? ' (terminating)' : ''}` }));
  const cm = configMap === undefined ? undefined : ConfigMapSchema.parse(configMap);
  const clusterId = cm?.data?.VOLHOOK_CLUSTER_ID;
  const cmHelm = cm && helmReleaseOf(cm.metadata.annotations, FORWARDER_NAMESPACE);
  return {
    ...lease,
    deployment,
    pods: running,
    ...(cm && { configMap: { ...(clusterId !== undefined && { clusterId }), ...(cmHelm && { helm: cmHelm }) } }),
  };
}

async function readLease(kc: KubeConfig): Promise<Pick<ForwarderEvidence, 'lease' | 'serverDate'>> {
  const api = kc.makeApiClient(CoordinationV1Api);
  let answer;
  try {
    answer = await api.readNamespacedLeaseWithHttpInfo({ name: FORWARDER_NAME, namespace: FORWARDER_NAMESPACE });
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

async function readDeployment(kc: KubeConfig): Promise<ForwarderEvidence['deployment']> {
  const apps = kc.makeApiClient(AppsV1Api);
  try {
    const resources = await apps.getAPIResources();
    if (!resources.resources.some((r) => r.name === 'deployments')) return { kind: 'not-served' };
  } catch (err) {
    if (isApiError(err, 404)) return { kind: 'not-served' };
    throw err;
  }
  const found = await orAbsent(apps.readNamespacedDeployment({ name: FORWARDER_NAME, namespace: FORWARDER_NAMESPACE }));
  if (found === undefined) return { kind: 'absent' };
  const deployment = DeploymentSchema.parse(found);
  const helm = helmReleaseOf(deployment.metadata.annotations, FORWARDER_NAMESPACE);
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
