/**
 * Driving the local Kubernetes API over HTTP with `@kubernetes/client-node`, as a user or a
 * workload would: namespaces, claims, pods, classes, and reads of what the system made.
 */
import {
  CoreV1Api,
  StorageV1Api,
  type CoreV1Event,
  type V1PersistentVolume,
  type V1PersistentVolumeClaim,
  type V1Pod,
  type V1StorageClass,
  type V1VolumeAttachment,
} from '@kubernetes/client-node';
import type { KubeConfig } from '@kubernetes/client-node';
import { setTimeout as sleep } from 'node:timers/promises';
import { kubeConfigFor } from '../../../lib/kube/index.js';

export const DRIVER = 'ebs.csi.aws.com';
export const ZONE_KEY = 'topology.kubernetes.io/zone';

export interface E2eKube {
  core: CoreV1Api;
  storage: StorageV1Api;
  /**
   * A namespace's pods are admitted only once its `default` ServiceAccount exists (the real
   * plane: the ServiceAccount admission plugin, the serviceaccount controller makes it). The
   * simulated API admits them at once.
   */
  podsWaitForServiceAccount?: boolean;
}

export function kubeClients(server: string): E2eKube {
  return kubeClientsOf(kubeConfigFor({ server }));
}

export function kubeClientsOf(kc: KubeConfig, options: { podsWaitForServiceAccount?: boolean } = {}): E2eKube {
  return { core: kc.makeApiClient(CoreV1Api), storage: kc.makeApiClient(StorageV1Api), ...options };
}

/** Status code of a client-node `ApiException` (or undefined). */
export function statusCode(err: unknown): number | undefined {
  const code = (err as { code?: unknown })?.code;
  return typeof code === 'number' ? code : undefined;
}

/** Undefined on 404, the object otherwise. */
export async function orMissing<T>(read: Promise<T>): Promise<T | undefined> {
  try {
    return await read;
  } catch (err) {
    if (statusCode(err) === 404) return undefined;
    throw err;
  }
}

/** Creates the namespace; returns once pods can be created in it. */
export async function createNamespace(kube: E2eKube, name: string, timeoutMs = 30_000): Promise<void> {
  await kube.core.createNamespace({ body: { metadata: { name } } });
  if (!kube.podsWaitForServiceAccount) return;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const account = await orMissing(kube.core.readNamespacedServiceAccount({ namespace: name, name: 'default' }));
    if (account) return;
    if (Date.now() > deadline) throw new Error(`namespace ${name}: no default ServiceAccount after ${timeoutMs / 1000} s (the serviceaccount controller's)`);
    await sleep(100);
  }
}

export interface ClaimSpec {
  storageClassName?: string;
  size?: string;
  volumeMode?: 'Filesystem' | 'Block';
  accessModes?: string[];
  volumeName?: string;
}

export function claim(namespace: string, name: string, spec: ClaimSpec = {}): V1PersistentVolumeClaim {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name, namespace },
    spec: {
      accessModes: spec.accessModes ?? ['ReadWriteOnce'],
      ...(spec.storageClassName !== undefined ? { storageClassName: spec.storageClassName } : {}),
      ...(spec.volumeMode ? { volumeMode: spec.volumeMode } : {}),
      ...(spec.volumeName ? { volumeName: spec.volumeName } : {}),
      resources: { requests: { storage: spec.size ?? '4Gi' } },
    },
  };
}

export async function createClaim(kube: E2eKube, namespace: string, name: string, spec: ClaimSpec = {}): Promise<V1PersistentVolumeClaim> {
  return kube.core.createNamespacedPersistentVolumeClaim({ namespace, body: claim(namespace, name, spec) });
}

