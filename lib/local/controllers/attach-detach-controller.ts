/**
 * The attach/detach controller of kube-controller-manager for the local stack: per node, it
 * creates the VolumeAttachments its pods need and deletes those no pod there uses, leaving
 * the attaching and detaching itself to the external attacher (volhook's backend). Decisions
 * in `planNodeAttachments`; this file does the I/O.
 */
import type { ObjectStore, WatchEvent } from '../kube/types.js';
import { planNodeAttachments } from './attachments.js';
import { runController } from './controller.js';
import type { RunningController } from './controller.js';
import { isAlreadyExists, isNotFound } from './errors.js';
import { Informers } from './informers.js';
import { podClaimNames } from './objects.js';
import type { PersistentVolume, PersistentVolumeClaim, Pod, VolumeAttachment } from './objects.js';
import { resolveOptions } from './options.js';
import type { ControllerOptions } from './options.js';

/** @param shared informers to share with other controllers; by default it makes its own. */
export function startAttachDetachController(
  store: ObjectStore,
  options?: ControllerOptions,
  shared?: Informers,
): RunningController {
  const opts = resolveOptions(options);
  const informers = shared ?? new Informers(store);

  function sync(nodeName: string): void {
    const pods = informers.list<Pod>('pods').filter((p) => p.spec?.nodeName === nodeName);
    const attachments = informers.list<VolumeAttachment>('volumeattachments').filter((a) => a.spec.nodeName === nodeName);
    const claims = new Map<string, PersistentVolumeClaim>();
    const volumes = new Map<string, PersistentVolume>();
    for (const pod of pods) {
      for (const claimName of podClaimNames(pod)) {
        const claim = informers.get<PersistentVolumeClaim>('persistentvolumeclaims', claimName, pod.metadata.namespace);
        if (!claim) continue;
        claims.set(`${pod.metadata.namespace}/${claimName}`, claim);
        const volumeName = claim.spec.volumeName;
        const volume = volumeName ? informers.get<PersistentVolume>('persistentvolumes', volumeName) : undefined;
        if (volume) volumes.set(volume.metadata.name, volume);
      }
    }
    const plan = planNodeAttachments({ nodeName, pods, attachments, claims, volumes, driver: opts.driver });
    for (const attachment of plan.create) {
      try {
        store.create('volumeattachments', attachment);
      } catch (error) {
        if (!isAlreadyExists(error)) throw error;
      }
    }
    for (const attachment of plan.delete) {
      try {
        store.delete('volumeattachments', attachment.metadata.name, undefined, {
          preconditions: { uid: attachment.metadata.uid },
        });
      } catch (error) {
        if (!isNotFound(error)) throw error;
      }
    }
  }

  const nodeOf = ({ object }: WatchEvent) => {
    const node = (object as Pod | VolumeAttachment).spec?.nodeName;
    return node ? [node] : [];
  };

  return runController(
    informers,
    {
      name: 'attachdetach-controller',
      // Claims and PVs bind before the scheduler places a pod, so pod events suffice; the
      // resync covers the rest.
      watches: { pods: nodeOf, volumeattachments: nodeOf, nodes: ({ object }) => [object.metadata.name] },
      // Nodes named by pods or attachments count even when the Node object is gone:
      // attachments to a vanished node must still be cleaned up.
      keys: () =>
        new Set([
          ...informers.list('nodes').map((n) => n.metadata.name),
          ...informers.list<Pod>('pods').flatMap((p) => (p.spec?.nodeName ? [p.spec.nodeName] : [])),
          ...informers.list<VolumeAttachment>('volumeattachments').flatMap((a) => (a.spec.nodeName ? [a.spec.nodeName] : [])),
        ]),
      sync,
    },
    { ...opts, ownsInformers: !shared },
  );
}
