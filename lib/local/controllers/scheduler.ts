/**
 * A minimal kube-scheduler for the local stack: places pending pods on Ready nodes their
 * volumes can reach, and names the node on WaitForFirstConsumer claims so they get
 * provisioned or bound there first. Decisions in `schedulePod`; this file does the I/O.
 */
import type { ObjectStore, WatchEvent } from '../kube/types.js';
import { runController } from './controller.js';
import type { RunningController } from './controller.js';
import { EventRecorder } from './events.js';
import { Informers } from './informers.js';
import { KeyIndex } from './key-index.js';
import { ANN, objectKey, podClaimNames, setAnnotation, splitKey } from './objects.js';
import { NodeLoad } from './node-load.js';
import type { CSINode, Node, PersistentVolume, PersistentVolumeClaim, Pod, StorageClass } from './objects.js';
import { resolveOptions } from './options.js';
import type { ControllerOptions } from './options.js';
import { needsScheduling, schedulePod } from './scheduling.js';

/** @param shared informers to share with other controllers; by default it makes its own. */
export function startScheduler(store: ObjectStore, options?: ControllerOptions, shared?: Informers): RunningController {
  const opts = resolveOptions(options);
  const informers = shared ?? new Informers(store);
  const recorder = new EventRecorder(store, 'default-scheduler');
  /**
   * Pending pods by the `namespace/claim` keys they mount, so a claim's event wakes just
   * them, and all under `ALL` for node and class events.
   */
  const waiting = new KeyIndex();
  const ALL = '*';

  const track = (pod: Pod) => {
    const key = objectKey(pod);
    if (needsScheduling(pod)) waiting.set(key, [ALL, ...podClaimNames(pod).map((c) => `${pod.metadata.namespace}/${c}`)]);
    else waiting.remove(key);
  };

  const load = new NodeLoad(informers);
  const unsubscribe = [
    informers.for('pods').onEvent(({ type, object }: WatchEvent) =>
      type === 'DELETED' ? load.podDeleted(objectKey(object)) : load.podChanged(object as Pod),
    ),
    informers.for('persistentvolumeclaims').onEvent(({ object }: WatchEvent) => load.claimChanged(objectKey(object))),
  ];

  /** The driver's attachment limit per node, from CSINode `allocatable.count`. */
  function volumeLimits(): Map<string, number> {
    const limits = new Map<string, number>();
    for (const csiNode of informers.list<CSINode>('csinodes')) {
      const count = csiNode.spec?.drivers?.find((d) => d.name === opts.driver)?.allocatable?.count;
      if (count !== undefined) limits.set(csiNode.metadata.name, count);
    }
    return limits;
  }

  function sync(key: string): void {
    const { namespace, name } = splitKey(key);
    const pod = informers.get<Pod>('pods', name, namespace);
    if (!pod || !needsScheduling(pod)) {
      waiting.remove(key);
      return;
    }
    track(pod);
    const claims = new Map<string, PersistentVolumeClaim | undefined>();
    for (const claimName of podClaimNames(pod)) {
      claims.set(claimName, informers.get<PersistentVolumeClaim>('persistentvolumeclaims', claimName, namespace));
    }
    const decision = schedulePod({
      pod,
      claims,
      volumes: informers.list<PersistentVolume>('persistentvolumes'),
      classes: informers.list<StorageClass>('storageclasses'),
      nodes: informers.list<Node>('nodes'),
      ...load.view(key),
      volumeLimits: volumeLimits(),
    });
    switch (decision.action) {
      case 'wait':
        return;
      case 'unschedulable':
        recorder.record({ object: pod, type: 'Warning', reason: 'FailedScheduling', message: decision.message });
        return;
      case 'selectNode':
        for (const claimName of decision.claims) {
          const claim = structuredClone(claims.get(claimName)!);
          setAnnotation(claim, ANN.selectedNode, decision.node);
          store.update('persistentvolumeclaims', claim);
        }
        return;
      case 'bind': {
        const placed = store.update('pods', { ...pod, spec: { ...pod.spec, nodeName: decision.node } });
        waiting.remove(key);
        recorder.record({
          object: placed,
          type: 'Normal',
          reason: 'Scheduled',
          message: `Successfully assigned ${key} to ${decision.node}`,
        });
      }
    }
  }

  const everyWaitingPod = () => waiting.get(ALL);

  const controller = runController(
    informers,
    {
      name: 'default-scheduler',
      watches: {
        pods: ({ type, object }: WatchEvent) => {
          if (type === 'DELETED') {
            waiting.remove(objectKey(object));
            return [];
          }
          track(object as Pod);
          return needsScheduling(object as Pod) ? [objectKey(object)] : [];
        },
        persistentvolumeclaims: ({ object }: WatchEvent) => waiting.get(objectKey(object)),
        persistentvolumes: ({ object }: WatchEvent) => {
          const ref = (object as PersistentVolume).spec.claimRef;
          return ref?.name && ref.namespace ? waiting.get(`${ref.namespace}/${ref.name}`) : [];
        },
        nodes: everyWaitingPod,
        storageclasses: everyWaitingPod,
      },
      keys: () =>
        informers
          .list<Pod>('pods')
          .filter((pod) => {
            track(pod);
            return needsScheduling(pod);
          })
          .map(objectKey),
      sync,
    },
    { ...opts, ownsInformers: !shared },
  );
  return {
    stop: async () => {
      for (const stop of unsubscribe) stop();
      await controller.stop();
    },
  };
}
