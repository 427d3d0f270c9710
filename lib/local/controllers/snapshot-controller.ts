/**
 * The common snapshot controller (external-snapshotter's `snapshot-controller`, an EKS
 * add-on on a real cluster) for the local stack. It never talks to a storage system: the
 * csi-snapshotter's part — cutting the snapshot, filling the content's status, deleting it
 * when the content goes — is volhook's. Decisions in `snapshot-sync.ts`; this file reads
 * the informers, applies each step's writes in order, and records its events.
 */
import type { ObjectStore, WatchEvent } from '../kube/types.js';
import { runController } from './controller.js';
import type { RunningController } from './controller.js';
import { isAlreadyExists, isNotFound } from './errors.js';
import { EventRecorder } from './events.js';
import { Informers } from './informers.js';
import { kubeTime, objectKey, splitKey } from './objects.js';
import type { PersistentVolume, PersistentVolumeClaim } from './objects.js';
import { resolveOptions } from './options.js';
import type { ControllerOptions } from './options.js';
import { boundContentName, dynamicContentName, refKey } from './snapshot-objects.js';
import type { VolumeSnapshot, VolumeSnapshotClass, VolumeSnapshotContent } from './snapshot-objects.js';
import { syncContent } from './snapshot-content-sync.js';
import type { SnapshotWorld } from './snapshot-lookups.js';
import type { SnapshotStep } from './snapshot-step.js';
import { syncSnapshot } from './snapshot-sync.js';
import { writeObject } from './write.js';

const SNAPSHOT = 'snapshot:';
const CONTENT = 'content:';

/** @param shared informers to share with other controllers; by default it makes its own. */
export function startSnapshotController(store: ObjectStore, options?: ControllerOptions, shared?: Informers): RunningController {
  const opts = resolveOptions(options);
  const informers = shared ?? new Informers(store);
  const recorder = new EventRecorder(store, 'snapshot-controller');
  const snapshots = (namespace?: string) => informers.list<VolumeSnapshot>('volumesnapshots', namespace);
  const contents = () => informers.list<VolumeSnapshotContent>('volumesnapshotcontents');

  const world: SnapshotWorld = {
    content: (name) => informers.get<VolumeSnapshotContent>('volumesnapshotcontents', name),
    snapshotClass: (name) => informers.get<VolumeSnapshotClass>('volumesnapshotclasses', name),
    classes: () => informers.list<VolumeSnapshotClass>('volumesnapshotclasses'),
    claim: (namespace, name) => informers.get<PersistentVolumeClaim>('persistentvolumeclaims', name, namespace),
    claims: (namespace) => informers.list<PersistentVolumeClaim>('persistentvolumeclaims', namespace),
    snapshots: (namespace) => snapshots(namespace),
    volume: (name) => informers.get<PersistentVolume>('persistentvolumes', name),
    now: () => kubeTime(),
  };

  function apply(step: SnapshotStep): void {
    for (const write of step.writes) {
      switch (write.op) {
        case 'update':
          writeObject(store, write.resource, write.current, write.desired);
          break;
        case 'create':
          try {
            store.create(write.resource, write.object);
          } catch (error) {
            // Created by an earlier sync whose answer was lost: reused, as upstream does.
            if (!isAlreadyExists(error)) throw error;
          }
          break;
        case 'delete':
          try {
            store.delete(write.resource, write.name, undefined, { preconditions: { uid: write.uid } });
          } catch (error) {
            if (!isNotFound(error)) throw error;
          }
          break;
      }
    }
    for (const event of step.events) recorder.record(event);
  }

  function sync(key: string): void {
    if (key.startsWith(CONTENT)) {
      const content = informers.get<VolumeSnapshotContent>('volumesnapshotcontents', key.slice(CONTENT.length));
      if (content) apply(syncContent({ snapshot: (namespace, name) => informers.get<VolumeSnapshot>('volumesnapshots', name, namespace) }, content));
      return;
    }
    const { namespace, name } = splitKey(key.slice(SNAPSHOT.length));
    const snapshot = informers.get<VolumeSnapshot>('volumesnapshots', name, namespace);
    if (snapshot) apply(syncSnapshot(world, snapshot));
  }

  /** Snapshots whose source is the claim, or that the claim restores from. */
  const claimSnapshots = (claim: PersistentVolumeClaim): string[] => {
    const source = (claim.spec.dataSource ?? claim.spec.dataSourceRef) as { kind?: string; name?: string } | undefined;
    return snapshots(claim.metadata.namespace)
      .filter((s) => s.spec.source.persistentVolumeClaimName === claim.metadata.name || (source?.kind === 'VolumeSnapshot' && source.name === s.metadata.name))
      .map((s) => `${SNAPSHOT}${objectKey(s)}`);
  };

  return runController(
    informers,
    {
      name: 'snapshot-controller',
      watches: {
        volumesnapshots: ({ object }: WatchEvent) => {
          const snapshot = object as VolumeSnapshot;
          const keys = [`${SNAPSHOT}${objectKey(snapshot)}`];
          // A deleted snapshot's content is looked at again at once (`deleteSnapshot`).
          const content = boundContentName(snapshot) ?? dynamicContentName(snapshot);
          keys.push(`${CONTENT}${content}`);
          return keys;
        },
        volumesnapshotcontents: ({ object }: WatchEvent) => {
          const ref = refKey(object as VolumeSnapshotContent);
          // Status changes reach the snapshot (`needsUpdateSnapshotStatus`), a gone content frees it (`deleteContent`).
          return [`${CONTENT}${object.metadata.name}`, ...(ref ? [`${SNAPSHOT}${ref}`] : [])];
        },
        persistentvolumeclaims: ({ object }: WatchEvent) => claimSnapshots(object as PersistentVolumeClaim),
        volumesnapshotclasses: () => snapshots().filter((s) => s.status?.readyToUse !== true).map((s) => `${SNAPSHOT}${objectKey(s)}`),
      },
      keys: () => [...snapshots().map((s) => `${SNAPSHOT}${objectKey(s)}`), ...contents().map((c) => `${CONTENT}${c.metadata.name}`)],
      sync,
    },
    { ...opts, ownsInformers: !shared },
  );
}
