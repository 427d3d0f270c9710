/**
 * The few fields of each kind the controllers read, typed over the store's plain JSON.
 * Every field is optional because the store holds whatever a client sent; the controllers
 * must cope with missing ones the way Kubernetes' defaults would.
 */
import type { KubeObject } from '../kube/types.js';
import type { LabelSelector, NodeSelectorTerm, TopologySelectorTerm } from './selectors.js';

/** Annotations the PV controller, the scheduler and provisioners talk through. */
export const ANN = {
  bindCompleted: 'pv.kubernetes.io/bind-completed',
  boundByController: 'pv.kubernetes.io/bound-by-controller',
  provisionedBy: 'pv.kubernetes.io/provisioned-by',
  migratedTo: 'pv.kubernetes.io/migrated-to',
  storageProvisioner: 'volume.kubernetes.io/storage-provisioner',
  betaStorageProvisioner: 'volume.beta.kubernetes.io/storage-provisioner',
  selectedNode: 'volume.kubernetes.io/selected-node',
  betaStorageClass: 'volume.beta.kubernetes.io/storage-class',
  isDefaultClass: 'storageclass.kubernetes.io/is-default-class',
  betaIsDefaultClass: 'storageclass.beta.kubernetes.io/is-default-class',
} as const;

export const PVC_PROTECTION = 'kubernetes.io/pvc-protection';
export const PV_PROTECTION = 'kubernetes.io/pv-protection';

export interface ObjectReference {
  kind?: string;
  apiVersion?: string;
  namespace?: string;
  name?: string;
  uid?: string;
  resourceVersion?: string;
}

export interface PersistentVolumeClaim extends KubeObject {
  spec: {
    accessModes?: string[];
    resources?: { requests?: Record<string, string | number> };
    selector?: LabelSelector | null;
    storageClassName?: string | null;
    volumeMode?: string;
    volumeName?: string;
    [field: string]: unknown;
  };
  status?: {
    phase?: string;
    accessModes?: string[];
    capacity?: Record<string, string | number>;
    [field: string]: unknown;
  };
}

export interface PersistentVolume extends KubeObject {
  spec: {
    accessModes?: string[];
    capacity?: Record<string, string | number>;
    claimRef?: ObjectReference | null;
    csi?: { driver?: string; volumeHandle?: string; [field: string]: unknown } | null;
    awsElasticBlockStore?: { volumeID?: string; [field: string]: unknown } | null;
    nodeAffinity?: { required?: { nodeSelectorTerms?: NodeSelectorTerm[] } | null } | null;
    persistentVolumeReclaimPolicy?: string;
    storageClassName?: string | null;
    volumeMode?: string;
    [field: string]: unknown;
  };
  status?: { phase?: string; message?: string; reason?: string; [field: string]: unknown };
}

export interface StorageClass extends KubeObject {
  provisioner?: string;
  volumeBindingMode?: string;
  allowedTopologies?: TopologySelectorTerm[];
  reclaimPolicy?: string;
}

/** A pod's inline in-tree EBS volume (`awsElasticBlockStore`). */
export interface AwsElasticBlockStoreVolume {
  volumeID?: string;
  fsType?: string;
  readOnly?: boolean;
  partition?: number;
}

/** `spec.source.inlineVolumeSpec` of a VolumeAttachment: a PV spec without a PV. */
export interface InlineVolumeSpec {
  csi?: { driver: string; volumeHandle: string; readOnly?: boolean; fsType?: string; volumeAttributes?: Record<string, string> };
  accessModes?: string[];
  [field: string]: unknown;
}

export interface PodVolume {
  name?: string;
  persistentVolumeClaim?: { claimName?: string; readOnly?: boolean } | null;
  awsElasticBlockStore?: AwsElasticBlockStoreVolume | null;
  [field: string]: unknown;
}

export interface Pod extends KubeObject {
  spec?: {
    nodeName?: string;
    schedulerName?: string;
    nodeSelector?: Record<string, string>;
    affinity?: {
      nodeAffinity?: {
        requiredDuringSchedulingIgnoredDuringExecution?: { nodeSelectorTerms?: NodeSelectorTerm[] } | null;
      } | null;
    } | null;
    volumes?: PodVolume[];
    containers?: Array<{ name?: string; image?: string; [field: string]: unknown }>;
    [field: string]: unknown;
  };
  status?: { phase?: string; conditions?: Array<{ type?: string; status?: string }>; [field: string]: unknown };
}

