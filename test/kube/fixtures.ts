/** Plain Kubernetes objects and contract writes for the tests. */
import type { NewPersistentVolume, Write } from '../../lib/contract/index.js';

export function newPv(name: string, overrides: { claimUid?: string; finalizers?: string[] } = {}): NewPersistentVolume {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: {
      name,
      annotations: { 'pv.kubernetes.io/provisioned-by': 'ebs.csi.aws.com' },
      ...(overrides.finalizers ? { finalizers: overrides.finalizers } : {}),
    },
    spec: {
      capacity: { storage: '20Gi' },
      accessModes: ['ReadWriteOnce'],
      volumeMode: 'Filesystem',
      persistentVolumeReclaimPolicy: 'Delete',
      storageClassName: 'gp3',
      claimRef: { kind: 'PersistentVolumeClaim', apiVersion: 'v1', namespace: 'default', name: 'data', uid: overrides.claimUid ?? 'claim-uid' },
      csi: { driver: 'ebs.csi.aws.com', volumeHandle: 'vol-0123456789abcdef0', fsType: 'ext4' },
      nodeAffinity: {
        required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: ['eu-west-1a'] }] }] },
      },
    },
  };
}

export function pvcObject(name: string, namespace = 'default', annotations: Record<string, string> = {}) {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name, namespace, annotations },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '20Gi' } }, storageClassName: 'gp3' },
  };
}

export function vaObject(name: string, pvName: string, nodeName = 'ip-10-0-1-23.ec2.internal', attacher = 'ebs.csi.aws.com') {
  return {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'VolumeAttachment',
    metadata: { name },
    spec: { attacher, nodeName, source: { persistentVolumeName: pvName } },
  };
}

/** A dynamic VolumeSnapshotContent of the driver for the VolumeSnapshot `default/<snapshotName>`, as the snapshot controller creates it. */
export function snapshotContentObject(name: string, snapshotName: string) {
  return {
    apiVersion: 'snapshot.storage.k8s.io/v1',
    kind: 'VolumeSnapshotContent',
    metadata: { name },
    spec: {
      driver: 'ebs.csi.aws.com',
      deletionPolicy: 'Delete',
      source: { volumeHandle: 'vol-0123456789abcdef0' },
      volumeSnapshotClassName: 'ebs',
      volumeSnapshotRef: { kind: 'VolumeSnapshot', apiVersion: 'snapshot.storage.k8s.io/v1', namespace: 'default', name: snapshotName },
    },
  };
}

export const createPv = (name: string): Write => ({ op: 'createPersistentVolume', pv: newPv(name) });
