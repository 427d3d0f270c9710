/**
 * The common snapshot controller's decisions (external-snapshotter v8,
 * `pkg/common-controller`), for the local stack: per VolumeSnapshot, pick the class (or the
 * default one for the source PV's driver), create the dynamic content `snapcontent-<uid>`
 * from the bound PV, bind pre-provisioned contents, copy the content's status back, keep
 * the finalizers, and on deletion mark the content and delete it when its policy is Delete.
 * Per content: add the bound-protection finalizer and pass a snapshot's deletion on.
 *
 * Pure: each call reads what it is given and returns one step — the writes to make, in
 * order, and the events — as upstream's sync returns after each change; the writes cause
 * watch events, and the next sync takes the following step. Where upstream returns an error
 * to be retried, the step simply ends: the watches and the periodic resync come back to it.
 */
import type { EventSpec } from './events.js';
import { annotation, hasFinalizer, isDeleting, setAnnotation, setFinalizer } from './objects.js';
import type { PersistentVolume, PersistentVolumeClaim } from './objects.js';
import {
  ANN_DEFAULT_SNAPSHOT_CLASS,
  ANN_SNAPSHOT_BEING_DELETED,
  CONTENT_BOUND_FINALIZER,
  PVC_AS_SOURCE_FINALIZER,
  SNAPSHOT_API_GROUP,
  SNAPSHOT_API_VERSION,
  SNAPSHOT_AS_SOURCE_FINALIZER,
  SNAPSHOT_BOUND_FINALIZER,
  binaryQuantity,
  boundContentName,
  dynamicContentName,
  isDynamic,
  isReady,
  nanosToTime,
  refersTo,
} from './snapshot-objects.js';
import type { VolumeSnapshot, VolumeSnapshotClass, VolumeSnapshotContent } from './snapshot-objects.js';

/** One write of a step. `update` carries the object as read and as it should be. */
export type SnapshotWrite =
  | { op: 'update'; resource: 'volumesnapshots'; current: VolumeSnapshot; desired: VolumeSnapshot }
  | { op: 'update'; resource: 'volumesnapshotcontents'; current: VolumeSnapshotContent; desired: VolumeSnapshotContent }
  | { op: 'update'; resource: 'persistentvolumeclaims'; current: PersistentVolumeClaim; desired: PersistentVolumeClaim }
  | { op: 'create'; resource: 'volumesnapshotcontents'; object: VolumeSnapshotContent }
  | { op: 'delete'; resource: 'volumesnapshotcontents'; name: string; uid: string };

export interface SnapshotStep {
  writes: SnapshotWrite[];
  events: EventSpec[];
}

/** What a snapshot's sync may look at: the informers' view, as read-only lookups. */
export interface SnapshotWorld {
  content(name: string): VolumeSnapshotContent | undefined;
  snapshotClass(name: string): VolumeSnapshotClass | undefined;
  classes(): readonly VolumeSnapshotClass[];
  claim(namespace: string, name: string): PersistentVolumeClaim | undefined;
  /** Claims of a namespace. */
  claims(namespace: string): readonly PersistentVolumeClaim[];
  /** Snapshots of a namespace. */
  snapshots(namespace: string): readonly VolumeSnapshot[];
  volume(name: string): PersistentVolume | undefined;
  /** RFC 3339, for `status.error.time`. */
  now(): string;
}

const key = (s: VolumeSnapshot) => `${s.metadata.namespace}/${s.metadata.name}`;
const failedToUpdate = (name: string, message: string) => `snapshot controller failed to update ${name} on API server: ${message}`;

class Step implements SnapshotStep {
  writes: SnapshotWrite[] = [];
  events: EventSpec[] = [];

  event(object: VolumeSnapshot | VolumeSnapshotContent, type: EventSpec['type'], reason: string, message: string): void {
    this.events.push({ object, type, reason, message });
  }

  /**
   * `updateSnapshotErrorStatusWithEvent`: sets `status.error` (and `readyToUse: false` when
   * asked) with a Warning, unless the same message is already there.
   */
  errorStatus(snapshot: VolumeSnapshot, setReadyToFalse: boolean, reason: string, message: string, now: string): void {
    if (snapshot.status?.error?.message === message) return;
    const desired = structuredClone(snapshot);
    desired.status = { ...desired.status, error: { time: now, message } };
    if (setReadyToFalse) desired.status.readyToUse = false;
    this.writes.push({ op: 'update', resource: 'volumesnapshots', current: snapshot, desired });
    this.event(snapshot, 'Warning', reason, message);
  }
}

