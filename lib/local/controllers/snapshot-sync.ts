/**
 * The common snapshot controller's decisions (external-snapshotter v8,
 * `pkg/common-controller`), for the local stack: per VolumeSnapshot, pick the class (or the
 * default one for the source PV's driver), create the dynamic content `snapcontent-<uid>`
 * from the bound PV, bind pre-provisioned contents, copy the content's status back, keep
 * the finalizers, and on deletion mark the content and delete it when its policy is Delete.
 * (Per content, `snapshot-content-sync.ts`: the bound-protection finalizer, and a snapshot's
 * deletion passed on.)
 *
 * Pure: each call reads what it is given and returns one step — the writes to make, in
 * order, and the events — as upstream's sync returns after each change; the writes cause
 * watch events, and the next sync takes the following step. Where upstream returns an error
 * to be retried, the step simply ends: the watches and the periodic resync come back to it.
 */
import { annotation, hasFinalizer, isDeleting, setAnnotation, setFinalizer } from './objects.js';
import {
  ANN_SNAPSHOT_BEING_DELETED,
  PVC_AS_SOURCE_FINALIZER,
  SNAPSHOT_API_VERSION,
  SNAPSHOT_AS_SOURCE_FINALIZER,
  SNAPSHOT_BOUND_FINALIZER,
  boundContentName,
  dynamicContentName,
  isDynamic,
  isReady,
  refersTo,
} from './snapshot-objects.js';
import type { VolumeSnapshot, VolumeSnapshotContent } from './snapshot-objects.js';
import { beingRestored, defaultClass, findContent, releaseClaim, sourceVolume, type SnapshotWorld } from './snapshot-lookups.js';
import { copyStatus } from './snapshot-status.js';
import { Step, key, type SnapshotStep } from './snapshot-step.js';
import { SNAPSHOT_IN_GROUP_FINALIZER } from './group-snapshot-sync.js';


const failedToUpdate = (name: string, message: string) => `snapshot controller failed to update ${name} on API server: ${message}`;

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
  // A member of a group snapshot: its content and status are the group part's (group-snapshot-sync.ts).
  if (typeof snapshot.status?.volumeGroupSnapshotName === 'string' || snapshot.metadata.finalizers?.includes(SNAPSHOT_IN_GROUP_FINALIZER)) return step;
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
