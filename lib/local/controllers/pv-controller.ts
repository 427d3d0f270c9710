/**
 * The PersistentVolume controller of kube-controller-manager for the local stack: binds
 * claims to PVs, hands claims to external provisioners, keeps both phases, and the
 * pvc-/pv-protection finalizers. The decisions live in `syncClaim` / `syncVolume`; this
 * file only reads, calls them, and writes.
 */
import type { ObjectStore, WatchEvent } from '../kube/types.js';
import { syncClaim } from './claim-sync.js';
import { runController } from './controller.js';
import type { RunningController } from './controller.js';
import { EventRecorder } from './events.js';
import { Informers } from './informers.js';
import { ANN, annotation, isDeleting, nodeInfo, objectKey, podClaimNames, splitKey } from './objects.js';
import type { PersistentVolume, PersistentVolumeClaim, Pod, StorageClass } from './objects.js';
import { resolveOptions } from './options.js';
import type { ControllerOptions } from './options.js';
import { syncVolume } from './volume-sync.js';
import { writeObject } from './write.js';

const CLAIM = 'claim:';
const VOLUME = 'volume:';

/** @param shared informers to share with other controllers; by default it makes its own. */
export function startPvController(store: ObjectStore, options?: ControllerOptions, shared?: Informers): RunningController {
  const opts = resolveOptions(options);
  const informers = shared ?? new Informers(store);
  const recorder = new EventRecorder(store, 'persistentvolume-controller');
  const volumes = () => informers.list<PersistentVolume>('persistentvolumes');
  const claims = () => informers.list<PersistentVolumeClaim>('persistentvolumeclaims');

  function syncClaimKey(key: string): void {
    const { namespace, name } = splitKey(key);
    const claim = informers.get<PersistentVolumeClaim>('persistentvolumeclaims', name, namespace);
    if (!claim) return;
    const searching = !annotation(claim, ANN.bindCompleted) && !claim.spec.volumeName && !isDeleting(claim);
    const named = claim.spec.volumeName ? informers.get<PersistentVolume>('persistentvolumes', claim.spec.volumeName) : undefined;
    const candidates = searching ? volumes() : named ? [named] : [];
    const selected = annotation(claim, ANN.selectedNode);
    const node = selected ? informers.get('nodes', selected) : undefined;
    const result = syncClaim({
      claim,
      volumes: candidates,
      classes: informers.list<StorageClass>('storageclasses'),
      pods: isDeleting(claim) ? informers.list<Pod>('pods', namespace) : [],
      selectedNode: node && nodeInfo(node),
      migratedAwsEbsProvisioner: opts.provisioner,
    });
    if (result.volume) {
      const current = candidates.find((v) => v.metadata.name === result.volume!.metadata.name)!;
      writeObject(store, 'persistentvolumes', current, result.volume);
    }
    if (result.claim) writeObject(store, 'persistentvolumeclaims', claim, result.claim);
    for (const event of result.events) recorder.record(event);
  }

  function syncVolumeKey(name: string): void {
    const volume = informers.get<PersistentVolume>('persistentvolumes', name);
    if (!volume) return;
    const ref = volume.spec.claimRef;
    const claim = ref?.name ? informers.get<PersistentVolumeClaim>('persistentvolumeclaims', ref.name, ref.namespace) : undefined;
    const result = syncVolume({ volume, claim, migratedAwsEbsDriver: opts.provisioner });
    if (result.volume) writeObject(store, 'persistentvolumes', volume, result.volume);
    for (const event of result.events) recorder.record(event);
  }

  return runController(
    informers,
    {
      name: 'persistentvolume-controller',
      watches: {
        persistentvolumeclaims: ({ type, object }: WatchEvent) => {
          const claim = object as PersistentVolumeClaim;
          const keys = [`${CLAIM}${objectKey(claim)}`];
          if (claim.spec.volumeName) keys.push(`${VOLUME}${claim.spec.volumeName}`);
          if (type === 'DELETED') {
            // PVs pre-bound to the claim are Released now, bound or not.
            for (const volume of volumes()) {
              if (volume.spec.claimRef?.uid === claim.metadata.uid) keys.push(`${VOLUME}${volume.metadata.name}`);
            }
          }
          return keys;
        },
        persistentvolumes: ({ object }: WatchEvent) => {
          const ref = (object as PersistentVolume).spec.claimRef;
          const keys = [`${VOLUME}${object.metadata.name}`];
          if (ref?.name && ref.namespace) keys.push(`${CLAIM}${ref.namespace}/${ref.name}`);
          return keys;
        },
        // A new default class, or a class appearing, changes what pending claims do.
        storageclasses: () => claims().filter((c) => c.status?.phase !== 'Bound').map((c) => `${CLAIM}${objectKey(c)}`),
        // A pod finishing or going away may let a deleted claim's finalizer go.
        pods: ({ object }: WatchEvent) =>
          podClaimNames(object as Pod).map((name) => `${CLAIM}${object.metadata.namespace}/${name}`),
      },
      keys: () => [
        ...claims().map((c) => `${CLAIM}${objectKey(c)}`),
        ...volumes().map((v) => `${VOLUME}${v.metadata.name}`),
      ],
      sync: (key) => (key.startsWith(CLAIM) ? syncClaimKey(key.slice(CLAIM.length)) : syncVolumeKey(key.slice(VOLUME.length))),
    },
    { ...opts, ownsInformers: !shared },
  );
}
