/**
 * The PV controller's decision for one claim (`syncClaim` of kube-controller-manager, plus
 * the default-class assignment and the pvc-protection finalizer). Pure: it gets the claim
 * and what it may need, and returns the claim and PV as they should be plus the events to
 * emit; the controller writes them.
 */
import { findBestMatch, isPreBoundTo } from './binding.js';
import type { EventSpec } from './events.js';
import {
  ANN,
  PVC_PROTECTION,
  annotation,
  claimClass,
  hasFinalizer,
  isDeleting,
  isTerminated,
  podClaimNames,
  setAnnotation,
  setFinalizer,
  volumeClass,
  volumeModeOf,
} from './objects.js';
import type { NodeInfo, PersistentVolume, PersistentVolumeClaim, Pod, StorageClass } from './objects.js';
import { tryParseQuantity } from './quantity.js';
import { changed } from './diff.js';
import { IN_TREE_AWS_EBS, updateMigrationAnnotations } from './migration.js';

export interface ClaimSyncInput {
  claim: PersistentVolumeClaim;
  /**
   * While the claim is unbound and names no volume: every PV (candidates for binding).
   * Otherwise the PV named by `spec.volumeName`, if it exists; other entries are ignored.
   */
  volumes: readonly PersistentVolume[];
  classes: readonly StorageClass[];
  /** Pods of the claim's namespace; only consulted while the claim is being deleted. */
  pods: readonly Pod[];
  /** The node named by the claim's `volume.kubernetes.io/selected-node`, if it exists. */
  selectedNode?: NodeInfo;
  /** The CSI provisioner in-tree `kubernetes.io/aws-ebs` classes migrate to, as CSI migration does. */
  migratedAwsEbsProvisioner: string;
}

export interface ClaimSyncResult {
  /** The claim as it should be (metadata, spec and status), or absent when it already is. */
  claim?: PersistentVolumeClaim;
  /**
   * A PV to write before the claim. Binding writes the PV first, as Kubernetes does, so an
   * interrupted bind leaves the PV pre-bound and the next sync finds it again.
   */
  volume?: PersistentVolume;
  events: EventSpec[];
}

const EXTERNAL_PROVISIONING_MESSAGE = (provisioner: string) =>
  `Waiting for a volume to be created either by the external provisioner '${provisioner}' or manually by the system administrator. If volume creation is delayed, please verify that the provisioner is running and correctly registered.`;

/** Decides everything the PV controller changes on one claim and, for binding, its PV. */
export function syncClaim(input: ClaimSyncInput): ClaimSyncResult {
  const claim = structuredClone(input.claim);
  const events: EventSpec[] = [];
  const deleting = isDeleting(claim);

  if (!deleting) setFinalizer(claim, PVC_PROTECTION, true);
  else if (hasFinalizer(claim, PVC_PROTECTION) && !claimInUse(claim, input.pods)) setFinalizer(claim, PVC_PROTECTION, false);

  if (!deleting) assignDefaultClass(claim, input.classes);

  let volume: PersistentVolume | undefined;
  if (annotation(claim, ANN.bindCompleted)) volume = syncBoundClaim(claim, input.volumes, events);
  else if (!deleting) volume = syncUnboundClaim(claim, input, events);
  // `migrated-to` on claims still assigned to the in-tree plugin (provisioned before migration).
  updateMigrationAnnotations(claim, 'claim', input.migratedAwsEbsProvisioner);

  return { claim: changed(input.claim, claim) ? claim : undefined, volume, events };
}

/**
 * A claim is in use while a scheduled, unfinished pod of its namespace mounts it. Pods not
 * yet scheduled do not count, as in Kubernetes: the scheduler will not place them on a
 * claim being deleted, so waiting for them could only deadlock.
 */
export function claimInUse(claim: PersistentVolumeClaim, pods: readonly Pod[]): boolean {
  return pods.some(
    (pod) =>
      pod.metadata.namespace === claim.metadata.namespace &&
      Boolean(pod.spec?.nodeName) &&
      !isTerminated(pod) &&
      podClaimNames(pod).includes(claim.metadata.name),
  );
}

/**
 * The class marked default, for a claim that names none (`storageClassName` absent — an
 * explicit `""` means "no class"). Kubernetes' admission plugin does this at creation and
 * the PV controller retroactively for unbound claims; several defaults: the newest wins.
 */
