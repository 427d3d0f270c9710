/**
 * The attach/detach controller's decision for one node: which VolumeAttachments the pods
 * placed there need, and which are left over. Pure; names follow the CSI attacher plugin of
 * kubelet/kube-controller-manager so the backend sees the same names a real cluster makes.
 */
import { createHash } from 'node:crypto';
import { attachableHandle } from './migration.js';
import { isDeleting, isTerminated, podClaimNames } from './objects.js';
import type { PersistentVolume, PersistentVolumeClaim, Pod, VolumeAttachment } from './objects.js';

/**
 * `csi-<hex sha256(volumeHandle + driver + nodeName)>`.
 * @example attachmentName('vol-0123456789abcdef0', 'ebs.csi.aws.com', 'ip-10-0-1-23.ec2.internal')
 *   === 'csi-880af19cc88681d68f80a4a11ffa3d31efb3ee865ea742d7701040e168882925'
 */
export function attachmentName(volumeHandle: string, driver: string, nodeName: string): string {
  return `csi-${createHash('sha256').update(`${volumeHandle}${driver}${nodeName}`).digest('hex')}`;
}

export interface VolumeLookup {
  /** Claims by `namespace/name`. */
  claims: ReadonlyMap<string, PersistentVolumeClaim>;
  /** PVs by name. */
  volumes: ReadonlyMap<string, PersistentVolume>;
}

/**
 * The driver's PVs a pod needs attached: those of its claims that are bound (the PV's
 * claimRef uid is the claim's) and name `driver` in `spec.csi` — or, for the EBS CSI driver,
 * have an in-tree `awsElasticBlockStore` source (CSI migration). Other volumes need no
 * VolumeAttachment from this controller.
 */
export function podAttachableVolumes(pod: Pod, lookup: VolumeLookup, driver: string): PersistentVolume[] {
  const result: PersistentVolume[] = [];
  for (const claimName of podClaimNames(pod)) {
    const claim = lookup.claims.get(`${pod.metadata.namespace}/${claimName}`);
    const volume = claim?.spec.volumeName ? lookup.volumes.get(claim.spec.volumeName) : undefined;
    if (!claim || !volume || volume.spec.claimRef?.uid !== claim.metadata.uid) continue;
    if (attachableHandle(volume, driver)) result.push(volume);
  }
  return result;
}

/**
 * Whether the pod's claims are all bound to existing PVs — until then a kubelet cannot
 * know what to mount, and the pod does not start.
 */
export function podVolumesResolved(pod: Pod, lookup: VolumeLookup): boolean {
  return podClaimNames(pod).every((claimName) => {
    const claim = lookup.claims.get(`${pod.metadata.namespace}/${claimName}`);
    const volume = claim?.spec.volumeName ? lookup.volumes.get(claim.spec.volumeName) : undefined;
    return Boolean(claim && volume && volume.spec.claimRef?.uid === claim.metadata.uid);
  });
}

export interface NodeAttachmentInput extends VolumeLookup {
  nodeName: string;
  /** Pods whose `spec.nodeName` is this node. */
  pods: readonly Pod[];
  /** VolumeAttachments whose `spec.nodeName` is this node. */
  attachments: readonly VolumeAttachment[];
  driver: string;
}

export interface AttachmentPlan {
  create: VolumeAttachment[];
  delete: VolumeAttachment[];
}

/**
 * Desired: one VolumeAttachment per (PV, node) for the driver's PVs of every unfinished pod
 * on the node — a pod being deleted still holds its volumes until it is gone. Create the
 * missing ones (unless one of that name is still detaching: it must go first); delete the
 * driver's attachments whose PV no pod on the node uses.
 */
export function planNodeAttachments(input: NodeAttachmentInput): AttachmentPlan {
  const wanted = new Map<string, VolumeAttachment>();
  for (const pod of input.pods) {
    if (pod.spec?.nodeName !== input.nodeName || isTerminated(pod)) continue;
    for (const volume of podAttachableVolumes(pod, input, input.driver)) {
      // From the translated handle: aws://<zone>/vol-X and vol-X name the same attachment.
      const name = attachmentName(attachableHandle(volume, input.driver)!, input.driver, input.nodeName);
      wanted.set(name, {
        apiVersion: 'storage.k8s.io/v1',
        kind: 'VolumeAttachment',
        metadata: { name } as VolumeAttachment['metadata'],
        spec: { attacher: input.driver, nodeName: input.nodeName, source: { persistentVolumeName: volume.metadata.name } },
      });
    }
  }
  const existing = new Set(input.attachments.map((a) => a.metadata.name));
  const wantedVolumes = new Set([...wanted.values()].map((a) => a.spec.source?.persistentVolumeName));
  return {
    create: [...wanted.values()].filter((a) => !existing.has(a.metadata.name)),
    delete: input.attachments.filter(
      (a) =>
        a.spec.attacher === input.driver &&
        a.spec.nodeName === input.nodeName &&
        a.spec.source?.persistentVolumeName !== undefined &&
        !wantedVolumes.has(a.spec.source.persistentVolumeName) &&
        !isDeleting(a),
    ),
  };
}