/** The PV bound to the snapshot's source claim (`getVolumeFromVolumeSnapshot`), or why there is none. */
function sourceVolume(world: SnapshotWorld, snapshot: VolumeSnapshot): { volume: PersistentVolume } | { error: string } {
  const claimName = snapshot.spec.source.persistentVolumeClaimName;
  if (!claimName) return { error: 'the snapshot source PVC name is not specified' };
  const claim = world.claim(snapshot.metadata.namespace ?? '', claimName);
  if (!claim) return { error: `failed to retrieve PVC ${claimName} from the lister: "persistentvolumeclaim \\"${claimName}\\" not found"` };
  if (claim.status?.phase !== 'Bound') return { error: `the PVC ${claimName} is not yet bound to a PV, will not attempt to take a snapshot` };
  const pvName = claim.spec.volumeName ?? '';
  const volume = world.volume(pvName);
  if (!volume) return { error: `failed to retrieve PV ${pvName} from the API server: "persistentvolumes \\"${pvName}\\" not found"` };
  const ref = volume.spec.claimRef;
  const bound = ref && ref.name === claim.metadata.name && ref.namespace === claim.metadata.namespace && (!ref.uid || ref.uid === claim.metadata.uid);
  if (!bound) return { error: 'claim in dataSource not bound or invalid' };
  return { volume };
}

/** `SetDefaultSnapshotClass`: the one class annotated default whose driver is the source PV's. */
function defaultClass(world: SnapshotWorld, snapshot: VolumeSnapshot): { snapshotClass: VolumeSnapshotClass } | { error: string } {
  const found = sourceVolume(world, snapshot);
  if ('error' in found) return found;
  const driver = found.volume.spec.csi?.driver;
  if (!driver) return { error: `snapshotting non-CSI volumes is not supported, snapshot:${key(snapshot)}` };
  const defaults = world.classes().filter((c) => annotation(c, ANN_DEFAULT_SNAPSHOT_CLASS) === 'true' && c.driver === driver);
  if (defaults.length === 0) return { error: 'cannot find default snapshot class' };
  if (defaults.length > 1) return { error: `${defaults.length} default snapshot classes were found` };
  return { snapshotClass: defaults[0] as VolumeSnapshotClass };
}

type Lookup = { content?: VolumeSnapshotContent; stop?: true };

/** `getPreprovisionedContentFromStore` / `getDynamicallyProvisionedContentFromStore`. */
function findContent(world: SnapshotWorld, snapshot: VolumeSnapshot, step: Step): Lookup {
  const now = world.now();
  if (!isDynamic(snapshot)) {
    const name = snapshot.spec.source.volumeSnapshotContentName ?? '';
    const content = world.content(name);
    if (!content) return {};
    if (content.spec.source.snapshotHandle === undefined) {
      step.errorStatus(snapshot, true, 'SnapshotContentMismatch', 'VolumeSnapshotContent is dynamically provisioned while expecting a pre-provisioned one', now);
      return { stop: true };
    }
    const ref = content.spec.volumeSnapshotRef;
    if (ref.name !== snapshot.metadata.name || ref.namespace !== snapshot.metadata.namespace || (ref.uid && ref.uid !== snapshot.metadata.uid)) {
      step.errorStatus(snapshot, true, 'SnapshotContentMisbound', `VolumeSnapshotContent [${name}] is bound to a different snapshot`, now);
      return { stop: true };
    }
    return { content };
  }
  const name = dynamicContentName(snapshot);
  const content = world.content(name);
  if (!content) return {};
  if (content.spec.source.volumeHandle === undefined) {
    step.errorStatus(snapshot, true, 'SnapshotContentMismatch', `VolumeSnapshotContent ${name} is pre-provisioned while expecting a dynamically provisioned one`, now);
    return { stop: true };
  }
  if (!refersTo(content, snapshot)) {
    step.errorStatus(snapshot, true, 'SnapshotContentMisbound', `VolumeSnapshotContent [${name}] is bound to a different snapshot`, now);
    return { stop: true };
  }
  return { content };
}

