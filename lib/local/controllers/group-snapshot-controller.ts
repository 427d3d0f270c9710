/**
 * The common snapshot controller's group part for the local stack: reads the informers, applies
 * each step of `group-snapshot-sync.ts` in order, and records its events.
 */
import type { KubeObject, ObjectStore, WatchEvent } from '../kube/types.js';
import { runController, type RunningController } from './controller.js';
import { isAlreadyExists, isNotFound } from './errors.js';
import { EventRecorder } from './events.js';
import {
  syncGroupSnapshot,
  type GroupStep,
  type GroupWorld,
  type VolumeGroupSnapshot,
  type VolumeGroupSnapshotClass,
  type VolumeGroupSnapshotContent,
} from './group-snapshot-sync.js';
import { Informers } from './informers.js';
import { kubeTime, objectKey, splitKey, type PersistentVolume, type PersistentVolumeClaim } from './objects.js';
import { resolveOptions, type ControllerOptions } from './options.js';
import type { VolumeSnapshot, VolumeSnapshotContent } from './snapshot-objects.js';
import { writeObject } from './write.js';

/** @param shared informers to share with other controllers; by default it makes its own. */
export function startGroupSnapshotController(store: ObjectStore, options?: ControllerOptions, shared?: Informers): RunningController {
  const opts = resolveOptions(options);
  const informers = shared ?? new Informers(store);
  const recorder = new EventRecorder(store, 'snapshot-controller');
  const groups = () => informers.list<VolumeGroupSnapshot>('volumegroupsnapshots');
  const world: GroupWorld = {
    groupClass: (name) => informers.get<VolumeGroupSnapshotClass>('volumegroupsnapshotclasses', name),
    groupContent: (name) => informers.get<VolumeGroupSnapshotContent>('volumegroupsnapshotcontents', name),
    claims: (namespace) => [...informers.list<PersistentVolumeClaim>('persistentvolumeclaims', namespace)],
    volume: (name) => informers.get<PersistentVolume>('persistentvolumes', name),
    volumes: () => [...informers.list<PersistentVolume>('persistentvolumes')],
    snapshot: (namespace, name) => informers.get<VolumeSnapshot>('volumesnapshots', name, namespace),
    snapshots: (namespace) => [...informers.list<VolumeSnapshot>('volumesnapshots', namespace)],
    content: (name) => informers.get<VolumeSnapshotContent>('volumesnapshotcontents', name),
    now: () => kubeTime(),
  };

  function apply(step: GroupStep): void {
    for (const write of step.writes) {
      if (write.op === 'update') {
        writeObject(store, write.resource, write.current, write.desired);
        continue;
      }
      if (write.op === 'delete') {
        try {
          store.delete(write.resource, write.name, write.namespace, { preconditions: { uid: write.uid } });
        } catch (error) {
          if (!isNotFound(error)) throw error;
        }
        continue;
      }
      try {
        store.create(write.resource, write.object);
      } catch (error) {
        // Created by an earlier sync whose answer was lost: reused, as upstream does.
        if (!isAlreadyExists(error)) throw error;
      }
    }
    for (const event of step.events) recorder.record(event);
  }

  /** The group a member content or snapshot, or a group content, belongs to. */
  const groupOfContent = (content: KubeObject): string[] => {
    const ref = (content as VolumeGroupSnapshotContent).spec?.volumeGroupSnapshotRef;
    return ref?.namespace && ref.name ? [`${ref.namespace}/${ref.name}`] : [];
  };
  type Owner = { kind?: string; name?: string };
  const groupOwner = (object: KubeObject | undefined) => (object?.metadata.ownerReferences as Owner[] | undefined)?.find((o) => o.kind === 'VolumeGroupSnapshot');
  const groupOfMember = (object: KubeObject): string[] => {
    const owner = groupOwner(object);
    if (owner && object.metadata.namespace) return [`${object.metadata.namespace}/${owner.name}`];
    const ref = (object as VolumeSnapshotContent).spec?.volumeSnapshotRef;
    const snapshot = ref?.namespace && ref.name ? world.snapshot(ref.namespace, ref.name) : undefined;
    const snapshotOwner = groupOwner(snapshot);
    return snapshot && snapshotOwner ? [`${snapshot.metadata.namespace}/${snapshotOwner.name}`] : [];
  };
  const all = () => groups().map((g) => objectKey(g));

  return runController(
    informers,
    {
      name: 'snapshot-controller (groups)',
      watches: {
        volumegroupsnapshots: ({ object }: WatchEvent) => [objectKey(object)],
        volumegroupsnapshotcontents: ({ object }: WatchEvent) => groupOfContent(object),
        volumegroupsnapshotclasses: () => groups().filter((g) => g.status?.readyToUse !== true).map((g) => objectKey(g)),
        volumesnapshotcontents: ({ object }: WatchEvent) => groupOfMember(object),
        volumesnapshots: ({ object }: WatchEvent) => groupOfMember(object),
        // A group waits for its claims to be bound, and a group being deleted for the restores from its members.
        persistentvolumeclaims: ({ object }: WatchEvent) =>
          groups()
            .filter((g) => g.metadata.namespace === object.metadata.namespace && (!g.status?.boundVolumeGroupSnapshotContentName || g.metadata.deletionTimestamp))
            .map((g) => objectKey(g)),
      },
      keys: all,
      sync(key) {
        const { namespace, name } = splitKey(key);
        const group = informers.get<VolumeGroupSnapshot>('volumegroupsnapshots', name, namespace);
        if (group) apply(syncGroupSnapshot(world, group));
      },
    },
    { ...opts, ownsInformers: !shared },
  );
}
