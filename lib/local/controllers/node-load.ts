/**
 * Pods and volumes per node for the local scheduler, kept up to date from pod and claim
 * events, as kube-scheduler keeps its cache: a pod counts on the node it is bound to, or —
 * assumed, not yet bound — on the node its claims' `selected-node` names, so that a burst of
 * WaitForFirstConsumer pods does not all land on the same, emptiest-looking node. Counting
 * every pod on every scheduling decision made a burst of n pods cost n² steps.
 */
import type { Informers } from './informers.js';
import { KeyIndex } from './key-index.js';
import { ANN, isTerminated, objectKey, podClaimNames } from './objects.js';
import type { PersistentVolumeClaim, Pod } from './objects.js';

interface Contribution {
  node: string;
  volumes: number;
}

export interface NodeLoadView {
  podsPerNode: Map<string, number>;
  volumesPerNode: Map<string, number>;
}

export class NodeLoad {
  readonly #contributions = new Map<string, Contribution>();
  /** `namespace/claim` → the pods mounting it. */
  readonly #podsByClaim = new KeyIndex();
  readonly #pods = new Map<string, number>();
  readonly #volumes = new Map<string, number>();

  constructor(private readonly informers: Informers) {
    for (const pod of informers.list<Pod>('pods')) this.podChanged(pod);
  }

  /** A pod was added or changed. */
  podChanged(pod: Pod): void {
    const key = objectKey(pod);
    this.#podsByClaim.set(key, podClaimNames(pod).map((c) => `${pod.metadata.namespace}/${c}`));
    this.#count(key, this.#contributionOf(pod));
  }

  podDeleted(key: string): void {
    this.#podsByClaim.remove(key);
    this.#count(key, undefined);
  }

  /** A claim changed (its `selected-node`, say): the pods mounting it are counted again. */
  claimChanged(claimKey: string): void {
    for (const podKey of this.#podsByClaim.get(claimKey)) {
      const slash = podKey.indexOf('/');
      const pod = this.informers.get<Pod>('pods', podKey.slice(slash + 1), podKey.slice(0, slash));
      if (pod) this.#count(podKey, this.#contributionOf(pod));
    }
  }

  /** The counts of every pod but `exceptKey` (the one being scheduled). */
  view(exceptKey: string): NodeLoadView {
    const podsPerNode = new Map(this.#pods);
    const volumesPerNode = new Map(this.#volumes);
    const own = this.#contributions.get(exceptKey);
    if (own) {
      podsPerNode.set(own.node, (podsPerNode.get(own.node) ?? 0) - 1);
      volumesPerNode.set(own.node, (volumesPerNode.get(own.node) ?? 0) - own.volumes);
    }
    return { podsPerNode, volumesPerNode };
  }

  #contributionOf(pod: Pod): Contribution | undefined {
    if (isTerminated(pod)) return undefined;
    const claimNames = podClaimNames(pod);
    const node =
      pod.spec?.nodeName ??
      claimNames
        .map((c) => this.informers.get<PersistentVolumeClaim>('persistentvolumeclaims', c, pod.metadata.namespace))
        .map((claim) => claim?.metadata.annotations?.[ANN.selectedNode])
        .find((selected) => selected !== undefined);
    return node ? { node, volumes: claimNames.length } : undefined;
  }

  #count(key: string, next: Contribution | undefined): void {
    const previous = this.#contributions.get(key);
    if (previous) this.#add(previous, -1);
    if (next) {
      this.#contributions.set(key, next);
      this.#add(next, 1);
    } else {
      this.#contributions.delete(key);
    }
  }

  #add({ node, volumes }: Contribution, sign: 1 | -1): void {
    const pods = (this.#pods.get(node) ?? 0) + sign;
    const vols = (this.#volumes.get(node) ?? 0) + sign * volumes;
    if (pods === 0) {
      this.#pods.delete(node);
      this.#volumes.delete(node);
    } else {
      this.#pods.set(node, pods);
      this.#volumes.set(node, vols);
    }
  }
}
