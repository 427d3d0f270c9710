/**
 * The first half of provisioning, which needs no cloud: is the claim ours, is it ready, and
 * what exactly would its volume be. Every refusal here happens before any EC2 call.
 */
import {
  Annotations,
  claimClassName,
  pvNameForClaim,
  type PersistentVolumeClaim,
  type PersistentVolumeClaimItem,
  type StorageClass,
  type Write,
} from '../contract/index.js';
import type { CopyDiskRequest, CreateDiskRequest, Disk, Zone } from '../ec2/types.js';
import { awsRegionFromZones, provisioningClass, TranslationError, type ProvisioningClass } from '../migration/index.js';
import { ParameterError, readVolumeAttributes, volumeSpecFor, type VolumeAttributes, type VolumeSpec } from '../storageclass/index.js';
import type { ReconcileContext } from './context.js';
import { classifyReference, resolveSource, sourceReference, type SourceKind, type VolumeSource } from './data-source.js';
import { EventReasons, pvcEvent } from './events.js';
import { Requeue } from './outcomes.js';
import { done, failed, requeue, type Settled } from './plan.js';
import { volumeTags } from './tags.js';
import { removePvcAnnotation } from './writes.js';
import { chooseZone, readPlacement } from './zone.js';
import { claimTagsForNewVolume } from './claim-tags.js';
import { sourceProtectionOf, type SourceProtection } from './source-protection.js';

/** A claim to provision: everything the volume and its PV need but the cloud's answer. */
export interface ProvisionJob {
  pvc: PersistentVolumeClaim;
  /** The class provisioned with: the claim's, or its CSI translation for a migrated in-tree class. */
  storageClass: StorageClass;
  className: string;
  /** `kubernetes.io/aws-ebs` when the claim's class is that in-tree plugin's: the PV is written in-tree. */
  migratedFrom?: string;
  pvName: string;
  spec: VolumeSpec;
  /** The claim's VolumeAttributesClass, as the disk must be to be said to have it. */
  volumeAttributes?: { className: string; attributes: VolumeAttributes };
  /** With WaitForFirstConsumer, the selected-node annotation goes when the zone is full. */
  waitForFirstConsumer: boolean;
  request: CreateDiskRequest;
  /** What the volume is made from: a snapshot (restore, `request.snapshotId` set) or a volume (clone). */
  source?: VolumeSource;
  /** A clone: the CopyVolumes request, made instead of `request`. */
  copy?: CopyDiskRequest;
  /** The source object (VolumeSnapshot or claim) and its protection, for a restore or a clone. */
  sourceProtection?: SourceProtection;
}

type JobContext = Pick<ReconcileContext, 'clusterId' | 'registration' | 'provisionerName' | 'driverName'>;

/** The claim's zone depends on zone IDs: call again with the Region's zones (the gateway's `zones()`). */
export interface NeedsZones {
  needsZones: true;
}

/**
 * Pure: either the end of the reconcile (nothing to do yet, or refused with a Warning on the
 * claim), or the job to provision. For a claim of ours that is neither bound nor being
 * deleted, whose PV does not exist yet. A claim whose zone depends on zone IDs needs
 * `regionZones`; without them it answers {@link NeedsZones}, once every other check passed.
 */
