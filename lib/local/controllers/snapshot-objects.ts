/**
 * The snapshot API (`snapshot.storage.k8s.io/v1`, external-snapshotter v8) as the local
 * snapshot controller reads it, and the names its common controller uses
 * (`pkg/utils/util.go`): finalizers, annotations, the dynamic content's name.
 */
import type { KubeObject } from '../kube/types.js';
import type { ObjectReference } from './objects.js';

export const SNAPSHOT_API_GROUP = 'snapshot.storage.k8s.io';
export const SNAPSHOT_API_VERSION = `${SNAPSHOT_API_GROUP}/v1`;

/** On a content while it is bound; the csi-snapshotter sidecar removes it once the snapshot is deleted (or retained). */
export const CONTENT_BOUND_FINALIZER = 'snapshot.storage.kubernetes.io/volumesnapshotcontent-bound-protection';
/** On a snapshot bound to a content whose policy is Delete, until that content is gone. */
export const SNAPSHOT_BOUND_FINALIZER = 'snapshot.storage.kubernetes.io/volumesnapshot-bound-protection';
/** On every snapshot, until no pending claim restores from it. */
export const SNAPSHOT_AS_SOURCE_FINALIZER = 'snapshot.storage.kubernetes.io/volumesnapshot-as-source-protection';
/** On the source claim, while a snapshot of it is not ready yet. */
export const PVC_AS_SOURCE_FINALIZER = 'snapshot.storage.kubernetes.io/pvc-as-source-protection';
/** Set on the content once its snapshot is being deleted: the sidecar's signal to act on the deletion policy. */
export const ANN_SNAPSHOT_BEING_DELETED = 'snapshot.storage.kubernetes.io/volumesnapshot-being-deleted';
export const ANN_DEFAULT_SNAPSHOT_CLASS = 'snapshot.storage.kubernetes.io/is-default-class';

export interface SnapshotError {
  time?: string;
  message?: string;
}

export interface VolumeSnapshot extends KubeObject {
  spec: {
    source: { persistentVolumeClaimName?: string; volumeSnapshotContentName?: string };
    volumeSnapshotClassName?: string;
  };
  status?: {
    boundVolumeSnapshotContentName?: string;
    creationTime?: string;
    readyToUse?: boolean;
    /** A quantity, e.g. `4Gi`. */
    restoreSize?: string;
    error?: SnapshotError;
    [field: string]: unknown;
  };
}

export interface VolumeSnapshotContent extends KubeObject {
  spec: {
    deletionPolicy: 'Delete' | 'Retain';
    driver: string;
    source: { volumeHandle?: string; snapshotHandle?: string };
    sourceVolumeMode?: string;
    volumeSnapshotClassName?: string;
    volumeSnapshotRef: ObjectReference;
  };
  status?: {
    snapshotHandle?: string;
    /** Nanoseconds since the epoch. */
    creationTime?: number;
    readyToUse?: boolean;
    /** Bytes. */
    restoreSize?: number;
    error?: SnapshotError;
    [field: string]: unknown;
  };
}

export interface VolumeSnapshotClass extends KubeObject {
  driver: string;
  deletionPolicy: 'Delete' | 'Retain';
  parameters?: Record<string, string>;
}

/** `snapcontent-<snapshot uid>`: the content the common controller creates for a dynamic snapshot. */
export function dynamicContentName(snapshot: VolumeSnapshot): string {
  return `snapcontent-${snapshot.metadata.uid}`;
}

export function isDynamic(snapshot: VolumeSnapshot): boolean {
  return snapshot.spec.source.persistentVolumeClaimName !== undefined;
}

export function isReady(snapshot: VolumeSnapshot): boolean {
  return snapshot.status?.readyToUse === true;
}

export function boundContentName(snapshot: VolumeSnapshot): string | undefined {
  return snapshot.status?.boundVolumeSnapshotContentName || undefined;
}

/** The content's ref names this snapshot, uid included (`IsVolumeSnapshotRefSet`). */
export function refersTo(content: VolumeSnapshotContent, snapshot: VolumeSnapshot): boolean {
  const ref = content.spec.volumeSnapshotRef;
  return ref.name === snapshot.metadata.name && ref.namespace === snapshot.metadata.namespace && ref.uid === snapshot.metadata.uid;
}

/** `namespace/name` of the snapshot a content refers to. */
export function refKey(content: VolumeSnapshotContent): string | undefined {
  const { name, namespace } = content.spec.volumeSnapshotRef;
  return name && namespace ? `${namespace}/${name}` : undefined;
}

const BINARY_SUFFIXES = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'];

/**
 * Bytes as `resource.NewQuantity(n, BinarySI).String()` writes them: the largest binary
 * suffix that divides exactly, else the plain number.
 * @example binaryQuantity(4294967296) === '4Gi'; binaryQuantity(1536) === '1536'
 */
export function binaryQuantity(bytes: number): string {
  let value = bytes;
  let suffix = 0;
  while (value !== 0 && value % 1024 === 0 && suffix < BINARY_SUFFIXES.length - 1) {
    value /= 1024;
    suffix++;
  }
  return `${value}${BINARY_SUFFIXES[suffix]}`;
}

/** A content's `creationTime` (nanoseconds) as the snapshot's RFC 3339 `creationTime`. */
export function nanosToTime(nanos: number): string {
  return new Date(Math.floor(nanos / 1e6)).toISOString().replace(/\.\d+Z$/, 'Z');
}