export interface Node extends KubeObject {
  spec?: { unschedulable?: boolean; [field: string]: unknown };
  status?: { conditions?: Array<{ type?: string; status?: string }>; [field: string]: unknown };
}

/** The node's CSI drivers; `allocatable.count` is how many of the driver's volumes it can attach. */
export interface CSINode extends KubeObject {
  spec?: { drivers?: Array<{ name: string; nodeID?: string; allocatable?: { count?: number } }> };
}

export interface VolumeAttachment extends KubeObject {
  spec: {
    attacher?: string;
    nodeName?: string;
    source?: { persistentVolumeName?: string; inlineVolumeSpec?: InlineVolumeSpec; [field: string]: unknown };
  };
  status?: { attached?: boolean; [field: string]: unknown };
}

/** What node-affinity and topology checks need of a node. */
export interface NodeInfo {
  name: string;
  labels: Record<string, string>;
}

export function nodeInfo(node: KubeObject): NodeInfo {
  return { name: node.metadata.name, labels: node.metadata.labels ?? {} };
}

export function annotation(object: KubeObject, key: string): string | undefined {
  return object.metadata.annotations?.[key];
}

/** Sets (or with `undefined`, removes) an annotation on an object the caller owns. */
export function setAnnotation(object: KubeObject, key: string, value: string | undefined): void {
  if (object.metadata.annotations?.[key] === value) return;
  const annotations = { ...object.metadata.annotations };
  if (value === undefined) delete annotations[key];
  else annotations[key] = value;
  if (Object.keys(annotations).length > 0) object.metadata.annotations = annotations;
  else delete object.metadata.annotations;
}

export function hasFinalizer(object: KubeObject, finalizer: string): boolean {
  return object.metadata.finalizers?.includes(finalizer) ?? false;
}

/** Adds or removes a finalizer on an object the caller owns, keeping the others in order. */
export function setFinalizer(object: KubeObject, finalizer: string, present: boolean): void {
  if (hasFinalizer(object, finalizer) === present) return;
  const others = (object.metadata.finalizers ?? []).filter((f) => f !== finalizer);
  object.metadata.finalizers = present ? [...others, finalizer] : others;
}

export function isDeleting(object: KubeObject): boolean {
  return Boolean(object.metadata.deletionTimestamp);
}

/** The claim's class: the old beta annotation wins over `spec.storageClassName`, as in Kubernetes. */
export function claimClass(claim: PersistentVolumeClaim): string {
  return annotation(claim, ANN.betaStorageClass) ?? claim.spec.storageClassName ?? '';
}

export function volumeClass(volume: PersistentVolume): string {
  return annotation(volume, ANN.betaStorageClass) ?? volume.spec.storageClassName ?? '';
}

/** Unset volumeMode means Filesystem, on claims and volumes alike. */
export function volumeModeOf(spec: { volumeMode?: string }): string {
  return spec.volumeMode || 'Filesystem';
}

/** Names of the claims a pod mounts, each once. */
export function podClaimNames(pod: Pod): string[] {
  const names = (pod.spec?.volumes ?? []).map((v) => v.persistentVolumeClaim?.claimName);
  return [...new Set(names.filter((n): n is string => Boolean(n)))];
}

/** Succeeded and Failed pods hold no volumes any more. */
export function isTerminated(pod: Pod): boolean {
  const phase = pod.status?.phase;
  return phase === 'Succeeded' || phase === 'Failed';
}

export function objectKey(object: KubeObject): string {
  const { namespace, name } = object.metadata;
  return namespace ? `${namespace}/${name}` : name;
}

/** Splits `namespace/name` (or a bare cluster-scoped `name`). */
export function splitKey(key: string): { namespace: string | undefined; name: string } {
  const slash = key.indexOf('/');
  return slash < 0 ? { namespace: undefined, name: key } : { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}

/** RFC 3339 at whole seconds, as the API server writes timestamps. */
export function kubeTime(date: Date = new Date()): string {
  return date.toISOString().replace(/\.\d+Z$/, 'Z');
}