/** `isVolumeBeingCreatedFromSnapshot`: a Pending claim of the namespace restores from it. */
function beingRestored(world: SnapshotWorld, snapshot: VolumeSnapshot): boolean {
  return world.claims(snapshot.metadata.namespace ?? '').some((claim) => {
    // The API server mirrors dataSourceRef into dataSource for these kinds; read either.
    const source = (claim.spec.dataSource ?? claim.spec.dataSourceRef) as { kind?: string; apiGroup?: string; name?: string } | undefined;
    return source?.name === snapshot.metadata.name && source.kind === 'VolumeSnapshot' && source.apiGroup === SNAPSHOT_API_GROUP && claim.status?.phase === 'Pending';
  });
}

/**
 * `checkandRemovePVCFinalizer`: the source claim's finalizer goes once no snapshot of the
 * namespace (this one left out when `skipCurrent`) is still being cut from it.
 */
function releaseClaim(world: SnapshotWorld, snapshot: VolumeSnapshot, skipCurrent: boolean, step: Step): void {
  const claimName = snapshot.spec.source.persistentVolumeClaimName;
  if (!claimName) return;
  const claim = world.claim(snapshot.metadata.namespace ?? '', claimName);
  if (!claim || !hasFinalizer(claim, PVC_AS_SOURCE_FINALIZER)) return;
  const inUse = world
    .snapshots(snapshot.metadata.namespace ?? '')
    .some((s) => !(skipCurrent && s.metadata.name === snapshot.metadata.name) && s.spec.source.persistentVolumeClaimName === claimName && !isReady(s));
  if (inUse) return;
  const desired = structuredClone(claim);
  setFinalizer(desired, PVC_AS_SOURCE_FINALIZER, false);
  step.writes.push({ op: 'update', resource: 'persistentvolumeclaims', current: claim, desired });
}

/**
 * `updateSnapshotStatus`: the content's status copied to the snapshot — bound name,
 * creation time, readiness, restore size, error — with the Normal SnapshotCreated and
 * SnapshotReady events when those first hold.
 */
function copyStatus(snapshot: VolumeSnapshot, content: VolumeSnapshotContent, step: Step): void {
  const cs = content.status;
  const createdAt = cs?.creationTime !== undefined ? nanosToTime(cs.creationTime) : undefined;
  const size = cs?.restoreSize;
  const ready = cs?.readyToUse ?? false;
  const error = cs?.error ? structuredClone(cs.error) : undefined;
  const status = structuredClone(snapshot.status ?? {});
  if (snapshot.status === undefined) {
    status.boundVolumeSnapshotContentName = content.metadata.name;
    status.readyToUse = ready;
    if (createdAt) status.creationTime = createdAt;
    if (size !== undefined) status.restoreSize = binaryQuantity(size);
    if (error) status.error = error;
  } else {
    status.boundVolumeSnapshotContentName ||= content.metadata.name;
    if (status.creationTime === undefined && createdAt) status.creationTime = createdAt;
    if (status.readyToUse !== ready) {
      status.readyToUse = ready;
      if (ready) delete status.error;
    }
    const zero = status.restoreSize !== undefined && /^0([a-zA-Z]*)$/.test(status.restoreSize);
    if (size !== undefined && (status.restoreSize === undefined || (zero && size > 0))) status.restoreSize = binaryQuantity(size);
    if (error) status.error = error;
    else delete status.error;
  }
  const desired = { ...structuredClone(snapshot), status };
  if (JSON.stringify(desired.status) === JSON.stringify(snapshot.status)) return;
  step.writes.push({ op: 'update', resource: 'volumesnapshots', current: snapshot, desired });
  if (!snapshot.status?.creationTime && status.creationTime) {
    step.event(snapshot, 'Normal', 'SnapshotCreated', `Snapshot ${key(snapshot)} was successfully created by the CSI driver.`);
  }
  if (!isReady(snapshot) && status.readyToUse === true) {
    step.event(snapshot, 'Normal', 'SnapshotReady', `Snapshot ${key(snapshot)} is ready to use.`);
  }
}

