/**
 * A stand-in for every node's kubelet, as far as storage shows: a pod placed on a node
 * turns Running (and Ready) once its volumes are attached. Nothing runs, nothing mounts.
 * Decision in `podStartup`; this file does the I/O.
 */
import type { ObjectStore, WatchEvent } from '../kube/types.js';
import { attachmentName, podAttachables } from './attachments.js';
import { runController } from './controller.js';
import type { RunningController } from './controller.js';
import { Informers } from './informers.js';
import { KeyIndex } from './key-index.js';
import { kubeTime, objectKey, podClaimNames, splitKey } from './objects.js';
import type { PersistentVolume, PersistentVolumeClaim, Pod, VolumeAttachment } from './objects.js';
import { resolveOptions } from './options.js';
import type { ControllerOptions } from './options.js';
import { awaitsStart, podStartup } from './pod-startup.js';
import { EventRecorder } from './events.js';
import { awaitsNodeExpansion, nodeExpansion } from './node-expansion.js';

/** @param shared informers to share with other controllers; by default it makes its own. */
export function startKubelet(store: ObjectStore, options?: ControllerOptions, shared?: Informers): RunningController {
  const opts = resolveOptions(options);
  const informers = shared ?? new Informers(store);
  /** Pods waiting to start, by node, so an attachment's event wakes the pods of its node. */
  const starting = new KeyIndex();

  const track = (pod: Pod) => {
    if (awaitsStart(pod)) starting.set(objectKey(pod), [pod.spec!.nodeName!]);
    else starting.remove(objectKey(pod));
  };

  function sync(key: string): void {
    const { namespace, name } = splitKey(key);
    const pod = informers.get<Pod>('pods', name, namespace);
    if (!pod) {
      starting.remove(key);
      return;
    }
    track(pod);
    if (!awaitsStart(pod)) return;
    const claims = new Map<string, PersistentVolumeClaim>();
    const volumes = new Map<string, PersistentVolume>();
    const attachments = new Map<string, VolumeAttachment>();
    for (const claimName of podClaimNames(pod)) {
      const claim = informers.get<PersistentVolumeClaim>('persistentvolumeclaims', claimName, namespace);
      if (!claim) continue;
      claims.set(`${namespace}/${claimName}`, claim);
      const volume = claim.spec.volumeName ? informers.get<PersistentVolume>('persistentvolumes', claim.spec.volumeName) : undefined;
      if (volume) volumes.set(volume.metadata.name, volume);
    }
    for (const { handle } of podAttachables(pod, { claims, volumes }, opts.driver)) {
      const attachment = informers.get<VolumeAttachment>('volumeattachments', attachmentName(handle, opts.driver, pod.spec!.nodeName!));
      if (attachment) attachments.set(attachment.metadata.name, attachment);
    }
    const status = podStartup({ pod, claims, volumes, attachments, driver: opts.driver, now: kubeTime() });
    if (status) store.updateStatus('pods', { ...pod, status });
  }

  const pods = runController(
    informers,
    {
      name: 'kubelet',
      watches: {
        pods: ({ type, object }: WatchEvent) => {
          if (type === 'DELETED') {
            starting.remove(objectKey(object));
            return [];
          }
          track(object as Pod);
          return awaitsStart(object as Pod) ? [objectKey(object)] : [];
        },
        volumeattachments: ({ object }: WatchEvent) => {
          const node = (object as VolumeAttachment).spec.nodeName;
          return node ? starting.get(node) : [];
        },
        // Claims bind and PVs appear after a pod may already sit on its node.
        persistentvolumeclaims: () => starting.all(),
      },
      keys: () =>
        informers
          .list<Pod>('pods')
          .filter((pod) => {
            track(pod);
            return awaitsStart(pod);
          })
          .map(objectKey),
      sync,
    },
    { ...opts, ownsInformers: false },
  );

  // The node plugin's NodeExpandVolume: a grown disk's filesystem, once a Running pod mounts it.
  const recorder = new EventRecorder(store, 'kubelet');
  const claimKeyOf = (namespace: string | undefined, name: string) => objectKey({ metadata: { namespace, name } } as PersistentVolumeClaim);
  const expansion = runController(
    informers,
    {
      name: 'kubelet-volume-expansion',
      watches: {
        persistentvolumeclaims: ({ type, object }: WatchEvent) =>
          type !== 'DELETED' && awaitsNodeExpansion(object as PersistentVolumeClaim) ? [objectKey(object)] : [],
        pods: ({ object }: WatchEvent) => podClaimNames(object as Pod).map((claim) => claimKeyOf(object.metadata.namespace, claim)),
        persistentvolumes: ({ object }: WatchEvent) => {
          const ref = (object as PersistentVolume).spec.claimRef;
          return ref?.name ? [claimKeyOf(ref.namespace ?? undefined, ref.name)] : [];
        },
      },
      keys: () => informers.list<PersistentVolumeClaim>('persistentvolumeclaims').filter(awaitsNodeExpansion).map(objectKey),
      sync(key: string) {
        const { namespace, name } = splitKey(key);
        const claim = informers.get<PersistentVolumeClaim>('persistentvolumeclaims', name, namespace);
        if (!claim) return;
        const volume = claim.spec.volumeName ? informers.get<PersistentVolume>('persistentvolumes', claim.spec.volumeName) : undefined;
        const podsOfNamespace = informers.list<Pod>('pods').filter((pod) => pod.metadata.namespace === namespace);
        const status = nodeExpansion({ claim, volume, pods: podsOfNamespace });
        if (!status) return;
        const updated = store.updateStatus('persistentvolumeclaims', { ...claim, status });
        const node = podsOfNamespace.find((pod) => podClaimNames(pod).includes(name))?.spec?.nodeName ?? '';
        recorder.record({
          object: updated,
          type: 'Normal',
          reason: 'FileSystemResizeSuccessful',
          message: `MountVolume.NodeExpandVolume succeeded for volume "${claim.spec.volumeName}" ${node}`.trim(),
        });
      },
    },
    { ...opts, ownsInformers: false },
  );
  return {
    async stop() {
      await Promise.all([pods.stop(), expansion.stop()]);
      if (!shared) informers.stop();
    },
  };
}
