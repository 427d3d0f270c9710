/**
 * The dependents index: which items carry an object as context, so that a change to it
 * offers them too. An item is one object plus what the backend needs to decide about it
 * (items.ts); when that context changes, the answer may change:
 *
 * - a PV is context of its VolumeAttachments (an attach is refused while the PV is being
 *   deleted), and a PV's item lists the VolumeAttachments naming it (a Released PV becomes
 *   deletable when the last goes). VolumeAttachments name their PV, not the other way round,
 *   so the index keeps PV → VolumeAttachments;
 * - a Node and its CSINode are context of the claims that selected the node and of the
 *   attachments on it;
 * - the zones of all the nodes are context of every Immediate claim (it may go to any zone);
 * - the disk each PV names is context of the volume report: a PV that comes to name a disk
 *   (added, or its handle changed) sends the report at once, so the audit never judges that
 *   disk by a report from before the PV (a Retain disk re-used by a static PV); so does one that
 *   stops naming it (deleted), so the audit does not take a PV gone with its disk for one whose
 *   disk was lost.
 *
 * **Why Nodes and CSINodes are fingerprinted.** A kubelet updates its Node every few seconds
 * (conditions, heartbeat times, images), and each update of a node would offer every claim
 * and attachment on it — a steady stream of round trips for nothing. Only what the items
 * carry counts (`nodeNews`, `csiNodeNews`): the Node's labels (zone, instance type) and
 * providerID, and the driver's CSINode entry (node ID, topology keys, attachment limit).
 * Updates that leave those as they were are not news (see changes.ts for the fingerprint).
 */
import type * as k8s from '@kubernetes/client-node';
import { Annotations } from '../contract/index.js';
import { clusterZones } from './items.js';

/** What of a Node its dependents' items carry: labels and providerID. */
export function nodeNews(node: k8s.V1Node): unknown {
  return [node.metadata?.labels ?? {}, node.spec?.providerID ?? ''];
}

/** What of a CSINode its dependents' items carry: the entry of our driver. */
export function csiNodeNews(csiNode: k8s.V1CSINode, driver: string): unknown {
  return csiNode.spec?.drivers?.find((d) => d.name === driver) ?? null;
}

export class Dependents {
  constructor(
    /** The cached claims and VolumeAttachments (scanned on the rare node change that is news). */
    private readonly objects: { claims(): readonly k8s.V1PersistentVolumeClaim[]; attachments(): readonly k8s.V1VolumeAttachment[] },
  ) {}

  /** PV name → names of the VolumeAttachments whose source it is. */
  readonly #attachmentsByPv = new Map<string, Set<string>>();
  /** PV name → the disk the report lists under it. */
  readonly #diskByPv = new Map<string, string>();
  #zones: readonly string[] = [];

  /** Keeps the PV → VolumeAttachments index: every event, news or not. */
  trackAttachment(va: k8s.V1VolumeAttachment, deleted: boolean): void {
    const name = va.metadata?.name ?? '';
    const pvName = va.spec?.source?.persistentVolumeName;
    if (!pvName) return;
    let names = this.#attachmentsByPv.get(pvName);
    if (deleted) {
      names?.delete(name);
      if (names?.size === 0) this.#attachmentsByPv.delete(pvName);
    } else {
      if (!names) this.#attachmentsByPv.set(pvName, (names = new Set()));
      names.add(name);
    }
  }

  /**
   * Records the disk PV `pvName` names now (undefined: none, or the PV is gone); true when that
   * is not the disk it named before (one added, changed or gone).
   */
  trackVolumeDisk(pvName: string, disk: string | undefined): boolean {
    const before = this.#diskByPv.get(pvName);
    if (disk === undefined) this.#diskByPv.delete(pvName);
    else if (disk !== before) this.#diskByPv.set(pvName, disk);
    return disk !== before;
  }

  /** Names of the VolumeAttachments whose `spec.source.persistentVolumeName` is `pvName`. */
  attachmentsOf(pvName: string): string[] {
    return [...(this.#attachmentsByPv.get(pvName) ?? [])];
  }

  /** The zones of the cluster's nodes, as of the last `refreshZones`. */
  get zones(): readonly string[] {
    return this.#zones;
  }

  /** Recomputes the zones from every node; true when they changed. */
  refreshZones(nodes: readonly k8s.V1Node[]): boolean {
    const zones = clusterZones(nodes);
    const changed = zones.join(',') !== this.#zones.join(',');
    this.#zones = zones;
    return changed;
  }

  /** The claims that selected node `nodeName` and the VolumeAttachments on it. */
  ofNode(nodeName: string): { claims: k8s.V1PersistentVolumeClaim[]; attachments: k8s.V1VolumeAttachment[] } {
    return {
      claims: this.objects.claims().filter((pvc) => pvc.metadata?.annotations?.[Annotations.selectedNode] === nodeName),
      attachments: this.objects.attachments().filter((va) => va.spec?.nodeName === nodeName),
    };
  }
}