/** A pod mounting (or, for Block claims, attaching as a device) each claim. */
export function pod(namespace: string, name: string, claims: string[], options: { block?: boolean } = {}): V1Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace },
    spec: {
      // A short grace: the real plane's node agent finishes a deletion once it has ended, as kubelet would.
      terminationGracePeriodSeconds: 1,
      containers: [
        {
          name: 'app',
          image: 'busybox:1.36',
          command: ['sh', '-c', 'sleep 3600'],
          ...(options.block
            ? { volumeDevices: claims.map((c, i) => ({ name: `v${i}`, devicePath: `/dev/xvd-${c}` })) }
            : { volumeMounts: claims.map((c, i) => ({ name: `v${i}`, mountPath: `/data/${c}` })) }),
        },
      ],
      volumes: claims.map((c, i) => ({ name: `v${i}`, persistentVolumeClaim: { claimName: c } })),
    },
  };
}

export async function createPod(kube: E2eKube, namespace: string, name: string, claims: string[], options: { block?: boolean } = {}): Promise<V1Pod> {
  return kube.core.createNamespacedPod({ namespace, body: pod(namespace, name, claims, options) });
}

export async function createStorageClass(kube: E2eKube, body: V1StorageClass): Promise<V1StorageClass> {
  return kube.storage.createStorageClass({ body: { ...body, apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', provisioner: body.provisioner || DRIVER } });
}

export const readClaim = (kube: E2eKube, namespace: string, name: string) =>
  kube.core.readNamespacedPersistentVolumeClaim({ namespace, name });
export const readPod = (kube: E2eKube, namespace: string, name: string) => kube.core.readNamespacedPod({ namespace, name });
export const readVolume = (kube: E2eKube, name: string) => kube.core.readPersistentVolume({ name });

export async function listClaims(kube: E2eKube, namespace: string): Promise<V1PersistentVolumeClaim[]> {
  return (await kube.core.listNamespacedPersistentVolumeClaim({ namespace })).items;
}

export async function listVolumes(kube: E2eKube): Promise<V1PersistentVolume[]> {
  return (await kube.core.listPersistentVolume()).items;
}

export async function listAttachments(kube: E2eKube): Promise<V1VolumeAttachment[]> {
  return (await kube.storage.listVolumeAttachment()).items;
}

/** The VolumeAttachments whose source is the PV `pvName`. */
export async function attachmentsOf(kube: E2eKube, pvName: string): Promise<V1VolumeAttachment[]> {
  return (await listAttachments(kube)).filter((va) => va.spec.source.persistentVolumeName === pvName);
}

/** Events about one object, oldest first. */
export async function eventsFor(kube: E2eKube, namespace: string, kind: string, name: string): Promise<CoreV1Event[]> {
  const { items } = await kube.core.listNamespacedEvent({ namespace });
  return items.filter((e) => e.involvedObject.kind === kind && e.involvedObject.name === name);
}

/** A claim's phase and what it is bound to, for failure messages. */
export function claimState(pvc: V1PersistentVolumeClaim | undefined): unknown {
  if (!pvc) return 'missing';
  return { name: pvc.metadata?.name, phase: pvc.status?.phase, volumeName: pvc.spec?.volumeName, annotations: pvc.metadata?.annotations };
}

/** The zone a PV's nodeAffinity requires (first term, first `In` expression on a zone key). */
export function volumeZones(pv: V1PersistentVolume): string[] {
  const terms = pv.spec?.nodeAffinity?.required?.nodeSelectorTerms ?? [];
  return terms.flatMap((t) =>
    (t.matchExpressions ?? [])
      .filter((e) => e.operator === 'In' && (e.key === ZONE_KEY || e.key === 'topology.ebs.csi.aws.com/zone'))
      .flatMap((e) => e.values ?? []),
  );
}

/** A kubeconfig for the CLI's commands (adopt, release) against a local API server: an operator with a token. */
export function operatorKubeconfig(server: string): string {
  return `apiVersion: v1
kind: Config
clusters: [{ name: local, cluster: { server: "${server}", insecure-skip-tls-verify: true } }]
users: [{ name: operator, user: { token: local } }]
contexts: [{ name: local, context: { cluster: local, user: operator } }]
current-context: local
`;
}