export function defaultClassName(classes: readonly StorageClass[]): string | undefined {
  const defaults = classes.filter(
    (c) => annotation(c, ANN.isDefaultClass) === 'true' || annotation(c, ANN.betaIsDefaultClass) === 'true',
  );
  defaults.sort(
    (a, b) =>
      b.metadata.creationTimestamp.localeCompare(a.metadata.creationTimestamp) ||
      a.metadata.name.localeCompare(b.metadata.name),
  );
  return defaults[0]?.metadata.name;
}

function assignDefaultClass(claim: PersistentVolumeClaim, classes: readonly StorageClass[]): void {
  const unset = claim.spec.storageClassName === undefined || claim.spec.storageClassName === null;
  if (!unset || annotation(claim, ANN.betaStorageClass) !== undefined || claim.spec.volumeName) return;
  const name = defaultClassName(classes);
  if (name !== undefined) claim.spec.storageClassName = name;
}

function syncBoundClaim(
  claim: PersistentVolumeClaim,
  volumes: readonly PersistentVolume[],
  events: EventSpec[],
): PersistentVolume | undefined {
  const name = claim.spec.volumeName;
  const volume = name ? volumes.find((v) => v.metadata.name === name) : undefined;
  if (!name) {
    markLost(claim, events, 'ClaimLost', 'Bound claim has lost reference to PersistentVolume. Data on the volume is lost!');
  } else if (!volume) {
    markLost(claim, events, 'ClaimLost', 'Bound claim has lost its PersistentVolume. Data on the volume is lost!');
  } else if (!volume.spec.claimRef || volume.spec.claimRef.uid === claim.metadata.uid) {
    return bind(claim, volume);
  } else {
    markLost(claim, events, 'ClaimMisbound', 'Two claims are bound to the same volume, this one is bound incorrectly');
  }
  return undefined;
}

function syncUnboundClaim(
  claim: PersistentVolumeClaim,
  input: ClaimSyncInput,
  events: EventSpec[],
): PersistentVolume | undefined {
  if (claim.spec.volumeName) return syncClaimNamingVolume(claim, input.volumes, events);

  const className = claimClass(claim);
  const storageClass = input.classes.find((c) => c.metadata.name === className);
  const delayed = storageClass?.volumeBindingMode === 'WaitForFirstConsumer';
  const selectedNode = annotation(claim, ANN.selectedNode);
  // Delayed binding needs the selected node to check PV affinity; while it is unknown
  // (not chosen, or the Node is gone) only a PV pre-bound to the claim may be taken.
  const match = findBestMatch(claim, input.volumes, {
    delayBinding: delayed && !input.selectedNode,
    node: delayed ? input.selectedNode : undefined,
  });
  if (match) return bind(claim, match);

  setPending(claim);
  if (delayed && !selectedNode) {
    events.push(event(claim, 'Normal', 'WaitForFirstConsumer', 'waiting for first consumer to be created before binding'));
  } else if (className === '') {
    events.push(event(claim, 'Normal', 'FailedBinding', 'no persistent volumes available for this claim and no storage class is set'));
  } else if (!storageClass) {
    events.push(event(claim, 'Warning', 'ProvisioningFailed', `storageclass.storage.k8s.io "${className}" not found`));
  } else {
    requestProvisioning(claim, storageClass, input.migratedAwsEbsProvisioner, events);
  }
  return undefined;
}

/**
 * Hands the claim to an external provisioner by annotating it, as the PV controller does for
 * every provisioner it has no in-tree plugin for. `kubernetes.io/*` names other than the
 * migrated aws-ebs one have no plugin here (e.g. `kubernetes.io/no-provisioner`).
 */
function requestProvisioning(
  claim: PersistentVolumeClaim,
  storageClass: StorageClass,
  migratedAwsEbs: string,
  events: EventSpec[],
): void {
  const named = storageClass.provisioner ?? '';
  const provisioner = named === IN_TREE_AWS_EBS ? migratedAwsEbs : named;
  if (provisioner === '' || provisioner.startsWith('kubernetes.io/')) {
    events.push(event(claim, 'Warning', 'ProvisioningFailed', `no volume plugin matched name: ${named}`));
    return;
  }
  setAnnotation(claim, ANN.storageProvisioner, provisioner);
  setAnnotation(claim, ANN.betaStorageProvisioner, provisioner);
  events.push(event(claim, 'Normal', 'ExternalProvisioning', EXTERNAL_PROVISIONING_MESSAGE(provisioner)));
}