export function prepareProvision(item: PersistentVolumeClaimItem, ctx: JobContext): Settled | { job: ProvisionJob } | NeedsZones;
export function prepareProvision(item: PersistentVolumeClaimItem, ctx: JobContext, regionZones: readonly Zone[]): Settled | { job: ProvisionJob };
export function prepareProvision(
  item: PersistentVolumeClaimItem,
  ctx: JobContext,
  regionZones?: readonly Zone[],
): Settled | { job: ProvisionJob } | NeedsZones {
  const { pvc } = item;
  const className = claimClassName(pvc) || item.storageClass?.metadata.name;
  const claimClass = item.storageClass;
  if (!claimClass || !className || claimClass.metadata.name !== className) {
    return requeue(Requeue.waitForCluster, `StorageClass "${className ?? ''}" of the claim is not known (yet)`);
  }
  const provisioning = classToProvisionWith(claimClass, ctx.provisionerName);
  if (!provisioning) return done();
  const waitForFirstConsumer = claimClass.volumeBindingMode === 'WaitForFirstConsumer';
  if (waitForFirstConsumer && !pvc.metadata.annotations?.[Annotations.selectedNode]) return done();

  const refuse = (reason: string, message: string, requeueAfterSeconds: number = Requeue.failedSlow, extra: Write[] = []) =>
    failed(reason, message, requeueAfterSeconds, [...provisioningRefused(pvc, className, message), ...extra]);

  if ('error' in provisioning) return refuse('InvalidStorageClass', `failed to translate storage class: ${provisioning.error}`);
  const { storageClass, migratedFrom } = provisioning;

  // Never an empty disk for a claim that asked for content: a data source is restored,
  // cloned, or refused naming it.
  const reference = sourceReference(pvc);
  let sourceKind: SourceKind | undefined;
  if (reference) {
    const classified = classifyReference(pvc, reference);
    if ('refused' in classified) return refuse('DataSourceNotSupported', classified.refused);
    if (migratedFrom) {
      return refuse('DataSourceNotSupported', `the claim's data source ${dataSourceOf(pvc) ?? ''} is not supported for the in-tree class "${className}" (${migratedFrom}); use a class of ${ctx.provisionerName}`);
    }
    sourceKind = classified.kind;
  }
  if (pvc.spec.selector) return refuse('SelectorNotSupported', 'claim Selector is not supported');
  // Before the parameters: `outpostArn` is refused as an Outpost, not as an unknown key.
  const placement = readPlacement(storageClass);
  if (placement.kind === 'unsupported') return refuse(placement.reason, placement.message);

  const pvName = pvNameForClaim(pvc.metadata.uid);
  const vacName = pvc.spec.volumeAttributesClassName;
  let parameters = storageClass.parameters;
  let volumeAttributes: ProvisionJob['volumeAttributes'];
  if (vacName) {
    const vac = item.volumeAttributesClass;
    if (!vac || vac.metadata.name !== vacName) {
      return refuse('VolumeAttributesClassNotFound', `VolumeAttributesClass "${vacName}" does not exist`, Requeue.waitForCluster);
    }
    if (vac.driverName !== ctx.provisionerName) {
      return refuse('InvalidVolumeAttributesClass', `VolumeAttributesClass "${vacName}" is for driver "${vac.driverName}", not ${ctx.provisionerName}`);
    }
    try {
      const values = { PVCName: pvc.metadata.name, PVCNamespace: pvc.metadata.namespace, PVName: pvName };
      parameters = withVolumeAttributes(storageClass.parameters, vac.parameters, values);
      volumeAttributes = { className: vacName, attributes: readVolumeAttributes(vac.parameters, values) };
    } catch (error) {
      if (error instanceof ParameterError) return refuse('InvalidParameter', `invalid parameter of VolumeAttributesClass "${vacName}": ${error.message}`);
      throw error;
    }
  }
  let spec: VolumeSpec;
  try {
    spec = volumeSpecFor({
      parameters,
      requestStorage: pvc.spec.resources.requests.storage,
      volumeMode: pvc.spec.volumeMode ?? 'Filesystem',
      accessModes: pvc.spec.accessModes,
      pvcName: pvc.metadata.name,
      pvcNamespace: pvc.metadata.namespace,
      pvName,
      fromSnapshot: sourceKind === 'VolumeSnapshot',
    });
  } catch (error) {
    if (error instanceof ParameterError) return refuse('InvalidParameter', `invalid parameter ${error.message}`);
    throw error;
  }

  const { registration, clusterId } = ctx;
  if (!registration.allowedVolumeTypes.includes(spec.type)) {
    return refuse(
      'NotAllowed',
      `volume type ${spec.type} is not allowed for cluster "${clusterId}" (allowed: ${registration.allowedVolumeTypes.join(', ')})`,
    );
  }
  if (spec.sizeGiB > registration.maxSizeGiB) {
    return refuse('NotAllowed', `${spec.sizeGiB} GiB is more than cluster "${clusterId}" allows (maxSizeGiB ${registration.maxSizeGiB})`);
  }

  let source: VolumeSource | undefined;
  if (reference && sourceKind) {
    const wait = (message: string) => requeue(Requeue.waitForCluster, message, provisioningRefused(pvc, className, message));
    const resolved = resolveSource(item, sourceKind, reference, { driverName: ctx.driverName }, refuse, wait);
    if ('verdict' in resolved) return resolved;
    source = resolved;
  }

  const zone = chooseZone(item, storageClass, registration.allowedZones, regionZones, source?.kind === 'clone' ? source.zone : undefined);
  switch (zone.kind) {
    case 'wait':
      return done();
    case 'incomplete':
      return requeue(Requeue.waitForCluster, zone.message);
    case 'nodeGone': {
      const message = `selected node "${zone.node}" (or its CSINode) is gone; asking the scheduler to pick a node again`;
      return refuse('SelectedNodeGone', message, Requeue.failed, [removePvcAnnotation(pvc, Annotations.selectedNode)]);
    }
    case 'none':
      return refuse('NoZone', zone.message);
    case 'unsupported':
      return refuse(zone.reason, zone.message);
    case 'needZones':
      return { needsZones: true };
    case 'zone':
      break;
  }

  if (migratedFrom) {
    // Checked before the disk exists: its in-tree PV names the zone's region.
    try {
      awsRegionFromZones([zone.zone]);
    } catch (error) {
      if (!(error instanceof TranslationError)) throw error;
      return refuse('InvalidZone', `the PV of an in-tree class names the region of zone ${zone.zone}: ${error.message}`);
    }
  }

  const request: CreateDiskRequest = {
    name: pvName,
    ...(source?.kind === 'snapshot' && { snapshotId: source.snapshotId }),
    ...(source?.kind === 'snapshot' && spec.initializationRate !== undefined && { initializationRate: spec.initializationRate }),
    zone: zone.zone,
    sizeGiB: spec.sizeGiB,
    type: spec.type,
    ...(spec.iops !== undefined && { iops: spec.iops }),
    ...(spec.throughput !== undefined && { throughput: spec.throughput }),
    encrypted: spec.encrypted,
    ...(spec.kmsKeyId !== undefined && { kmsKeyId: spec.kmsKeyId }),
    multiAttach: spec.multiAttach,
    tags: volumeTags({
      clusterId,
      pvName,
      pvcName: pvc.metadata.name,
      pvcNamespace: pvc.metadata.namespace,
      classTags: spec.tags,
      driverTags: spec.driverTags,
      extraTags: registration.extraTags,
      claimTags: claimTagsForNewVolume(pvc, registration.claimTagKeys, { ...registration.extraTags, ...spec.tags }),
    }),
  };
  const copy: CopyDiskRequest | undefined =
    source?.kind === 'clone'
      ? {
          name: pvName,
          sourceVolumeId: source.sourceVolumeId,
          sizeGiB: request.sizeGiB,
          type: request.type,
          ...(request.iops !== undefined && { iops: request.iops }),
          ...(request.throughput !== undefined && { throughput: request.throughput }),
          ...(request.multiAttach !== undefined && { multiAttach: request.multiAttach }),
          tags: request.tags,
        }
      : undefined;
  const sourceProtection = source ? sourceProtectionOf(item) : undefined;
  return {
    job: {
      pvc,
      storageClass,
      className,
      ...(migratedFrom && { migratedFrom }),
      pvName,
      spec,
      ...(volumeAttributes && { volumeAttributes }),
      waitForFirstConsumer,
      request,
      ...(source && { source }),
      ...(copy && { copy }),
      ...(sourceProtection && { sourceProtection }),
    },
  };
}

