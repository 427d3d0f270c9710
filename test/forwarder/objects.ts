/** Plain cluster objects as an informer would cache them, for the item builder and filter tests. */
import type {
  V1CSINode,
  V1Node,
  V1VolumeAttributesClass,
  V1PersistentVolume,
  V1PersistentVolumeClaim,
  V1StorageClass,
  V1VolumeAttachment,
} from '@kubernetes/client-node';
import { clusterZones, type ClusterView, type GroupSnapshotClassObject, type SnapshotClassObject, type SnapshotContentObject, type VolumeSnapshotObject } from '../../lib/forwarder/items.js';

export const DRIVER = 'ebs.csi.aws.com';

export function claim(name: string, options: { uid?: string; className?: string; selectedNode?: string; provisioner?: string | null; volumeName?: string; namespace?: string } = {}): V1PersistentVolumeClaim {
  const annotations: Record<string, string> = {};
  if (options.provisioner !== null) annotations['volume.kubernetes.io/storage-provisioner'] = options.provisioner ?? DRIVER;
  if (options.selectedNode) annotations['volume.kubernetes.io/selected-node'] = options.selectedNode;
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name, namespace: options.namespace ?? 'default', uid: options.uid ?? `uid-${name}`, resourceVersion: '1', annotations },
    spec: {
      accessModes: ['ReadWriteOnce'],
      resources: { requests: { storage: '20Gi' } },
      storageClassName: options.className ?? 'gp3',
      ...(options.volumeName ? { volumeName: options.volumeName } : {}),
    },
    status: { phase: 'Pending' },
  };
}

export function storageClass(name: string, binding: 'Immediate' | 'WaitForFirstConsumer', provisioner = DRIVER): V1StorageClass {
  return { metadata: { name }, provisioner, parameters: { type: 'gp3' }, reclaimPolicy: 'Delete', volumeBindingMode: binding };
}

export function node(name: string, zone: string, providerID = `aws:///${zone}/i-0123456789abcdef0`): V1Node {
  return { metadata: { name, labels: { 'topology.kubernetes.io/zone': zone, 'kubernetes.io/hostname': name } }, spec: { providerID } };
}

export function csiNode(name: string, nodeID = 'i-0123456789abcdef0', count = 25): V1CSINode {
  return {
    metadata: { name },
    spec: {
      drivers: [
        { name: 'other.csi.example.com', nodeID: 'x' },
        { name: DRIVER, nodeID, topologyKeys: ['topology.ebs.csi.aws.com/zone'], allocatable: { count } },
      ],
    },
  };
}

export function volume(name: string, options: { driver?: string; provisionedBy?: string; phase?: string } = {}): V1PersistentVolume {
  return {
    metadata: {
      name,
      uid: `uid-${name}`,
      resourceVersion: '1',
      annotations: options.provisionedBy ? { 'pv.kubernetes.io/provisioned-by': options.provisionedBy } : {},
      creationTimestamp: new Date('2024-05-01T10:00:00Z'),
    },
    spec: {
      capacity: { storage: '20Gi' },
      accessModes: ['ReadWriteOnce'],
      persistentVolumeReclaimPolicy: 'Delete',
      csi: { driver: options.driver ?? DRIVER, volumeHandle: 'vol-0123456789abcdef0' },
    },
    status: { phase: options.phase ?? 'Bound' },
  };
}

export function attachment(name: string, pvName: string, nodeName: string, attacher = DRIVER): V1VolumeAttachment {
  return {
    metadata: { name, uid: `uid-${name}`, resourceVersion: '1' },
    spec: { attacher, nodeName, source: { persistentVolumeName: pvName } },
    status: { attached: false },
  };
}

/** A ClusterView over plain arrays. */
export function viewOf(objects: {
  classes?: V1StorageClass[];
  nodes?: V1Node[];
  csiNodes?: V1CSINode[];
  volumes?: V1PersistentVolume[];
  attachments?: V1VolumeAttachment[];
  claims?: V1PersistentVolumeClaim[];
  snapshots?: VolumeSnapshotObject[];
  contents?: SnapshotContentObject[];
  snapshotClasses?: SnapshotClassObject[];
  volumeAttributesClasses?: V1VolumeAttributesClass[];
  groupSnapshotClasses?: GroupSnapshotClassObject[];
}): ClusterView {
  const byName = <T extends { metadata?: { name?: string } }>(list: T[] = []) => (name: string) => list.find((o) => o.metadata?.name === name);
  return {
    storageClass: byName(objects.classes),
    node: byName(objects.nodes),
    csiNode: byName(objects.csiNodes),
    pv: byName(objects.volumes),
    volumeAttributesClass: byName(objects.volumeAttributesClasses),
    attachmentsOf: (pvName) =>
      (objects.attachments ?? []).filter((va) => va.spec.source.persistentVolumeName === pvName).map((va) => va.metadata!.name!),
    zones: () => clusterZones(objects.nodes ?? []),
    claim: (namespace, name) => (objects.claims ?? []).find((o) => o.metadata?.name === name && o.metadata?.namespace === namespace),
    claims: (namespace) => (objects.claims ?? []).filter((o) => o.metadata?.namespace === namespace),
    volumeSnapshot: (namespace, name) => (objects.snapshots ?? []).find((o) => o.metadata?.name === name && o.metadata?.namespace === namespace),
    snapshotContent: byName(objects.contents),
    snapshotClass: byName(objects.snapshotClasses),
    groupSnapshotClass: byName(objects.groupSnapshotClasses),
    pvs: () => objects.volumes ?? [],
  };
}
