/**
 * Names fixed by Kubernetes, the EBS CSI driver and the external-provisioner/attacher that
 * volhook replaces. Keeping them identical is what lets existing StorageClasses, the EBS CSI
 * node plugin and kubectl output keep working unchanged.
 */
export const EBS_DRIVER = 'ebs.csi.aws.com';

/**
 * The in-tree volume plugin that CSI migration hands to {@link EBS_DRIVER}: the provisioner of
 * EKS's long-standing `gp2` class, and the `provisioned-by` of the PVs it and its migrated
 * successor write (csi-translation-lib `AWSEBSInTreePluginName`).
 */
export const IN_TREE_EBS_PLUGIN = 'kubernetes.io/aws-ebs';

export const Annotations = {
  storageProvisioner: 'volume.kubernetes.io/storage-provisioner',
  betaStorageProvisioner: 'volume.beta.kubernetes.io/storage-provisioner',
  betaStorageClass: 'volume.beta.kubernetes.io/storage-class',
  selectedNode: 'volume.kubernetes.io/selected-node',
  provisionedBy: 'pv.kubernetes.io/provisioned-by',
  bindCompleted: 'pv.kubernetes.io/bind-completed',
  /**
   * The PV controller's mark, on PVs and claims of an in-tree plugin, naming the CSI driver
   * that serves them now (CSI migration): it stands down from their reclaim and the driver's
   * provisioner takes over.
   */
  migratedTo: 'pv.kubernetes.io/migrated-to',
  boundByController: 'pv.kubernetes.io/bound-by-controller',
  defaultClass: 'storageclass.kubernetes.io/is-default-class',
  /**
   * external-attacher's record, on the VolumeAttachment, of the node ID (the EC2 instance) it
   * attached to — written before AttachVolume, so a detach finds the instance even after the
   * Node object is gone.
   */
  attachedNodeId: 'csi.alpha.kubernetes.io/node-id',
} as const;

/** volhook's own annotations (`cluster release` removes them with the rest of its marks). */
export const VolhookAnnotations = {
  /** On a PV whose IOPS are not what its class asked (capped to the type's limits): what was asked, what was given, why. */
  iopsAdjusted: 'volhook.io/iops-adjusted',
  /** On a claim: the `tag.volhook.io/*` request the backend last handled (lib/contract/claim-tags.ts). */
  claimTags: 'volhook.io/claim-tags',
} as const;

export const Finalizers = {
  provisioner: 'external-provisioner.volume.kubernetes.io/finalizer',
  /** external-attacher's finalizer: `external-attacher/<driver with . replaced by ->`. */
  attacher: (driver: string) => `external-attacher/${driver.replace(/\./g, '-')}`,
  pvProtection: 'kubernetes.io/pv-protection',
  pvcProtection: 'kubernetes.io/pvc-protection',
  /**
   * volhook's own, on a claim: written (and seen applied) before the claim's first
   * CreateVolume and removed once its PV exists or its disk is gone, so a claim deleted while
   * a disk of its may still land stays visible, across forwarder restarts, until that is settled.
   */
  claimProtection: 'volhook.io/provisioning-protection',
} as const;

export const TopologyKeys = {
  wellKnownZone: 'topology.kubernetes.io/zone',
  ebsZone: 'topology.ebs.csi.aws.com/zone',
  /** The zone label before `topology.kubernetes.io/zone` (deprecated since Kubernetes 1.17). */
  betaZone: 'failure-domain.beta.kubernetes.io/zone',
  /** The zone's ID (`use1-az1`: the same zone in every account, unlike its name); EKS labels nodes with it. */
  zoneId: 'topology.k8s.aws/zone-id',
  /** The EBS driver's Outpost keys: a node on an Outpost reports all four. */
  ebsOutpostId: 'topology.ebs.csi.aws.com/outpost-id',
  ebsRegion: 'topology.ebs.csi.aws.com/region',
  ebsPartition: 'topology.ebs.csi.aws.com/partition',
  ebsAccountId: 'topology.ebs.csi.aws.com/account-id',
} as const;

/** PV name for a claim, as external-provisioner names it (and the CSI volume name). */
export function pvNameForClaim(pvcUid: string): string {
  return `pvc-${pvcUid}`;
}
