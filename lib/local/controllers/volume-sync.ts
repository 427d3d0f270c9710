/**
 * The PV controller's decision for one PV (`syncVolume` of kube-controller-manager, plus the
 * pv-protection finalizer): its phase, releasing it when its claim is gone, and what the
 * reclaim policy asks of the controller. Pure; the controller writes the result.
 */
import type { EventSpec } from './events.js';
import { AWS_EBS_CSI_DRIVER, updateVolumeMigration } from './migration.js';
import { ANN, PV_PROTECTION, annotation, hasFinalizer, isDeleting, setAnnotation, setFinalizer, volumeModeOf } from './objects.js';
import type { PersistentVolume, PersistentVolumeClaim } from './objects.js';
import { changed } from './diff.js';

export interface VolumeSyncInput {
  volume: PersistentVolume;
  /** The claim at the PV's claimRef namespace/name, if one exists (its uid may differ). */
  claim?: PersistentVolumeClaim;
  /** The CSI driver PVs of the in-tree `kubernetes.io/aws-ebs` plugin are migrated to. Default `ebs.csi.aws.com`. */
  migratedAwsEbsDriver?: string;
}

export interface VolumeSyncResult {
  /** The PV as it should be (metadata, spec and status), or absent when it already is. */
  volume?: PersistentVolume;
  events: EventSpec[];
}

/** Decides the PV's phase, binding repairs, reclaim outcome and protection finalizer. */
export function syncVolume(input: VolumeSyncInput): VolumeSyncResult {
  const volume = structuredClone(input.volume);
  const events: EventSpec[] = [];
  updateVolumeMigration(volume, input.migratedAwsEbsDriver ?? AWS_EBS_CSI_DRIVER);
  const ref = volume.spec.claimRef;
  const claim = input.claim && input.claim.metadata.uid === ref?.uid ? input.claim : undefined;

  if (!ref || !ref.uid) {
    // Unused, or reserved for a claim that has not bound yet (the claim's sync binds it).
    setPhase(volume, 'Available');
  } else if (!claim) {
    release(volume, events);
  } else if (!claim.spec.volumeName) {
    // Pre-bound (by a provisioner or an interrupted bind): the claim's sync completes it.
    if (volumeModeOf(claim.spec) !== volumeModeOf(volume.spec)) {
      events.push({
        object: volume,
        type: 'Warning',
        reason: 'VolumeMismatch',
        message: `Cannot bind PersistentVolume to requested PersistentVolumeClaim "${claim.metadata.name}" due to incompatible volumeMode.`,
      });
    }
  } else if (claim.spec.volumeName === volume.metadata.name) {
    setPhase(volume, 'Bound');
  } else if (annotation(volume, ANN.provisionedBy) && reclaimPolicy(volume) === 'Delete') {
    // Provisioned for a claim that bound elsewhere: no longer needed.
    release(volume, events);
  } else {
    unbind(volume);
  }

  if (!isDeleting(volume)) setFinalizer(volume, PV_PROTECTION, true);
  else if (hasFinalizer(volume, PV_PROTECTION) && volume.status?.phase !== 'Bound') setFinalizer(volume, PV_PROTECTION, false);

  return { volume: changed(input.volume, volume) ? volume : undefined, events };
}

/** Unset means Retain for static PVs in the API's defaulting, and the controller sees that. */
function reclaimPolicy(volume: PersistentVolume): string {
  return volume.spec.persistentVolumeReclaimPolicy ?? 'Retain';
}

/**
 * The claim is gone: Released (a Failed phase is kept so the user sees it), then reclaim.
 * Retain keeps the PV. A PV migrated to a CSI driver is its provisioner's to reclaim: the
 * controller stands down. Delete on a provisioned PV is the external provisioner's job
 * (volhook deletes Released PVs it provisioned). Anything else needs an in-tree plugin this
 * cluster does not have, so it fails as in Kubernetes.
 */
function release(volume: PersistentVolume, events: EventSpec[]): void {
  if (volume.status?.phase !== 'Released' && volume.status?.phase !== 'Failed') setPhase(volume, 'Released');
  const policy = reclaimPolicy(volume);
  if (policy === 'Retain' || annotation(volume, ANN.migratedTo)) return;
  const provisioner = annotation(volume, ANN.provisionedBy);
  if (policy === 'Delete' && provisioner && !provisioner.startsWith('kubernetes.io/')) return;
  const [reason, message] =
    policy === 'Delete'
      ? ['VolumeFailedDelete', `error getting deleter volume plugin for volume "${volume.metadata.name}": no deletable volume plugin matched`]
      : ['VolumeFailedRecycle', 'No recycler plugin found for the volume!'];
  if (volume.status?.phase !== 'Failed') events.push({ object: volume, type: 'Warning', reason, message });
  volume.status = { ...volume.status, phase: 'Failed', message };
}

/**
 * The claim bound another PV. A claimRef the controller set is dropped; one a user set is
 * kept but loses its uid, so the PV stays reserved for that claim name (`unbindVolume`).
 */
function unbind(volume: PersistentVolume): void {
  if (annotation(volume, ANN.boundByController)) {
    delete volume.spec.claimRef;
    setAnnotation(volume, ANN.boundByController, undefined);
  } else if (volume.spec.claimRef) {
    volume.spec.claimRef = { ...volume.spec.claimRef, uid: '' };
  }
  setPhase(volume, 'Available');
}

function setPhase(volume: PersistentVolume, phase: string): void {
  if (volume.status?.phase === phase) return;
  const status = { ...volume.status, phase };
  delete status.message;
  delete status.reason;
  volume.status = status;
}