/** `createSnapshotContent`: the source claim's finalizer first, then `snapcontent-<uid>`. */
function createContent(world: SnapshotWorld, snapshot: VolumeSnapshot, step: Step): VolumeSnapshotContent | { error: string } {
  const claimName = snapshot.spec.source.persistentVolumeClaimName ?? '';
  const claim = world.claim(snapshot.metadata.namespace ?? '', claimName);
  if (!claim) return { error: failedToUpdate(snapshot.metadata.name, 'cannot get claim from snapshot') };
  if (!hasFinalizer(claim, PVC_AS_SOURCE_FINALIZER)) {
    if (isDeleting(claim)) return { error: failedToUpdate(claim.metadata.name, 'cannot add finalizer on claim because it is being deleted') };
    const desired = structuredClone(claim);
    setFinalizer(desired, PVC_AS_SOURCE_FINALIZER, true);
    step.writes.push({ op: 'update', resource: 'persistentvolumeclaims', current: claim, desired });
  }
  const input = (error: string) => ({ error: `failed to get input parameters to create snapshot ${snapshot.metadata.name}: "${error}"` });
  const className = snapshot.spec.volumeSnapshotClassName;
  if (className === undefined) return input(`failed to take snapshot ${snapshot.metadata.name} without a snapshot class`);
  const snapshotClass = world.snapshotClass(className);
  if (!snapshotClass) return input(`volumesnapshotclass.snapshot.storage.k8s.io "${className}" not found`);
  const found = sourceVolume(world, snapshot);
  if ('error' in found) return input(found.error);
  const { volume } = found;
  if (!volume.spec.csi?.volumeHandle) return { error: `cannot find CSI PersistentVolumeSource for volume ${volume.metadata.name}` };
  const content: VolumeSnapshotContent = {
    apiVersion: SNAPSHOT_API_VERSION,
    kind: 'VolumeSnapshotContent',
    metadata: { name: dynamicContentName(snapshot) } as VolumeSnapshotContent['metadata'],
    spec: {
      volumeSnapshotRef: {
        kind: 'VolumeSnapshot',
        namespace: snapshot.metadata.namespace,
        name: snapshot.metadata.name,
        uid: snapshot.metadata.uid,
        apiVersion: SNAPSHOT_API_VERSION,
        resourceVersion: snapshot.metadata.resourceVersion,
      },
      source: { volumeHandle: volume.spec.csi.volumeHandle },
      volumeSnapshotClassName: snapshotClass.metadata.name,
      deletionPolicy: snapshotClass.deletionPolicy,
      driver: snapshotClass.driver,
      // --prevent-volume-mode-conversion is on by default since v7.
      ...(volume.spec.volumeMode ? { sourceVolumeMode: volume.spec.volumeMode } : {}),
    },
  };
  step.writes.push({ op: 'create', resource: 'volumesnapshotcontents', object: content });
  step.event(snapshot, 'Normal', 'CreatingSnapshot', `Waiting for a snapshot ${key(snapshot)} to be created by the CSI driver.`);
  return content;
}

/** `syncUnreadySnapshot`: bind or create the content, then copy its status. */
function syncUnready(world: SnapshotWorld, snapshot: VolumeSnapshot, step: Step): void {
  const now = world.now();
  if (!isDynamic(snapshot)) {
    const found = findContent(world, snapshot, step);
    if (found.stop) return;
    const content = found.content;
    if (!content) {
      step.errorStatus(snapshot, true, 'SnapshotContentMissing', 'VolumeSnapshotContent is missing', now);
      return;
    }
    const ref = content.spec.volumeSnapshotRef;
    if (ref.name !== snapshot.metadata.name || (ref.uid && ref.uid !== snapshot.metadata.uid)) {
      const why = `Could not bind snapshot ${snapshot.metadata.name} and content ${content.metadata.name}, the VolumeSnapshotRef does not match`;
      step.errorStatus(snapshot, true, 'SnapshotBindFailed', `Snapshot failed to bind VolumeSnapshotContent, ${why}`, now);
      return;
    }
    let bound = content;
    if (!ref.uid || content.spec.volumeSnapshotClassName === undefined) {
      // `checkandBindSnapshotContent`: the ref's uid, and the snapshot's class when it names one.
      bound = structuredClone(content);
      bound.spec.volumeSnapshotRef.uid = snapshot.metadata.uid;
      if (snapshot.spec.volumeSnapshotClassName !== undefined) bound.spec.volumeSnapshotClassName = snapshot.spec.volumeSnapshotClassName;
      step.writes.push({ op: 'update', resource: 'volumesnapshotcontents', current: content, desired: bound });
    }
    copyStatus(snapshot, bound, step);
    return;
  }
  const found = findContent(world, snapshot, step);
  if (found.stop) return;
  if (found.content) {
    copyStatus(snapshot, found.content, step);
    return;
  }
  const created = createContent(world, snapshot, step);
  if ('error' in created) {
    step.errorStatus(snapshot, true, 'SnapshotContentCreationFailed', `Failed to create snapshot content with error ${created.error}`, now);
    return;
  }
  copyStatus(snapshot, created, step);
}