/**
 * The class to provision a claim with: the claim's own, or the CSI translation of an in-tree
 * class migrated to our provisioner; the translation's error; or undefined when the class is
 * not ours.
 */
function classToProvisionWith(storageClass: StorageClass, provisionerName: string): ProvisioningClass | { error: string } | undefined {
  try {
    return provisioningClass(storageClass, provisionerName);
  } catch (error) {
    if (error instanceof TranslationError) return { error: error.message };
    throw error;
  }
}

/**
 * The claim's `dataSourceRef` (else `dataSource`) as `<apiGroup>/<Kind> "<namespace>/<name>"`,
 * the core group left out; undefined when the claim has neither.
 */
export function dataSourceOf(pvc: PersistentVolumeClaim): string | undefined {
  const source = pvc.spec.dataSourceRef ?? pvc.spec.dataSource;
  if (!source) return undefined;
  const namespace = 'namespace' in source && typeof source.namespace === 'string' && source.namespace ? `${source.namespace}/` : '';
  return `${source.apiGroup ? `${source.apiGroup}/` : ''}${source.kind} "${namespace}${source.name}"`;
}

/** Warning ProvisioningFailed, worded as external-provisioner words it. */
export function provisioningFailed(pvc: PersistentVolumeClaim, className: string, message: string) {
  return pvcEvent(pvc, 'Warning', EventReasons.provisioningFailed, `failed to provision volume with StorageClass "${className}": ${message}`);
}