/** A claim whose user set `spec.volumeName`: it takes that PV or none. */
function syncClaimNamingVolume(
  claim: PersistentVolumeClaim,
  volumes: readonly PersistentVolume[],
  events: EventSpec[],
): PersistentVolume | undefined {
  const name = claim.spec.volumeName;
  const volume = volumes.find((v) => v.metadata.name === name);
  if (volume && !volume.spec.claimRef) {
    const mismatch = volumeMismatch(volume, claim);
    if (!mismatch) return bind(claim, volume);
    events.push(event(claim, 'Warning', 'VolumeMismatch', `Cannot bind to requested volume "${name}": ${mismatch}`));
  } else if (volume && isPreBoundTo(volume, claim)) {
    return bind(claim, volume);
  } else if (volume) {
    events.push(event(claim, 'Warning', 'FailedBinding', `volume "${name}" already bound to a different claim.`));
  }
  setPending(claim);
  return undefined;
}

/** Why a PV the user named cannot serve the claim (`checkVolumeSatisfyClaim`), or undefined. */
export function volumeMismatch(volume: PersistentVolume, claim: PersistentVolumeClaim): string | undefined {
  if (isDeleting(volume)) return `the volume is marked for deletion "${volume.metadata.name}"`;
  const requested = tryParseQuantity(claim.spec.resources?.requests?.storage ?? 0) ?? Infinity;
  const size = tryParseQuantity(volume.spec.capacity?.storage) ?? 0;
  if (size < requested) return 'requested PV is too small';
  if (volumeClass(volume) !== claimClass(claim)) return 'storageClassName does not match';
  if (volumeModeOf(volume.spec) !== volumeModeOf(claim.spec)) return 'incompatible volumeMode';
  const offered = volume.spec.accessModes ?? [];
  if (!(claim.spec.accessModes ?? []).every((m) => offered.includes(m))) return 'incompatible accessMode';
  return undefined;
}

/**
 * Binds both ways. The PV gets the claimRef (and `bound-by-controller` when the controller,
 * not a user or provisioner, chose it) and phase Bound; the claim gets `volumeName`,
 * `bind-completed`, phase Bound and the PV's capacity and access modes. Returns the PV when
 * it changes.
 */
function bind(claim: PersistentVolumeClaim, original: PersistentVolume): PersistentVolume | undefined {
  const volume = structuredClone(original);
  const ref = volume.spec.claimRef;
  const { namespace, name, uid, resourceVersion } = claim.metadata;
  if (!ref || ref.namespace !== namespace || ref.name !== name || ref.uid !== uid) {
    if (!isPreBoundTo(volume, claim)) setAnnotation(volume, ANN.boundByController, 'yes');
    volume.spec.claimRef = { kind: 'PersistentVolumeClaim', namespace, name, uid, apiVersion: 'v1', resourceVersion };
  }
  volume.status = { ...volume.status, phase: 'Bound' };
  delete volume.status.message;
  delete volume.status.reason;

  if (claim.spec.volumeName !== volume.metadata.name) {
    claim.spec.volumeName = volume.metadata.name;
    if (annotation(claim, ANN.boundByController) === undefined) setAnnotation(claim, ANN.boundByController, 'yes');
  }
  if (annotation(claim, ANN.bindCompleted) === undefined) setAnnotation(claim, ANN.bindCompleted, 'yes');
  const becomingBound = claim.status?.phase !== 'Bound';
  claim.status = {
    ...claim.status,
    phase: 'Bound',
    accessModes: volume.spec.accessModes,
    // Only as the claim becomes Bound: later a PV larger than the claim's capacity means a
    // resize whose filesystem the node has not grown yet, and the kubelet sets the capacity.
    ...(becomingBound || !claim.status?.capacity ? { capacity: volume.spec.capacity } : {}),
    // The class the volume has, as the claim becomes Bound (KEP-3751); external-resizer keeps it after.
    ...(becomingBound && volume.spec.volumeAttributesClassName ? { currentVolumeAttributesClassName: volume.spec.volumeAttributesClassName } : {}),
  };
  return changed(original, volume) ? volume : undefined;
}

function markLost(claim: PersistentVolumeClaim, events: EventSpec[], reason: string, message: string): void {
  if (claim.status?.phase !== 'Lost') events.push(event(claim, 'Warning', reason, message));
  setPhaseWithoutVolume(claim, 'Lost');
}

function setPending(claim: PersistentVolumeClaim): void {
  setPhaseWithoutVolume(claim, 'Pending');
}

/** A claim without a usable PV reports no capacity or access modes (`updateClaimStatus(…, nil)`). */
function setPhaseWithoutVolume(claim: PersistentVolumeClaim, phase: string): void {
  const status = { ...claim.status, phase };
  delete status.accessModes;
  delete status.capacity;
  claim.status = status;
}

function event(claim: PersistentVolumeClaim, type: EventSpec['type'], reason: string, message: string): EventSpec {
  return { object: claim, type, reason, message };
}
