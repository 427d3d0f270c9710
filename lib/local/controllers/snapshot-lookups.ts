/**
 * What the common snapshot controller looks up before it acts, read from the informers
 * through `SnapshotWorld`: the source PV, the default class, the content a snapshot binds,
 * whether a claim restores from it, and whether its source claim may be let go.
 */
import { annotation, hasFinalizer, setFinalizer } from './objects.js';
import type { PersistentVolume, PersistentVolumeClaim } from './objects.js';
import {
  ANN_DEFAULT_SNAPSHOT_CLASS,
  PVC_AS_SOURCE_FINALIZER,
  SNAPSHOT_API_GROUP,
  dynamicContentName,
  isDynamic,
  isReady,
  refersTo,
} from './snapshot-objects.js';
import type { VolumeSnapshot, VolumeSnapshotClass, VolumeSnapshotContent } from './snapshot-objects.js';
import { key, type Step } from './snapshot-step.js';

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

/** The PV bound to the snapshot's source claim (`getVolumeFromVolumeSnapshot`), or why there is none. */
export function sourceVolume(world: SnapshotWorld, snapshot: VolumeSnapshot): { volume: PersistentVolume } | { error: string } {
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
export function defaultClass(world: SnapshotWorld, snapshot: VolumeSnapshot): { snapshotClass: VolumeSnapshotClass } | { error: string } {
  const found = sourceVolume(world, snapshot);
  if ('error' in found) return found;
  const driver = found.volume.spec.csi?.driver;
  if (!driver) return { error: `snapshotting non-CSI volumes is not supported, snapshot:${key(snapshot)}` };
  const defaults = world.classes().filter((c) => annotation(c, ANN_DEFAULT_SNAPSHOT_CLASS) === 'true' && c.driver === driver);
  if (defaults.length === 0) return { error: 'cannot find default snapshot class' };
  if (defaults.length > 1) return { error: `${defaults.length} default snapshot classes were found` };
  return { snapshotClass: defaults[0] as VolumeSnapshotClass };
}

export type Lookup = { content?: VolumeSnapshotContent; stop?: true };

/** `getPreprovisionedContentFromStore` / `getDynamicallyProvisionedContentFromStore`. */
export function findContent(world: SnapshotWorld, snapshot: VolumeSnapshot, step: Step): Lookup {
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
export function beingRestored(world: Pick<SnapshotWorld, 'claims'>, snapshot: VolumeSnapshot): boolean {
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
export function releaseClaim(world: SnapshotWorld, snapshot: VolumeSnapshot, skipCurrent: boolean, step: Step): void {
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