/**
 * Normal Provisioning, worded as external-provisioner words it (`%q` of the claim's key).
 * external-provisioner records it each time it calls its Provision, before the class's
 * parameters, the topology or the data source are looked at.
 */
export function provisioningStarted(pvc: PersistentVolumeClaim) {
  return pvcEvent(pvc, 'Normal', EventReasons.provisioning, `External provisioner is provisioning volume for claim "${pvc.metadata.namespace}/${pvc.metadata.name}"`);
}

/**
 * A claim refused once provisioning it was started: Provisioning, then Warning
 * ProvisioningFailed, as external-provisioner records a Provision call that failed. A repeat
 * is the same two Events, which the forwarder's recorder counts on the ones already written.
 */
export function provisioningRefused(pvc: PersistentVolumeClaim, className: string, message: string) {
  return [provisioningStarted(pvc), provisioningFailed(pvc, className, message)];
}

/**
 * The class's parameters with a VolumeAttributesClass's over them, as the EBS CSI driver takes
 * CreateVolume's mutable parameters: its type, IOPS and throughput win (its IOPS replace the
 * class's `iopsPerGB` too), its tags are added (tag deletions mean nothing for a new volume).
 *
 * @throws ParameterError naming the VolumeAttributesClass key at fault.
 */
export function withVolumeAttributes(
  classParameters: Record<string, string> | undefined,
  vacParameters: Record<string, string> | undefined,
  values: { PVCName: string; PVCNamespace: string; PVName: string },
): Record<string, string> {
  const attributes = readVolumeAttributes(vacParameters, values);
  const overridden = new Set<string>([
    ...(attributes.type !== undefined ? ['type'] : []),
    ...(attributes.iops !== undefined ? ['iops', 'iopspergb'] : []),
    ...(attributes.throughput !== undefined ? ['throughput'] : []),
  ]);
  const merged = Object.fromEntries(Object.entries(classParameters ?? {}).filter(([key]) => !overridden.has(key.toLowerCase())));
  if (attributes.type !== undefined) merged.type = attributes.type;
  if (attributes.iops !== undefined) merged.iops = String(attributes.iops);
  if (attributes.throughput !== undefined) merged.throughput = String(attributes.throughput);
  // Already evaluated; a "=" in a value stays in it (the class's split is at the first "=").
  Object.entries(attributes.tagsToAdd).forEach(([key, value], n) => (merged[`tagSpecification_vac_${n + 1}`] = `${key}=${value}`));
  return merged;
}

/**
 * Whether the disk is as a VolumeAttributesClass asks: its type, IOPS and throughput where the
 * class names them, its tags added and removed. A disk made before the claim named the class
 * (the claim changed while its volume was being created) is not: its PV does not name the
 * class, and the class is applied to the bound claim's volume as a change.
 */
export function diskHasAttributes(disk: Disk, attributes: VolumeAttributes): boolean {
  return (
    (attributes.type === undefined || disk.type === attributes.type) &&
    (attributes.iops === undefined || disk.iops === attributes.iops) &&
    (attributes.throughput === undefined || disk.throughput === attributes.throughput) &&
    Object.entries(attributes.tagsToAdd).every(([key, value]) => disk.tags[key] === value) &&
    attributes.tagsToDelete.every((key) => !(key in disk.tags))
  );
}
