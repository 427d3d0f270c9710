/**
 * The attach/detach controller's decision for one node: which VolumeAttachments the pods
 * placed there need, and which are left over. Pure; names follow the CSI attacher plugin of
 * kubelet/kube-controller-manager so the backend sees the same names a real cluster makes.
 */
import { createHash } from 'node:crypto';
import { attachableHandle, inlineVolumeSpec } from './migration.js';
import { isDeleting, isTerminated, podClaimNames } from './objects.js';
import type { InlineVolumeSpec, PersistentVolume, PersistentVolumeClaim, Pod, VolumeAttachment } from './objects.js';

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

/** A volume of the pod's to attach: the handle its VolumeAttachment is named by, and the VolumeAttachment's source. */
export interface PodAttachable {
  handle: string;
  source: { persistentVolumeName: string } | { inlineVolumeSpec: InlineVolumeSpec };
}

/**
 * Everything the pod needs attached by `driver`: its bound PVs ({@link podAttachableVolumes})
 * and, for the EBS CSI driver, its inline `awsElasticBlockStore` volumes translated as
 * csi-translation-lib does (CSI migration of inline volumes): no PV, the spec in the
 * VolumeAttachment itself.
 */
export function podAttachables(pod: Pod, lookup: VolumeLookup, driver: string): PodAttachable[] {
  const fromVolumes = podAttachableVolumes(pod, lookup, driver).map((volume) => ({
    handle: attachableHandle(volume, driver)!,
    source: { persistentVolumeName: volume.metadata.name },
  }));
  const inline = (pod.spec?.volumes ?? []).flatMap((v) => {
    const spec = v.awsElasticBlockStore ? inlineVolumeSpec(v.awsElasticBlockStore, driver) : undefined;
    return spec?.csi ? [{ handle: spec.csi.volumeHandle, source: { inlineVolumeSpec: spec } }] : [];
  });
  return [...fromVolumes, ...inline];
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
 * Desired: one VolumeAttachment per (volume, node) for the driver's PVs and inline volumes of
 * every unfinished pod on the node — a pod being deleted still holds its volumes until it is
 * gone. Create the missing ones (unless one of that name is still detaching: it must go
 * first); delete the driver's attachments whose PV, or inline disk, no pod on the node uses.
 */
export function planNodeAttachments(input: NodeAttachmentInput): AttachmentPlan {
  const wanted = new Map<string, VolumeAttachment>();
  for (const pod of input.pods) {
    if (pod.spec?.nodeName !== input.nodeName || isTerminated(pod)) continue;
    for (const { handle, source } of podAttachables(pod, input, input.driver)) {
      // From the translated handle: aws://<zone>/vol-X and vol-X name the same attachment.
      const name = attachmentName(handle, input.driver, input.nodeName);
      wanted.set(name, {
        apiVersion: 'storage.k8s.io/v1',
        kind: 'VolumeAttachment',
        metadata: { name } as VolumeAttachment['metadata'],
        spec: { attacher: input.driver, nodeName: input.nodeName, source },
      });
    }
  }
  const existing = new Set(input.attachments.map((a) => a.metadata.name));
  const wantedSources = [...wanted.values()].map((a) => a.spec.source);
  const wantedVolumes = new Set(wantedSources.map((source) => source?.persistentVolumeName));
  const wantedInline = new Set(wantedSources.map((source) => source?.inlineVolumeSpec?.csi?.volumeHandle));
  const unused = (a: VolumeAttachment): boolean => {
    const source = a.spec.source;
    if (source?.persistentVolumeName !== undefined) return !wantedVolumes.has(source.persistentVolumeName);
    const inlineHandle = source?.inlineVolumeSpec?.csi?.volumeHandle;
    return inlineHandle !== undefined && !wantedInline.has(inlineHandle);
  };
  return {
    create: [...wanted.values()].filter((a) => !existing.has(a.metadata.name)),
    delete: input.attachments.filter((a) => a.spec.attacher === input.driver && a.spec.nodeName === input.nodeName && unused(a) && !isDeleting(a)),
  };
}
