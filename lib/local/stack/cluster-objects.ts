/**
 * The objects a fresh EKS-like cluster has that volhook relies on: Nodes with zone labels and
 * providerIDs, their CSINode entries for the EBS driver (the node plugin's registration), the
 * CSIDriver object, and the example StorageClasses.
 */
import { EBS_DRIVER, IN_TREE_EBS_PLUGIN, TopologyKeys } from '../../contract/index.js';

export interface LocalNode {
  name: string;
  zone: string;
  /** The zone's ID (`use1-az1`), labelled `topology.k8s.aws/zone-id` as on EKS nodes; absent if EC2 did not say. */
  zoneId?: string;
  instanceId: string;
}

export function nodeObject(node: LocalNode, region: string) {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: node.name,
      labels: {
        'kubernetes.io/hostname': node.name,
        'kubernetes.io/os': 'linux',
        'node.kubernetes.io/instance-type': 'm6i.large',
        'topology.kubernetes.io/region': region,
        [TopologyKeys.wellKnownZone]: node.zone,
        [TopologyKeys.ebsZone]: node.zone,
        ...(node.zoneId !== undefined && { [TopologyKeys.zoneId]: node.zoneId }),
      },
    },
    spec: { providerID: `aws:///${node.zone}/${node.instanceId}` },
    status: {
      conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status' }],
      nodeInfo: { kubeletVersion: 'v1.32.0', osImage: 'local', architecture: 'amd64', operatingSystem: 'linux' },
    },
  };
}

/** EBS allows 28 attachment slots on Nitro; the root volume and one ENI take two. */
export const ALLOCATABLE_VOLUMES = 26;

export function csiNodeObject(node: LocalNode) {
  return {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'CSINode',
    metadata: { name: node.name },
    spec: {
      drivers: [
        {
          name: EBS_DRIVER,
          nodeID: node.instanceId,
          topologyKeys: [TopologyKeys.ebsZone],
          allocatable: { count: ALLOCATABLE_VOLUMES },
        },
      ],
    },
  };
}

export const csiDriverObject = {
  apiVersion: 'storage.k8s.io/v1',
  kind: 'CSIDriver',
  metadata: { name: EBS_DRIVER },
  spec: { attachRequired: true, podInfoOnMount: false, fsGroupPolicy: 'File', volumeLifecycleModes: ['Persistent'] },
};

function storageClass(name: string, fields: Record<string, unknown>, isDefault = false) {
  return {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: { name, ...(isDefault ? { annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } } : {}) },
    provisioner: EBS_DRIVER,
    allowVolumeExpansion: true,
    ...fields,
  };
}

/**
 * `gp3` (default, WaitForFirstConsumer, Delete), `gp3-retain`, `io2` (Immediate), and `gp2`
 * as EKS has it: the in-tree `kubernetes.io/aws-ebs` class (no volume expansion, not the
 * default), served by the EBS CSI driver through CSI migration.
 */
export const storageClassObjects = [
  storageClass('gp3', { parameters: { type: 'gp3' }, reclaimPolicy: 'Delete', volumeBindingMode: 'WaitForFirstConsumer' }, true),
  storageClass('gp3-retain', { parameters: { type: 'gp3' }, reclaimPolicy: 'Retain', volumeBindingMode: 'WaitForFirstConsumer' }),
  storageClass('io2', { parameters: { type: 'io2', iops: '4000' }, reclaimPolicy: 'Delete', volumeBindingMode: 'Immediate' }),
  storageClass('gp2', {
    provisioner: IN_TREE_EBS_PLUGIN,
    allowVolumeExpansion: undefined,
    parameters: { fsType: 'ext4', type: 'gp2' },
    reclaimPolicy: 'Delete',
    volumeBindingMode: 'WaitForFirstConsumer',
  }),
];