/** `processSnapshotWithDeletionTimestamp` and `checkandRemoveSnapshotFinalizersAndCheckandDeleteContent`. */
function syncDeleting(world: SnapshotWorld, snapshot: VolumeSnapshot, step: Step): void {
  const name = boundContentName(snapshot) ?? (isDynamic(snapshot) ? dynamicContentName(snapshot) : undefined);
  const found = name === undefined ? undefined : world.content(name);
  const content = found && refersTo(found, snapshot) ? found : undefined;
  const deleteContent = content?.spec.deletionPolicy === 'Delete';
  const candidate = hasFinalizer(snapshot, SNAPSHOT_AS_SOURCE_FINALIZER) || hasFinalizer(snapshot, SNAPSHOT_BOUND_FINALIZER);
  if (!candidate) {
    releaseClaim(world, snapshot, false, step);
    return;
  }
  if (content && beingRestored(world, snapshot)) {
    releaseClaim(world, snapshot, false, step);
    step.event(snapshot, 'Warning', 'SnapshotDeletePending', 'Snapshot is being used to restore a PVC');
    return;
  }
  if (content && annotation(content, ANN_SNAPSHOT_BEING_DELETED) === undefined) {
    const desired = structuredClone(content);
    setAnnotation(desired, ANN_SNAPSHOT_BEING_DELETED, 'yes');
    step.writes.push({ op: 'update', resource: 'volumesnapshotcontents', current: content, desired });
  }
  if (content && deleteContent) step.writes.push({ op: 'delete', resource: 'volumesnapshotcontents', name: content.metadata.name, uid: content.metadata.uid });
  // The claim's finalizer must go before the snapshot's: once the snapshot is gone, nothing would look at the claim again.
  releaseClaim(world, snapshot, true, step);
  const desired = structuredClone(snapshot);
  setFinalizer(desired, SNAPSHOT_AS_SOURCE_FINALIZER, false);
  if (!(content && deleteContent)) setFinalizer(desired, SNAPSHOT_BOUND_FINALIZER, false);
  if (JSON.stringify(desired.metadata.finalizers) !== JSON.stringify(snapshot.metadata.finalizers)) {
    step.writes.push({ op: 'update', resource: 'volumesnapshots', current: snapshot, desired });
  }
}

/** One step of the common controller for one VolumeSnapshot (`syncSnapshotByKey`). */
export function syncSnapshot(world: SnapshotWorld, snapshot: VolumeSnapshot): SnapshotStep {
  const step = new Step();
  const now = world.now();
  const deleting = isDeleting(snapshot);

  // checkAndUpdateSnapshotClass
  const className = snapshot.spec.volumeSnapshotClassName;
  if (className !== undefined) {
    if (!world.snapshotClass(className)) {
      const message = `Failed to get snapshot class with error volumesnapshotclass.snapshot.storage.k8s.io "${className}" not found`;
      step.errorStatus(snapshot, false, 'GetSnapshotClassFailed', message, now);
      // A snapshot being deleted goes on without its class (it may be needed to let it go).
      if (!deleting || step.writes.length > 0) return step;
    }
  } else if (isDynamic(snapshot)) {
    const chosen = defaultClass(world, snapshot);
    if ('error' in chosen) {
      step.errorStatus(snapshot, false, 'SetDefaultSnapshotClassFailed', `Failed to set default snapshot class with error ${chosen.error}`, now);
      return step;
    }
    const desired = structuredClone(snapshot);
    desired.spec.volumeSnapshotClassName = chosen.snapshotClass.metadata.name;
    step.writes.push({ op: 'update', resource: 'volumesnapshots', current: snapshot, desired });
    return step;
  }

  if (deleting) {
    syncDeleting(world, snapshot, step);
    return step;
  }
  releaseClaim(world, snapshot, false, step);

  const source = snapshot.spec.source;
  if ((source.persistentVolumeClaimName === undefined) === (source.volumeSnapshotContentName === undefined)) {
    step.errorStatus(snapshot, true, 'SnapshotValidationError', 'Exactly one of PersistentVolumeClaimName and VolumeSnapshotContentName should be specified', now);
    return step;
  }

  // checkandAddSnapshotFinalizers
  const found = findContent(world, snapshot, step);
  if (found.stop) return step;
  const addSource = !hasFinalizer(snapshot, SNAPSHOT_AS_SOURCE_FINALIZER);
  const addBound =
    found.content !== undefined && boundContentName(snapshot) !== undefined && !hasFinalizer(snapshot, SNAPSHOT_BOUND_FINALIZER) && found.content.spec.deletionPolicy === 'Delete';
  if (addSource || addBound) {
    const desired = structuredClone(snapshot);
    if (addSource) setFinalizer(desired, SNAPSHOT_AS_SOURCE_FINALIZER, true);
    if (addBound) setFinalizer(desired, SNAPSHOT_BOUND_FINALIZER, true);
    step.writes.push({ op: 'update', resource: 'volumesnapshots', current: snapshot, desired });
    return step;
  }

  if (!isReady(snapshot) || boundContentName(snapshot) === undefined) {
    syncUnready(world, snapshot, step);
    return step;
  }

  // syncReadySnapshot: the binding still holds both ways.
  const content = world.content(boundContentName(snapshot) as string);
  if (!content) step.errorStatus(snapshot, true, 'SnapshotContentMissing', 'VolumeSnapshotContent is missing', now);
  else if (!refersTo(content, snapshot)) {
    step.errorStatus(snapshot, true, 'SnapshotMisbound', 'VolumeSnapshotContent is not bound to the VolumeSnapshot correctly', now);
  }
  return step;
}

/** What a content's sync needs beyond the content: the snapshot its ref names, if any. */
export interface ContentWorld {
  snapshot(namespace: string, name: string): VolumeSnapshot | undefined;
}

/** One step of the common controller for one VolumeSnapshotContent (`syncContent`). */
export function syncContent(world: ContentWorld, content: VolumeSnapshotContent): SnapshotStep {
  const step = new Step();
  const source = content.spec.source;
  if ((source.volumeHandle === undefined) === (source.snapshotHandle === undefined)) {
    step.event(content, 'Warning', 'ContentValidationError', 'Exactly one of VolumeHandle and SnapshotHandle should be specified');
    return step;
  }
  const ref = content.spec.volumeSnapshotRef;
  // Pre-bound to a snapshot not bound back yet: the snapshot's sync binds it.
  if (!ref.uid) return step;
  if (!isDeleting(content) && !hasFinalizer(content, CONTENT_BOUND_FINALIZER)) {
    const desired = structuredClone(content);
    setFinalizer(desired, CONTENT_BOUND_FINALIZER, true);
    step.writes.push({ op: 'update', resource: 'volumesnapshotcontents', current: content, desired });
    return step;
  }
  const found = ref.name && ref.namespace ? world.snapshot(ref.namespace, ref.name) : undefined;
  // A snapshot of that name with another uid is a new one: the content's own is gone, and a
  // content whose snapshot is gone is never deleted from here (it may hold someone's data).
  const snapshot = found?.metadata.uid === ref.uid ? found : undefined;
  const candidate = snapshot && isDeleting(snapshot) && (hasFinalizer(snapshot, SNAPSHOT_AS_SOURCE_FINALIZER) || hasFinalizer(snapshot, SNAPSHOT_BOUND_FINALIZER));
  if (candidate && annotation(content, ANN_SNAPSHOT_BEING_DELETED) === undefined) {
    const desired = structuredClone(content);
    setAnnotation(desired, ANN_SNAPSHOT_BEING_DELETED, 'yes');
    step.writes.push({ op: 'update', resource: 'volumesnapshotcontents', current: content, desired });
  }
  return step;
}
